/**
 * Rectangles on whole pixels, filled without a rasteriser. librsvg (cairo) fills an opaque
 * rectangle whose edges are integers by setting exactly the pixels inside it to its colour —
 * no anti-aliasing anywhere — so a scene made only of such rectangles (every table, every bar
 * chart: the layouts snap their geometry to whole pixels) gets the same pixels from a loop, and
 * the rectangle's ink is exactly its pixels. test/tasks/fill-rects.test.ts holds the two to
 * byte equality. Anything else (lines, circles, fractional edges) goes through librsvg.
 */
import type { BBox } from '../tools/metadata.js';
import type { RgbImage } from '../core/image.js';
import { isHexColour, parseHexColour } from './hex-colour.js';
import type { Rect } from './scene.js';

/** Whether librsvg would fill exactly the rectangle's pixels, in exactly its colour. */
export function isPixelRect(r: Rect): boolean {
  return Number.isInteger(r.x) && Number.isInteger(r.y) && Number.isInteger(r.width) && Number.isInteger(r.height) && r.width >= 0 && r.height >= 0 && isHexColour(r.fill);
}

/** The pixels a whole-pixel rectangle covers on a width × height canvas (possibly empty). */
export function rectPixels(r: Rect, width: number, height: number): BBox {
  return { x1: Math.max(0, r.x), y1: Math.max(0, r.y), x2: Math.min(width, r.x + r.width), y2: Math.min(height, r.y + r.height) };
}

/** A canvas painted by `rects` in order; pixels no rectangle covers are black. */
export function fillRects(width: number, height: number, rects: readonly Rect[]): RgbImage {
  const first = rects[0];
  const covered = first !== undefined && first.x <= 0 && first.y <= 0 && first.x + first.width >= width && first.y + first.height >= height;
  // The background usually covers the canvas: then nothing needs zeroing first.
  const data = covered ? Buffer.allocUnsafe(width * height * 3) : Buffer.alloc(width * height * 3);
  for (const r of rects) {
    const box = rectPixels(r, width, height);
    if (box.x2 <= box.x1 || box.y2 <= box.y1) continue;
    const [red, green, blue] = parseHexColour(r.fill);
    const start = (box.y1 * width + box.x1) * 3;
    const rowBytes = (box.x2 - box.x1) * 3;
    if (red === green && green === blue && box.x1 === 0 && box.x2 === width) {
      data.fill(red, start, start + rowBytes * (box.y2 - box.y1));
      continue;
    }
    // One row is written pixel by pixel, the others copied from it.
    for (let o = start; o < start + rowBytes; o += 3) {
      data[o] = red;
      data[o + 1] = green;
      data[o + 2] = blue;
    }
    for (let y = box.y1 + 1; y < box.y2; y++) data.copyWithin((y * width + box.x1) * 3, start, start + rowBytes);
  }
  return { width, height, data };
}
