/** How two boxes (half-open, metadata.ts) overlap: their common part, its share of their union, containment. Pure. */
import type { BBox } from '../tools/metadata.js';

/** The box both cover, or null when they share no area. */
export function intersect(a: BBox, b: BBox): BBox | null {
  const box = { x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1), x2: Math.min(a.x2, b.x2), y2: Math.min(a.y2, b.y2) };
  return box.x1 < box.x2 && box.y1 < box.y2 ? box : null;
}

const area = (b: BBox): number => (b.x2 - b.x1) * (b.y2 - b.y1);

/** Intersection over union of two boxes (0 when they do not overlap). */
export function iou(a: BBox, b: BBox): number {
  const shared = intersect(a, b);
  if (shared === null) return 0;
  const inter = area(shared);
  return inter / (area(a) + area(b) - inter);
}

/** Whether `outer` covers all of `inner`, to within `slack` px on each edge (float edges of nested views). */
export function contains(outer: BBox, inner: BBox, slack = 0): boolean {
  return outer.x1 <= inner.x1 + slack && outer.y1 <= inner.y1 + slack && outer.x2 >= inner.x2 - slack && outer.y2 >= inner.y2 - slack;
}
