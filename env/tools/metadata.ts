/**
 * Image metadata: where each column, row and tick-label band lies, in pixels. Boxes always come
 * from here (the generator, a dataset loader or OCR grounding), never from the model.
 *
 * On disk a metadata object may be normalised to [0,1] (`"unit": "normalized"`, as ReFocus
 * stores them); `resolveMetadata` converts to pixels once, at the edge.
 */

export interface BBox {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
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
  /** Everything else a producer wants to keep (cell boxes, plot area, ...). */
  [extra: string]: unknown;
}

/** Metadata after `resolveMetadata`: pixel units, every present box finite and ordered. */
export type PixelMetadata = ImageMetadata & { unit: 'pixels' };

export function bandKey(family: BandFamily): 'columns_bbox' | 'rows_bbox' | 'x_values_bbox' | 'y_values_bbox' {
  return `${family}_bbox`;
}
