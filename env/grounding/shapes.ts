/**
 * Flat shapes in an image: filled rectangles (bars, table stripes) and line art (axes with their
 * tick marks, rules, grid lines), found as connected areas of one exact colour. Charts are drawn
 * with flat fills, so a bar is one colour edge to edge and an axis with its ticks is one thin
 * connected stroke; text is thin, anti-aliased, many-coloured and small, and never forms either.
 * Also returns the image with the line art painted over in the background colour: tick marks
 * touching a label would otherwise be read as a trailing "-".
 * Pixels only; no models, no text.
 */
import type { RgbImage } from '../core/image.js';
import type { BBox } from '../tools/metadata.js';

export interface FlatShape {
  box: BBox;
  /** 0xRRGGBB */
  colour: number;
  /** Pixels of the shape divided by the area of its box: 1 for a solid rectangle. */
  fill: number;
}

export interface Shapes {
  /** Solid rectangles at least MIN_SIDE px on both sides. */
  rectangles: FlatShape[];
  /** Straight strokes at least MIN_LINE_LENGTH px long: a box one stroke thick, spanning the stroke. */
  horizontalLines: FlatShape[];
  verticalLines: FlatShape[];
  /** The image's most common colour. */
  background: number;
  /** The image with every line-art stroke painted in the background colour. */
  withoutLineArt: RgbImage;
}

const MIN_SIDE = 3;
const MIN_RECT_AREA = 60;
const MIN_FILL = 0.9;
const MAX_LINE_THICKNESS = 3;
const MIN_LINE_LENGTH = 24;
/** Line art has at least this share of its pixels on thin straight strokes (the rest: tick marks). */
const MIN_STROKE_COVERAGE = 0.8;
/** A row (column) of line art with at least this share of its width (height) inked is a straight stroke. */
const STROKE_SHARE = 0.5;
/** How far (px) to look beside a line-art pixel for the colour to paint it with. */
const PAINT_REACH = 4;

export function findShapes(image: RgbImage): Shapes {
  const { width, height, data } = image;
  const n = width * height;
  const colours = new Int32Array(n);
  for (let i = 0, j = 0; i < n; i++, j += 3) colours[i] = ((data[j] as number) << 16) | ((data[j + 1] as number) << 8) | (data[j + 2] as number);
  const background = mostCommon(colours);
  const cleaned = Buffer.from(data);
  const seen = new Uint8Array(n);
  const stack = new Int32Array(n);
  const pixels = new Int32Array(n);
  const lineArt = new Uint8Array(n);
  const out: Shapes = { rectangles: [], horizontalLines: [], verticalLines: [], background, withoutLineArt: { width, height, data: cleaned } };
  for (let start = 0; start < n; start++) {
    if (seen[start] || colours[start] === background) continue;
    const colour = colours[start] as number;
    let top = 0;
    stack[top++] = start;
    seen[start] = 1;
    let count = 0;
    let x1 = width;
    let y1 = height;
    let x2 = -1;
    let y2 = -1;
    while (top > 0) {
      const i = stack[--top] as number;
      pixels[count++] = i;
      const x = i % width;
      const y = (i - x) / width;
      if (x < x1) x1 = x;
      if (x > x2) x2 = x;
      if (y < y1) y1 = y;
      if (y > y2) y2 = y;
      if (x > 0 && !seen[i - 1] && colours[i - 1] === colour) { seen[i - 1] = 1; stack[top++] = i - 1; }
      if (x < width - 1 && !seen[i + 1] && colours[i + 1] === colour) { seen[i + 1] = 1; stack[top++] = i + 1; }
      if (y > 0 && !seen[i - width] && colours[i - width] === colour) { seen[i - width] = 1; stack[top++] = i - width; }
      if (y < height - 1 && !seen[i + width] && colours[i + width] === colour) { seen[i + width] = 1; stack[top++] = i + width; }
    }
    const w = x2 - x1 + 1;
    const h = y2 - y1 + 1;
    const fill = count / (w * h);
    const box = { x1, y1, x2: x2 + 1, y2: y2 + 1 };
    if (fill >= MIN_FILL && Math.min(w, h) > MAX_LINE_THICKNESS) {
      if (w >= MIN_SIDE && h >= MIN_SIDE && count >= MIN_RECT_AREA) out.rectangles.push({ box, colour, fill });
      continue;
    }
    if (Math.max(w, h) < MIN_LINE_LENGTH) continue;
    // Line art: nearly all of it lies on thin straight strokes (axes and their ticks, a table's grid).
    const strokes = straightStrokes(pixels, count, width, box);
    if (strokes.coverage < MIN_STROKE_COVERAGE) continue;
    for (const s of strokes.horizontal) out.horizontalLines.push({ box: s, colour, fill: 1 });
    for (const s of strokes.vertical) out.verticalLines.push({ box: s, colour, fill: 1 });
    for (let k = 0; k < count; k++) lineArt[pixels[k] as number] = 1;
  }
  paintOver(cleaned, lineArt, width, height, background);
  return out;
}

/**
 * Paints every line-art pixel with the nearest colour beside it that is not line art, so a rule
 * across a coloured header disappears into the header, not into a white stripe.
 */
function paintOver(data: Buffer, lineArt: Uint8Array, width: number, height: number, background: number): void {
  const source = Buffer.from(data);
  for (let i = 0; i < lineArt.length; i++) {
    if (!lineArt[i]) continue;
    const x = i % width;
    const y = (i - x) / width;
    let from = -1;
    for (let d = 1; d <= PAINT_REACH && from < 0; d++) {
      for (const [nx, ny] of [[x - d, y], [x + d, y], [x, y - d], [x, y + d]] as const) {
        if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
        const j = ny * width + nx;
        if (!lineArt[j]) {
          from = j;
          break;
        }
      }
    }
    const o = i * 3;
    if (from >= 0) {
      data[o] = source[from * 3] as number;
      data[o + 1] = source[from * 3 + 1] as number;
      data[o + 2] = source[from * 3 + 2] as number;
    } else {
      data[o] = (background >> 16) & 255;
      data[o + 1] = (background >> 8) & 255;
      data[o + 2] = background & 255;
    }
  }
}

/**
 * The thin straight strokes of a component: runs of at most MAX_LINE_THICKNESS rows (columns)
 * each inked across at least STROKE_SHARE of its width (height), as boxes over their inked span,
 * and the share of the component's pixels lying on them.
 */
function straightStrokes(pixels: Int32Array, count: number, width: number, box: BBox): { horizontal: BBox[]; vertical: BBox[]; coverage: number } {
  const w = box.x2 - box.x1;
  const h = box.y2 - box.y1;
  const rowCount = new Int32Array(h);
  const colCount = new Int32Array(w);
  const rowMin = new Int32Array(h).fill(w);
  const rowMax = new Int32Array(h).fill(-1);
  const colMin = new Int32Array(w).fill(h);
  const colMax = new Int32Array(w).fill(-1);
  for (let k = 0; k < count; k++) {
    const i = pixels[k] as number;
    const x = (i % width) - box.x1;
    const y = Math.floor(i / width) - box.y1;
    (rowCount[y] as number)++;
    (colCount[x] as number)++;
    if (x < (rowMin[y] as number)) rowMin[y] = x;
    if (x > (rowMax[y] as number)) rowMax[y] = x;
    if (y < (colMin[x] as number)) colMin[x] = y;
    if (y > (colMax[x] as number)) colMax[x] = y;
  }
  const thinRows = thinRuns(rowCount, w >= MIN_LINE_LENGTH ? STROKE_SHARE * w : Infinity);
  const thinCols = thinRuns(colCount, h >= MIN_LINE_LENGTH ? STROKE_SHARE * h : Infinity);
  let covered = 0;
  for (let k = 0; k < count; k++) {
    const i = pixels[k] as number;
    if (thinRows[Math.floor(i / width) - box.y1] || thinCols[(i % width) - box.x1]) covered++;
  }
  const horizontal: BBox[] = [];
  const vertical: BBox[] = [];
  for (let y = 0; y < h; y++) if (thinRows[y]) horizontal.push({ x1: box.x1 + (rowMin[y] as number), y1: box.y1 + y, x2: box.x1 + (rowMax[y] as number) + 1, y2: box.y1 + y + 1 });
  for (let x = 0; x < w; x++) if (thinCols[x]) vertical.push({ x1: box.x1 + x, y1: box.y1 + (colMin[x] as number), x2: box.x1 + x + 1, y2: box.y1 + (colMax[x] as number) + 1 });
  return { horizontal: mergeAdjacent(horizontal, 'y'), vertical: mergeAdjacent(vertical, 'x'), coverage: covered / count };
}

/** 1 for each index in a run of at most MAX_LINE_THICKNESS consecutive entries ≥ `min`. */
function thinRuns(counts: Int32Array, min: number): Uint8Array {
  const out = new Uint8Array(counts.length);
  let start = -1;
  for (let i = 0; i <= counts.length; i++) {
    const on = i < counts.length && (counts[i] as number) >= min;
    if (on && start < 0) start = i;
    if (!on && start >= 0) {
      if (i - start <= MAX_LINE_THICKNESS) out.fill(1, start, i);
      start = -1;
    }
  }
  return out;
}

/** Neighbouring one-pixel strokes (a 2 px rule) become one box. */
function mergeAdjacent(strokes: BBox[], axis: 'x' | 'y'): BBox[] {
  const merged: BBox[] = [];
  for (const s of strokes) {
    const last = merged[merged.length - 1];
    const touching = last && (axis === 'y' ? last.y2 === s.y1 : last.x2 === s.x1);
    if (last && touching) {
      last.x1 = Math.min(last.x1, s.x1);
      last.y1 = Math.min(last.y1, s.y1);
      last.x2 = Math.max(last.x2, s.x2);
      last.y2 = Math.max(last.y2, s.y2);
    } else {
      merged.push({ ...s });
    }
  }
  return merged;
}

function mostCommon(values: Int32Array): number {
  const counts = new Map<number, number>();
  // A sparse sample is plenty for the background, which covers most of a chart.
  const step = Math.max(1, Math.floor(values.length / 20000));
  for (let i = 0; i < values.length; i += step) {
    const v = values[i] as number;
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  let best = 0xffffff;
  let bestCount = -1;
  for (const [v, c] of counts) {
    if (c > bestCount) {
      best = v;
      bestCount = c;
    }
  }
  return best;
}
