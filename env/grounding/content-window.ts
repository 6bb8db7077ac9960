/**
 * Where the detector needs to look: the part of the image that is not blank border. A table
 * drawn in the middle of an 800×600 canvas covers a tenth of it, and the text detector's cost
 * grows with the pixels it is given, so it is given the inked part and a margin of blank
 * around it, never the empty paper. Pixels only; no models.
 */
import type { RgbImage } from '../core/image.js';
import type { BBox } from '../tools/metadata.js';

/**
 * The box of every pixel that differs from the border colour (the colour all four corners
 * share), half-open. The whole image when the corners disagree (no uniform border to trim);
 * null when every pixel is the border colour (a blank image holds no text).
 */
export function inkedBox(image: RgbImage): BBox | null {
  const { width, height, data } = image;
  const whole = { x1: 0, y1: 0, x2: width, y2: height };
  if (width === 0 || height === 0) return null;
  const corner = (x: number, y: number) => {
    const i = (y * width + x) * 3;
    return ((data[i] as number) << 16) | ((data[i + 1] as number) << 8) | (data[i + 2] as number);
  };
  const border = corner(0, 0);
  if (corner(width - 1, 0) !== border || corner(0, height - 1) !== border || corner(width - 1, height - 1) !== border) return whole;
  const r = (border >> 16) & 255;
  const g = (border >> 8) & 255;
  const b = border & 255;
  const rowBytes = width * 3;
  // A blank row is found with one memcmp against a row of the border colour; only inked rows are walked.
  const blankRow = Buffer.alloc(rowBytes);
  for (let i = 0; i < rowBytes; i += 3) {
    blankRow[i] = r;
    blankRow[i + 1] = g;
    blankRow[i + 2] = b;
  }
  let x1 = width;
  let x2 = 0;
  let y1 = height;
  let y2 = 0;
  for (let y = 0; y < height; y++) {
    const row = y * rowBytes;
    if (data.compare(blankRow, 0, rowBytes, row, row + rowBytes) === 0) continue;
    let first = 0;
    for (let i = row; data[i] === r && data[i + 1] === g && data[i + 2] === b; i += 3) first++;
    let last = width - 1;
    for (let i = row + last * 3; data[i] === r && data[i + 1] === g && data[i + 2] === b; i -= 3) last--;
    if (y < y1) y1 = y;
    y2 = y + 1;
    if (first < x1) x1 = first;
    if (last + 1 > x2) x2 = last + 1;
  }
  return y2 === 0 ? null : { x1, y1, x2, y2 };
}

/** A window of a (scaled) image: the pixels [x, x + width) × [y, y + height), padded up to padWidth × padHeight. */
export interface DetectionWindow {
  x: number;
  y: number;
  width: number;
  height: number;
  padWidth: number;
  padHeight: number;
}

/**
 * The window the detector runs on, in the pixels of an image scaled to `width` × `height`:
 * the inked box (given in the unscaled image's pixels) scaled, grown by `margin` blank pixels
 * on every side, then widened with the image's own pixels to a multiple of `stride`. When that
 * reaches the image's size along an axis, the axis is taken whole and padded at its end, as
 * a detector without a window would see it.
 */
export function detectionWindow(inked: BBox, scale: number, width: number, height: number, margin: number, stride: number): DetectionWindow {
  const [x, w, padWidth] = windowAxis(Math.floor(inked.x1 * scale) - margin, Math.ceil(inked.x2 * scale) + margin, width, stride);
  const [y, h, padHeight] = windowAxis(Math.floor(inked.y1 * scale) - margin, Math.ceil(inked.y2 * scale) + margin, height, stride);
  return { x, y, width: w, height: h, padWidth, padHeight };
}

function windowAxis(from: number, to: number, size: number, stride: number): [start: number, length: number, padded: number] {
  // The start on the stride grid: the detector downsamples by `stride`, so a window shifted by a
  // multiple of it sees its text on the same sampling grid as the whole image does.
  const start = Math.floor(Math.max(0, from) / stride) * stride;
  const end = Math.min(size, to);
  const padded = Math.max(stride, Math.ceil((end - start) / stride) * stride);
  if (start + padded >= size) {
    // Reaches the image's end: taken to the end, padded there as the whole image is.
    if (start === 0) return [0, size, Math.max(stride, Math.ceil(size / stride) * stride)];
    return [start, size - start, Math.ceil((size - start) / stride) * stride];
  }
  return [start, padded, padded];
}
