/**
 * The checker's eyes: which mark painted which pixel, read from the real pixels. paint.ts
 * rasterises every primitive itself and so knows, per pixel, which mark's coverage went into
 * it: a pixel covered (coverage > 0) by one mark is that mark's, a pixel covered by two marks is a
 * CONFLICT and is attributed to neither. paint.ts's renderWithLabelMap makes it (label-map-svg.ts is the older way, from extra librsvg
 * renders in code colours, kept as a reference.)
 */
import type { BBox } from '../tools/metadata.js';
import type { Mark } from './scene.js';

export const NO_INK = -1;
export const CONFLICT = -2;

export interface LabelMap {
  width: number;
  height: number;
  /** Per pixel: index into `marks`, NO_INK, or CONFLICT. */
  ids: Int32Array;
  marks: Mark[];
  /** Per mark: the bounding box of its pixels (half-open), or null if it painted nothing. */
  extents: (BBox | null)[];
  /** Pixels where marks overlap, and the first such pixel. */
  conflicts: number;
  firstConflict: { x: number; y: number } | null;
}

/** How many pixels of mark `id` fall inside `box` (half-open). */
export function inkInside(map: LabelMap, id: number, box: BBox): number {
  const extent = map.extents[id];
  if (!extent) return 0;
  const x1 = Math.max(extent.x1, Math.ceil(box.x1));
  const x2 = Math.min(extent.x2, Math.ceil(box.x2));
  const y1 = Math.max(extent.y1, Math.ceil(box.y1));
  const y2 = Math.min(extent.y2, Math.ceil(box.y2));
  let count = 0;
  for (let y = y1; y < y2; y++) for (let x = x1; x < x2; x++) if (map.ids[y * map.width + x] === id) count++;
  return count;
}
