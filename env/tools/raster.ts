/**
 * Pixel primitives the tools are built from, on raw RGB buffers (env/core/image.ts). Each one
 * paints into a buffer the caller owns — tools copy the input image first and pass the copy —
 * so nothing here may ever be handed the caller's original image.
 *
 * Rectangles are half-open: a rect covers left ≤ x < right, top ≤ y < bottom.
 */
import type { RgbImage } from '../core/image.js';
import { takePixels } from '../core/pixel-pool.js';
import type { BBox } from './metadata.js';

export interface PixelRect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export type Rgb = readonly [number, number, number];

export const WHITE: Rgb = [255, 255, 255];
export const RED: Rgb = [255, 0, 0];

/** ReFocus shrinks every band by 2 px on each side before painting, so neighbours stay apart. */
export const BAND_INSET = 2;

/**
 * The pixels a band box paints: inset by BAND_INSET on every side, then clamped to the image.
 * Null when nothing is left (a band thinner than 5 px, or one lying off the image).
 */
/**
 * The pixels a band tool paints, as ReFocus and VTool-R1 paint them: Pillow's rectangle from
 * (x1 + 2, y1 + 2) to (x2 − 2, y2 − 2) with both corners included, i.e. the half-open
 * [x1 + 2, x2 − 1) × [y1 + 2, y2 − 1).
 */
export function bandRect(box: BBox, width: number, height: number): PixelRect | null {
  return clampRect({ left: box.x1 + BAND_INSET, top: box.y1 + BAND_INSET, right: box.x2 - BAND_INSET + 1, bottom: box.y2 - BAND_INSET + 1 }, width, height);
}

export function clampRect(rect: PixelRect, width: number, height: number): PixelRect | null {
  const left = Math.max(0, Math.min(width, Math.round(rect.left)));
  const right = Math.max(0, Math.min(width, Math.round(rect.right)));
  const top = Math.max(0, Math.min(height, Math.round(rect.top)));
  const bottom = Math.max(0, Math.min(height, Math.round(rect.bottom)));
  return left < right && top < bottom ? { left, top, right, bottom } : null;
}

/**
 * A writable copy of an image: the only thing the primitives below are ever given. Its buffer
 * comes from the pixel pool (env/core/pixel-pool.ts), so an episode can hand it back for reuse.
 */
export function copyForPainting(image: RgbImage): RgbImage {
  const data = takePixels(image.data.length);
  image.data.copy(data);
  return { width: image.width, height: image.height, data };
}

/** Fills a rect with one colour: one row of the colour is built once, then copied into each row. */
export function fillRect(target: RgbImage, rect: PixelRect, colour: Rgb): void {
  const rowBytes = target.width * 3;
  const span = (rect.right - rect.left) * 3;
  if (span <= 0 || rect.bottom <= rect.top) return;
  const line = Buffer.allocUnsafe(span).fill(Buffer.from(colour));
  for (let y = rect.top; y < rect.bottom; y++) line.copy(target.data, y * rowBytes + rect.left * 3);
}

/**
 * Paints a border `thickness` px wide just inside the rect, as PIL's rectangle(outline, width)
 * does; a rect no more than 2×thickness across is filled entirely.
 */
export function outlineRect(target: RgbImage, rect: PixelRect, thickness: number, colour: Rgb): void {
  const innerTop = Math.min(rect.bottom, rect.top + thickness);
  const innerBottom = Math.max(innerTop, rect.bottom - thickness);
  fillRect(target, { ...rect, bottom: innerTop }, colour);
  fillRect(target, { ...rect, top: innerBottom }, colour);
  if (innerTop >= innerBottom) return;
  const leftEdge = Math.min(rect.right, rect.left + thickness);
  const rightEdge = Math.max(leftEdge, rect.right - thickness);
  fillRect(target, { left: rect.left, right: leftEdge, top: innerTop, bottom: innerBottom }, colour);
  fillRect(target, { left: rightEdge, right: rect.right, top: innerTop, bottom: innerBottom }, colour);
}

/**
 * The highlight tint: (255, 0, 0) at alpha 50/255 composited over an opaque pixel,
 *   out = floor((205·c + 50·t + 127) / 255),  t = 255 for red, 0 for green and blue,
 * i.e. the exact blend rounded to the nearest integer (a tie cannot occur: 255 is odd).
 * This is byte-for-byte what Pillow's Image.alpha_composite gives (checked for all 256 values).
 */
export const HIGHLIGHT_ALPHA = 50;
export function tintChannel(value: number, tint: number): number {
  return Math.floor(((255 - HIGHLIGHT_ALPHA) * value + HIGHLIGHT_ALPHA * tint + 127) / 255);
}

const TINT_RED = Uint8Array.from({ length: 256 }, (_, c) => tintChannel(c, 255));
const TINT_DARK = Uint8Array.from({ length: 256 }, (_, c) => tintChannel(c, 0));

/**
 * Tints the union of the rects once: overlapping rects are not tinted twice, as ReFocus paints
 * every band onto one overlay before compositing it. Disjoint rects (the usual case: bands of one
 * family do not overlap) are tinted directly; only overlapping ones pay for a coverage map.
 */
export function tintRects(target: RgbImage, rects: readonly PixelRect[]): void {
  const covered = anyOverlap(rects) ? new Uint8Array(target.width * target.height) : null;
  for (const rect of rects) tintRect(target, rect, covered);
}

function tintRect(target: RgbImage, rect: PixelRect, covered: Uint8Array | null): void {
  const { width, data } = target;
  for (let y = rect.top; y < rect.bottom; y++) {
    const rowPixel = y * width;
    if (covered) {
      for (let x = rect.left; x < rect.right; x++) {
        if (covered[rowPixel + x] === 1) continue;
        covered[rowPixel + x] = 1;
        tintPixel(data, (rowPixel + x) * 3);
      }
      continue;
    }
    // The common case (no overlap) walks the row's bytes without a per-pixel branch: ~2× faster.
    const end = (rowPixel + rect.right) * 3;
    for (let i = (rowPixel + rect.left) * 3; i < end; i += 3) tintPixel(data, i);
  }
}

function tintPixel(data: Buffer, i: number): void {
  data[i] = TINT_RED[data[i] as number] as number;
  data[i + 1] = TINT_DARK[data[i + 1] as number] as number;
  data[i + 2] = TINT_DARK[data[i + 2] as number] as number;
}

function anyOverlap(rects: readonly PixelRect[]): boolean {
  for (let a = 0; a < rects.length; a++) {
    for (let b = a + 1; b < rects.length; b++) {
      const p = rects[a] as PixelRect;
      const q = rects[b] as PixelRect;
      if (p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom) return true;
    }
  }
  return false;
}

/** Sets one pixel when it lies on the image (markers and dashes are clipped, not rejected, at the border). */
export function setPixel(target: RgbImage, x: number, y: number, colour: Rgb): void {
  if (x < 0 || y < 0 || x >= target.width || y >= target.height) return;
  const i = (y * target.width + x) * 3;
  target.data[i] = colour[0];
  target.data[i + 1] = colour[1];
  target.data[i + 2] = colour[2];
}
