"""The twelve band tools with ReFocus's exact geometry, in Pillow: the reference the parity test
(test/tools/refocus-parity.test.ts) compares vistool's pixels with.

Written from ReFocus's published behaviour (src/tools.py): boxes are normalised to [0, 1]; a band
becomes x1 = int(x1n*W + 2), y1 = int(y1n*H + 2), x2 = int(x2n*W - 2), y2 = int(y2n*H - 2)
(int() truncates), painted with ImageDraw.rectangle(((x1, y1), (x2, y2)), ...), which includes
both corners. mask fills every band not selected with white, and leaves the image as it was when
nothing or everything is selected; draw outlines each selected band in red, width 5; highlight
composites a separate RGBA layer of (255, 0, 0, 50) rectangles over the image. Rows come without
the header row (vistool's rows_bbox never holds it; ReFocus skips its first row key instead).

Reads a JSON list of jobs on stdin: {"image", "bands": {label: {x1, y1, x2, y2}} (normalised),
"mode": "mask" | "draw" | "highlight", "selected": [labels], "out"}; writes each result's raw
RGB bytes to "out".
"""
import json
import sys

from PIL import Image, ImageDraw


def corners(box, width, height):
    return ((int(box["x1"] * width + 2), int(box["y1"] * height + 2)), (int(box["x2"] * width - 2), int(box["y2"] * height - 2)))


def apply(image, bands, mode, selected):
    width, height = image.size
    if mode == "mask":
        others = [label for label in bands if label not in selected]
        if not selected or not others:
            return image.copy()
        out = image.copy()
        draw = ImageDraw.Draw(out)
        for label in others:
            draw.rectangle(corners(bands[label], width, height), fill="white")
        return out
    if mode == "draw":
        out = image.copy()
        draw = ImageDraw.Draw(out)
        for label in selected:
            draw.rectangle(corners(bands[label], width, height), outline="red", width=5)
        return out
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for label in selected:
        draw.rectangle(corners(bands[label], width, height), fill=(255, 0, 0, 50))
    return Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB")


def main():
    for job in json.load(sys.stdin):
        image = Image.open(job["image"]).convert("RGB")
        result = apply(image, job["bands"], job["mode"], job["selected"])
        with open(job["out"], "wb") as out:
            out.write(result.tobytes())


if __name__ == "__main__":
    main()
