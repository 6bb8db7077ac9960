"""Pillow baseline for bench/tools.ts: the three ReFocus operations as ReFocus draws them.

mask      ImageDraw.rectangle(fill="white") over every non-selected band
draw      ImageDraw.rectangle(outline="red", width=5) around every selected band
highlight a copy of the image in RGBA with (255, 0, 0, 50) rectangles drawn into it, then
          Image.alpha_composite(image, overlay), as ReFocus's *_with_highlight does

Each step starts from the decoded image, applies one operation and encodes PNG into memory
with Pillow's defaults. The highlight result is converted back to RGB before encoding, so
both sides encode the same 3-channel pixels (ReFocus would encode RGBA: slower, not faster).

Boxes are pixel boxes; each band is drawn as ReFocus draws it, Pillow's rectangle from
(x1 + 2, y1 + 2) to (x2 - 2, y2 - 2) with both corners included (test/tools/refocus-parity.test.ts
checks that vistool paints the same pixels).

Usage: python bench/pillow_tools.py --image IMG --meta META.json --select A,B
           [--seconds 1.5] [--dump DIR]
       python bench/pillow_tools.py --decode A.png,B.png [--seconds 1.5]
Prints one JSON object: {"pillow": version, "results": {op: {"steps_per_s", "steps_per_cpu_s", "png_bytes"}}}:
steps_per_s is the best of 5 short trials by wall clock (interference on a shared machine only
slows a trial); steps_per_cpu_s counts steps per second of process CPU time over all trials.
With --dump, writes each operation's result as raw RGB bytes to DIR/<op>.rgb for comparison,
and Pillow's PNG of it to DIR/<op>.pillow.png.

--decode times what the trainer pays to read a PNG (Image.open + convert("RGB"), as
trainer/vistool_trainer/model/conversation_encoding.py does) and prints
{"decode_cpu_ms": {path: CPU ms per decode}}: the encoder's settings must not make that dearer.
"""
import argparse
import io
import json
import os
import time

import PIL
from PIL import Image, ImageDraw

INSET = 2
TRIALS = 5


def inset_corners(box):
    return ((box["x1"] + INSET, box["y1"] + INSET), (box["x2"] - INSET, box["y2"] - INSET))


def mask(image, bands, selected):
    out = image.copy()
    draw = ImageDraw.Draw(out, "RGBA")
    for label, box in bands.items():
        if label not in selected:
            draw.rectangle(inset_corners(box), fill="white")
    return out


def outline(image, bands, selected):
    out = image.copy()
    draw = ImageDraw.Draw(out, "RGBA")
    for label in selected:
        draw.rectangle(inset_corners(bands[label]), outline="red", width=5)
    return out


def highlight(image, bands, selected):
    base = image.convert("RGBA")
    overlay = base.copy()
    draw = ImageDraw.Draw(overlay)
    for label in selected:
        draw.rectangle(inset_corners(bands[label]), fill=(255, 0, 0, 50))
    return Image.alpha_composite(base, overlay).convert("RGB")


OPERATIONS = {"mask": mask, "draw": outline, "highlight": highlight}


def encode(image):
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def decode_cpu_ms(path, seconds):
    def decode():
        with Image.open(path) as opened:
            return opened.convert("RGB")

    for _ in range(2):  # warm-up
        decode()
    count = 0
    start = time.process_time()
    while time.process_time() - start < seconds or count < 3:
        decode()
        count += 1
    return (time.process_time() - start) * 1000 / count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--image")
    parser.add_argument("--meta")
    parser.add_argument("--select", help="comma-separated column labels")
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--dump")
    parser.add_argument("--decode", help="comma-separated PNG paths to time decoding")
    args = parser.parse_args()
    if args.decode:
        paths = args.decode.split(",")
        print(json.dumps({"decode_cpu_ms": {path: decode_cpu_ms(path, args.seconds / len(paths)) for path in paths}}))
        return
    if not (args.image and args.meta and args.select):
        parser.error("--image, --meta and --select are required unless --decode is given")

    image = Image.open(args.image).convert("RGB")
    image.load()
    with open(args.meta, encoding="utf8") as f:
        bands = json.load(f)["columns_bbox"]
    selected = set(args.select.split(","))

    results = {}
    for name, operation in OPERATIONS.items():
        step = lambda: encode(operation(image, bands, selected))  # noqa: E731
        for _ in range(2):  # warm-up
            step()
        # Best of TRIALS short trials by wall clock, plus CPU time over all of them, as bench/tools.ts measures.
        best = 0.0
        total = 0
        cpu_start = time.process_time()
        for _ in range(TRIALS):
            steps, elapsed = 0, 0.0
            start = time.perf_counter()
            while elapsed < args.seconds / TRIALS or steps < 3:
                step()
                steps += 1
                elapsed = time.perf_counter() - start
            total += steps
            best = max(best, steps / elapsed)
        cpu_seconds = time.process_time() - cpu_start
        results[name] = {"steps_per_s": best, "steps_per_cpu_s": total / cpu_seconds, "png_bytes": len(step())}
        if args.dump:
            with open(os.path.join(args.dump, f"{name}.rgb"), "wb") as f:
                f.write(operation(image, bands, selected).tobytes())
            with open(os.path.join(args.dump, f"{name}.pillow.png"), "wb") as f:
                f.write(step())
    print(json.dumps({"pillow": PIL.__version__, "results": results}))


if __name__ == "__main__":
    main()
