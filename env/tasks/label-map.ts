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

/**
 * What the painter already knows about its ids: per mark, a box holding every pixel it may have
 * claimed (the union of its primitives' clipped drawing boxes, [x1, y1, x2, y2] half-open), and the
 * conflicts it made (pixels that became CONFLICT, and the first of them in row-major order).
 */
export interface PaintedIds {
  searchBoxes: Int32Array;
  conflicts: number;
  firstConflict: number;
}

/**
 * Extents and conflicts read off per-pixel ids, in row-major order (the first conflict is the
 * topmost, then leftmost). With `painted`, each mark's extent is read from its search box alone
 * instead of the whole image: the same extents, since a mark's pixels all lie in its box.
 */
export function labelMapFromIds(width: number, height: number, marks: Mark[], ids: Int32Array, painted?: PaintedIds): LabelMap {
  if (painted) return fromSearchBoxes(width, height, marks, ids, painted);
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

function fromSearchBoxes(width: number, height: number, marks: Mark[], ids: Int32Array, painted: PaintedIds): LabelMap {
  const boxes = painted.searchBoxes;
  const extents = marks.map((_, id): BBox | null => {
    let x1 = width, y1 = height, x2 = -1, y2 = -1;
    for (let y = boxes[id * 4 + 1] as number, yEnd = boxes[id * 4 + 3] as number; y < yEnd; y++) {
      for (let x = boxes[id * 4] as number, xEnd = boxes[id * 4 + 2] as number, p = y * width + x; x < xEnd; x++, p++) {
        if (ids[p] !== id) continue;
        if (x < x1) x1 = x;
        if (x >= x2) x2 = x + 1;
        if (y < y1) y1 = y;
        y2 = y + 1;
      }
    }
    return x2 < 0 ? null : { x1, y1, x2, y2 };
  });
  const first = painted.firstConflict;
  return { width, height, ids, marks, extents, conflicts: painted.conflicts, firstConflict: painted.conflicts > 0 ? { x: first % width, y: Math.floor(first / width) } : null };
}
