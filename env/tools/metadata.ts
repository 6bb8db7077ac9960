/**
 * Image metadata: where each column, row and tick-label band lies, in pixels. Boxes always come
 * from here (the generator, a dataset loader or OCR grounding), never from the model.
 *
 * On disk a metadata object may be normalised to [0,1] (`"unit": "normalized"`, as ReFocus
 * stores them); `resolveMetadata` converts to pixels once, at the edge, and validates every box.
 * Nothing downstream of `resolveMetadata` should ever see a normalised or malformed box.
 *
 * Box convention: a box covers the pixels x1 ≤ x < x2, y1 ≤ y < y2 (x2 and y2 are the edges
 * just past the last pixel, as in PIL's crop and COCO), so a box from 100 to 200 is 100 px wide.
 */

export interface BBox {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

/** A point in pixels: x from the left edge, y from the top edge. */
export interface PointXY {
  x: number;
  y: number;
}

export type BandFamily = 'columns' | 'rows' | 'x_values' | 'y_values';

export const BAND_FAMILIES: readonly BandFamily[] = ['columns', 'rows', 'x_values', 'y_values'];

export interface ImageMetadata {
  unit?: 'pixels' | 'normalized';
  /** Where the metadata came from: drawn by the generator, read from a dataset, or found by OCR. */
  source?: 'generator' | 'dataset' | 'ocr';
  /** Table columns, keyed by header text; full table height (header included). */
  columns_bbox?: Record<string, BBox>;
  /** Table data rows, keyed by each row's first cell; the header row is never among them. */
  rows_bbox?: Record<string, BBox>;
  /** Vertical-bar charts: one full-height band per x tick label. */
  x_values_bbox?: Record<string, BBox>;
  /** Horizontal-bar charts: one full-width band per y tick label. */
  y_values_bbox?: Record<string, BBox>;
  /** The whole figure (table or plot area), when known. */
  figure_bbox?: BBox;
  /**
   * Geometry diagrams: each labelled point, keyed by its label, at the pixel that holds it (x
   * from the left, y from the top; the point is that pixel's centre). The point tools
   * (draw_line, draw_segment, draw_circle, mark_point) resolve labels through these.
   */
  points?: Record<string, PointXY>;
  /** Everything else a producer wants to keep (cell boxes, plot area, ...). */
  [extra: string]: unknown;
}

/**
 * Metadata after `resolveMetadata`: pixel units; every band box and `figure_bbox` has integer,
 * ordered edges and overlaps the image. Extra fields are carried over untouched (and unconverted).
 */
export type PixelMetadata = ImageMetadata & { unit: 'pixels' };

export function bandKey(family: BandFamily): 'columns_bbox' | 'rows_bbox' | 'x_values_bbox' | 'y_values_bbox' {
  return `${family}_bbox`;
}

/** Metadata that cannot be used: the message names the field, the label and what is wrong. */
export class MetadataError extends Error {
  override name = 'MetadataError';
}

/** The band families this metadata actually has (a family with no labels counts as absent). */
export function bandFamiliesOf(meta: ImageMetadata): BandFamily[] {
  return BAND_FAMILIES.filter((family) => {
    const bands = meta[bandKey(family)];
    return bands !== undefined && Object.keys(bands).length > 0;
  });
}

/**
 * Checks `meta` against an image of `width`×`height` and returns it in integer pixels.
 *
 * Normalised coordinates are multiplied by the width (x) or height (y) and truncated, as
 * ReFocus's `int()` does (12/734 of 734 px is 11.999…, so 11); pixel coordinates are rounded to
 * the nearest integer with halves up (`Math.round`). The same metadata always lands on the same
 * pixels. Throws `MetadataError` on the first bad box.
 */
export function resolveMetadata(meta: ImageMetadata, width: number, height: number): PixelMetadata {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
    throw new MetadataError(`image size must be positive integers, got ${width}×${height}`);
  }
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    throw new MetadataError(`metadata must be a JSON object with *_bbox fields, got ${describe(meta)}`);
  }
  const unit = meta.unit ?? 'pixels';
  if (unit !== 'pixels' && unit !== 'normalized') {
    throw new MetadataError(`metadata "unit" must be "pixels" or "normalized", got ${JSON.stringify(meta.unit)}`);
  }
  const scaleX = unit === 'normalized' ? width : 1;
  const scaleY = unit === 'normalized' ? height : 1;
  const resolved: PixelMetadata = { ...meta, unit: 'pixels' };

  for (const family of BAND_FAMILIES) {
    const key = bandKey(family);
    const bands: unknown = meta[key];
    if (bands === undefined) continue;
    if (typeof bands !== 'object' || bands === null || Array.isArray(bands)) {
      throw new MetadataError(`metadata ${key} must be an object mapping each ${familyNoun(family)} label to a box {x1, y1, x2, y2}, got ${describe(bands)}`);
    }
    const out: Record<string, BBox> = {};
    for (const [label, box] of Object.entries(bands as Record<string, unknown>)) {
      const where = `${familyNoun(family)} '${label}' (${key})`;
      if (label.trim() === '') throw new MetadataError(`metadata ${key} has an empty label; every band needs the text shown in the image`);
      out[label] = resolveBox(box, where, unit, scaleX, scaleY, width, height);
    }
    resolved[key] = out;
  }
  if (meta.figure_bbox !== undefined) {
    resolved.figure_bbox = resolveBox(meta.figure_bbox, 'figure_bbox', unit, scaleX, scaleY, width, height);
  }
  if (meta.points !== undefined) resolved.points = resolvePoints(meta.points, unit, scaleX, scaleY, width, height);
  return resolved;
}

/**
 * Labelled points in whole pixels: normalised coordinates are multiplied and truncated (as boxes
 * are), pixel coordinates rounded; every point must lie on the image and have a non-empty label.
 */
function resolvePoints(points: unknown, unit: string, scaleX: number, scaleY: number, width: number, height: number): Record<string, PointXY> {
  if (typeof points !== 'object' || points === null || Array.isArray(points)) {
    throw new MetadataError(`metadata points must be an object mapping each point label to {x, y}, got ${describe(points)}`);
  }
  const out: Record<string, PointXY> = {};
  for (const [label, value] of Object.entries(points as Record<string, unknown>)) {
    if (label.trim() === '') throw new MetadataError('metadata points has an empty label; every point needs the letter shown beside it in the image');
    const raw = value as Record<string, unknown> | null;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || typeof raw.x !== 'number' || typeof raw.y !== 'number' || !Number.isFinite(raw.x) || !Number.isFinite(raw.y)) {
      throw new MetadataError(`point '${label}' (points): must be {x, y} with finite numbers, got ${describe(value)}`);
    }
    const toPixel = (v: number, scale: number) => (unit === 'normalized' ? Math.trunc(v * scale) : Math.round(v));
    const x = toPixel(raw.x, scaleX);
    const y = toPixel(raw.y, scaleY);
    if (x < 0 || y < 0 || x >= width || y >= height) throw new MetadataError(`point '${label}' (points) at (${x}, ${y}) in pixels lies outside the ${width}×${height} image`);
    out[label] = { x, y };
  }
  return out;
}

function resolveBox(box: unknown, where: string, unit: string, scaleX: number, scaleY: number, width: number, height: number): BBox {
  if (typeof box !== 'object' || box === null || Array.isArray(box)) {
    throw new MetadataError(`${where}: box must be an object {x1, y1, x2, y2}, got ${describe(box)}`);
  }
  const raw = box as Record<string, unknown>;
  for (const edge of ['x1', 'y1', 'x2', 'y2'] as const) {
    const value = raw[edge];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new MetadataError(`${where}: ${edge} must be a finite number, got ${describe(value)}`);
    }
  }
  const { x1, y1, x2, y2 } = raw as unknown as BBox;
  if (!(x1 < x2)) throw new MetadataError(`${where}: x1 (${x1}) must be less than x2 (${x2})`);
  if (!(y1 < y2)) throw new MetadataError(`${where}: y1 (${y1}) must be less than y2 (${y2})`);
  const toPixel = (value: number, scale: number) => (unit === 'normalized' ? Math.trunc(value * scale) : Math.round(value));
  const px: BBox = { x1: toPixel(x1, scaleX), y1: toPixel(y1, scaleY), x2: toPixel(x2, scaleX), y2: toPixel(y2, scaleY) };
  const looksNormalized = unit === 'pixels' && [x1, y1, x2, y2].every((v) => v >= 0 && v <= 1);
  const hint = looksNormalized ? '; these look like normalised coordinates: set "unit": "normalized"' : '';
  if (px.x1 >= px.x2 || px.y1 >= px.y2) {
    throw new MetadataError(`${where}: the box is less than one pixel wide or tall once converted to pixels (${px.x1},${px.y1})–(${px.x2},${px.y2}) on a ${width}×${height} image${hint}`);
  }
  if (px.x2 <= 0 || px.y2 <= 0 || px.x1 >= width || px.y1 >= height) {
    throw new MetadataError(`${where}: box (${px.x1},${px.y1})–(${px.x2},${px.y2}) in pixels lies outside the ${width}×${height} image${hint}`);
  }
  return px;
}

/** The word for one band of a family, as the model reads it: 'column', 'row', 'x value', 'y value'. */
export function familyNoun(family: BandFamily): string {
  return { columns: 'column', rows: 'row', x_values: 'x value', y_values: 'y value' }[family];
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  try {
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return String(value);
  }
}
