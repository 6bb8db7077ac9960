/**
 * Where the ink is inside a box of the image: the box's background is its most common colour,
 * ink is whatever differs from it clearly (dark text on white, white text on a dark header),
 * and table rules (rows or columns of ink crossing the whole box) are not ink of the text.
 * Used to put exact edges on text that the detector only found roughly. Pixels only; no models.
 */
import type { RgbImage } from '../core/image.js';
import type { BBox } from '../tools/metadata.js';

export interface InkProfile {
  box: BBox;
  /** Ink pixels per column of the box (index 0 = box.x1). */
  columns: Int32Array;
  /** Ink pixels per row of the box (index 0 = box.y1). */
  rows: Int32Array;
  /** Ink mask, row-major over the box. */
  mask: Uint8Array;
  /** First and one-past-last row holding ink, in image pixels; equal when there is none. */
  top: number;
  bottom: number;
}

/** Ink differs from the background by at least this much in some channel (0–255)... */
const MIN_CONTRAST = 48;
/** ...and by at least this fraction of the strongest contrast in the box (keeps anti-aliased fringes out). */
const CONTRAST_FRACTION = 0.4;
/** A row inked across this fraction of the box is a rule, not text. */
const RULE_ROW_FRACTION = 0.85;
/** A column inked across this fraction of the box's height is a rule, not text. */
const RULE_COLUMN_FRACTION = 0.95;

export function inkProfile(image: RgbImage, box: BBox): InkProfile {
  const x1 = Math.max(0, Math.floor(box.x1));
  const y1 = Math.max(0, Math.floor(box.y1));
  const x2 = Math.min(image.width, Math.ceil(box.x2));
  const y2 = Math.min(image.height, Math.ceil(box.y2));
  const w = Math.max(0, x2 - x1);
  const h = Math.max(0, y2 - y1);
  const clamped = { x1, y1, x2: x1 + w, y2: y1 + h };
  const mask = new Uint8Array(w * h);
  const columns = new Int32Array(w);
  const rows = new Int32Array(h);
  if (w === 0 || h === 0) return { box: clamped, columns, rows, mask, top: y1, bottom: y1 };

  const [br, bg, bb] = backgroundColour(image, clamped);
  const distance = new Uint8Array(w * h);
  let strongest = 0;
  for (let y = 0; y < h; y++) {
    let i = ((y + y1) * image.width + x1) * 3;
    for (let x = 0; x < w; x++, i += 3) {
      const d = Math.max(Math.abs((image.data[i] as number) - br), Math.abs((image.data[i + 1] as number) - bg), Math.abs((image.data[i + 2] as number) - bb));
      distance[y * w + x] = d;
      if (d > strongest) strongest = d;
    }
  }
  const threshold = Math.max(MIN_CONTRAST, strongest * CONTRAST_FRACTION);
  for (let k = 0; k < mask.length; k++) mask[k] = (distance[k] as number) >= threshold ? 1 : 0;

  // Rules first (they would join every word into one), then the profiles.
  for (let y = 0; y < h; y++) {
    let count = 0;
    for (let x = 0; x < w; x++) count += mask[y * w + x] as number;
    if (count >= RULE_ROW_FRACTION * w && w >= 8) mask.fill(0, y * w, (y + 1) * w);
  }
  for (let x = 0; x < w; x++) {
    let count = 0;
    for (let y = 0; y < h; y++) count += mask[y * w + x] as number;
    if (count >= RULE_COLUMN_FRACTION * h && h >= 8) for (let y = 0; y < h; y++) mask[y * w + x] = 0;
  }
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (mask[y * w + x]) {
        (columns[x] as number)++;
        (rows[y] as number)++;
      }
    }
  }
  let top = -1;
  let bottom = -1;
  for (let y = 0; y < h; y++) {
    if ((rows[y] as number) > 0) {
      if (top < 0) top = y;
      bottom = y + 1;
    }
  }
  return { box: clamped, columns, rows, mask, top: top < 0 ? y1 : y1 + top, bottom: top < 0 ? y1 : y1 + bottom };
}

/** The most common colour in the box, on a 32-level-per-channel grid, as the grid cell's centre. */
function backgroundColour(image: RgbImage, box: BBox): [number, number, number] {
  const counts = new Map<number, number>();
  for (let y = box.y1; y < box.y2; y++) {
    let i = (y * image.width + box.x1) * 3;
    for (let x = box.x1; x < box.x2; x++, i += 3) {
      const key = (((image.data[i] as number) >> 3) << 10) | (((image.data[i + 1] as number) >> 3) << 5) | ((image.data[i + 2] as number) >> 3);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  let bestKey = 0x7fff;
  let bestCount = -1;
  for (const [key, count] of counts) {
    if (count > bestCount) {
      bestCount = count;
      bestKey = key;
    }
  }
  return [((bestKey >> 10) & 31) * 8 + 4, ((bestKey >> 5) & 31) * 8 + 4, (bestKey & 31) * 8 + 4];
}

/** Runs of inked columns as half-open image x ranges, left to right. */
export function inkRuns(profile: InkProfile, from = 0, to = profile.columns.length): { x1: number; x2: number }[] {
  const runs: { x1: number; x2: number }[] = [];
  let start = -1;
  for (let x = from; x <= to; x++) {
    const inked = x < to && (profile.columns[x] as number) > 0;
    if (inked && start < 0) start = x;
    if (!inked && start >= 0) {
      runs.push({ x1: profile.box.x1 + start, x2: profile.box.x1 + x });
      start = -1;
    }
  }
  return runs;
}

/** First and one-past-last inked row among the columns [x1, x2) (image x), in image y. */
export function inkRowsWithin(profile: InkProfile, x1: number, x2: number): { y1: number; y2: number } | null {
  const w = profile.columns.length;
  const h = profile.rows.length;
  const from = Math.max(0, x1 - profile.box.x1);
  const to = Math.min(w, x2 - profile.box.x1);
  let top = -1;
  let bottom = -1;
  for (let y = 0; y < h; y++) {
    for (let x = from; x < to; x++) {
      if (profile.mask[y * w + x]) {
        if (top < 0) top = y;
        bottom = y + 1;
        break;
      }
    }
  }
  return top < 0 ? null : { y1: profile.box.y1 + top, y2: profile.box.y1 + bottom };
}
