/**
 * The checker's eyes: which mark painted which pixel, read from the real pixels. paint.ts
 * rasterises every primitive itself and so knows, per pixel, which mark's coverage went into
 * it: a pixel covered (coverage > 0) by one mark is that mark's, a pixel covered by two marks is a
 * CONFLICT and is attributed to neither. paint.ts's renderWithLabelMap makes it; label-map-svg.ts
 * is the older way (extra librsvg renders in code colours), kept as a reference. Both fill the
 * per-pixel ids and leave the rest to labelMapFromIds.
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

/** Extents and conflicts read off per-pixel ids, in row-major order (the first conflict is the topmost, then leftmost). */
export function labelMapFromIds(width: number, height: number, marks: Mark[], ids: Int32Array): LabelMap {
  const extents: (BBox | null)[] = marks.map(() => null);
  let conflicts = 0;
  let firstConflict: { x: number; y: number } | null = null;
  for (let y = 0, p = 0; y < height; y++) {
    for (let x = 0; x < width; x++, p++) {
      const id = ids[p] as number;
      if (id === NO_INK) continue;
      if (id === CONFLICT) {
        conflicts++;
        if (!firstConflict) firstConflict = { x, y };
        continue;
      }
      const e = extents[id];
      if (!e) extents[id] = { x1: x, y1: y, x2: x + 1, y2: y + 1 };
      else {
        if (x < e.x1) e.x1 = x;
        if (x + 1 > e.x2) e.x2 = x + 1;
        if (y + 1 > e.y2) e.y2 = y + 1;
      }
    }
  }
  return { width, height, ids, marks, extents, conflicts, firstConflict };
}
