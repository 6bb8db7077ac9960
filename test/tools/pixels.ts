/**
 * Pixel assertions shared by the tool tests: compare a tool's output with the input, pixel by
 * pixel, against an expectation written from the specification (not from the implementation).
 */
import assert from 'node:assert/strict';
import type { RgbImage } from '../../env/core/image.js';
import type { BBox } from '../../env/tools/metadata.js';

export type Rgb = [number, number, number];

export interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The specification's band geometry: 2 px in from every edge of the box, clamped to the image. */
export function insetBox(box: BBox, width: number, height: number): Rect | null {
  // Pillow's rectangle((x1 + 2, y1 + 2), (x2 − 2, y2 − 2)) paints both corners: x2 − 2 is the last column.
  const rect = { left: Math.max(0, box.x1 + 2), top: Math.max(0, box.y1 + 2), right: Math.min(width, box.x2 - 1), bottom: Math.min(height, box.y2 - 1) };
  return rect.left < rect.right && rect.top < rect.bottom ? rect : null;
}

export function inRect(rect: Rect | null, x: number, y: number): boolean {
  return rect !== null && x >= rect.left && x < rect.right && y >= rect.top && y < rect.bottom;
}

/** Whether (x, y) is in the 5 px border just inside the rect. */
export function onOutline(rect: Rect | null, x: number, y: number, width = 5): boolean {
  return inRect(rect, x, y) && (x < rect!.left + width || x >= rect!.right - width || y < rect!.top + width || y >= rect!.bottom - width);
}

export function pixelOf(image: RgbImage, x: number, y: number): Rgb {
  const i = (y * image.width + x) * 3;
  return [image.data[i] as number, image.data[i + 1] as number, image.data[i + 2] as number];
}

/**
 * Asserts every output pixel equals `expected(x, y, before)`, where returning null means
 * "byte-equal to the input". Reports the first few mismatches with coordinates.
 */
export function assertPixels(input: RgbImage, output: RgbImage, expected: (x: number, y: number, before: Rgb) => Rgb | null): void {
  assert.equal(output.width, input.width, 'width changed');
  assert.equal(output.height, input.height, 'height changed');
  const mismatches: string[] = [];
  let count = 0;
  for (let y = 0; y < input.height; y++) {
    for (let x = 0; x < input.width; x++) {
      const before = pixelOf(input, x, y);
      const want = expected(x, y, before) ?? before;
      const got = pixelOf(output, x, y);
      if (got[0] !== want[0] || got[1] !== want[1] || got[2] !== want[2]) {
        count++;
        if (mismatches.length < 5) mismatches.push(`(${x},${y}) got ${got.join(',')} want ${want.join(',')} (was ${before.join(',')})`);
      }
    }
  }
  assert.equal(count, 0, `${count} pixels differ from the specification: ${mismatches.join('; ')}`);
}

export const WHITE: Rgb = [255, 255, 255];
export const RED: Rgb = [255, 0, 0];

/** The documented highlight formula: floor((205·c + 50·t + 127) / 255), t = 255 for red, 0 otherwise. */
export function tinted([r, g, b]: Rgb): Rgb {
  const blend = (c: number, t: number): number => Math.floor((205 * c + 50 * t + 127) / 255);
  return [blend(r, 255), blend(g, 0), blend(b, 0)];
}
