/**
 * The smallest rotated rectangle around a set of points (convex hull, then one candidate
 * rectangle per hull edge), as OpenCV's minAreaRect computes it for PaddleOCR's box post-
 * processing. Pure geometry: no pixels, no models.
 */
import type { Point } from './types.js';

export interface RotatedRect {
  center: Point;
  /** Unit vector along the first side. */
  axis: Point;
  /** Side length along `axis`. */
  width: number;
  /** Side length perpendicular to `axis`. */
  height: number;
}

function cross(o: Point, a: Point, b: Point): number {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

/** Convex hull, counter-clockwise (Andrew's monotone chain); collinear points dropped. */
export function convexHull(points: readonly Point[]): Point[] {
  const sorted = [...points].sort((a, b) => a.x - b.x || a.y - b.y);
  if (sorted.length <= 2) return sorted;
  const lower: Point[] = [];
  for (const p of sorted) {
    while (lower.length >= 2 && cross(lower[lower.length - 2] as Point, lower[lower.length - 1] as Point, p) <= 0) lower.pop();
    lower.push(p);
  }
  const upper: Point[] = [];
  for (let i = sorted.length - 1; i >= 0; i--) {
    const p = sorted[i] as Point;
    while (upper.length >= 2 && cross(upper[upper.length - 2] as Point, upper[upper.length - 1] as Point, p) <= 0) upper.pop();
    upper.push(p);
  }
  lower.pop();
  upper.pop();
  return lower.concat(upper);
}

export function minAreaRect(points: readonly Point[]): RotatedRect {
  const hull = convexHull(points);
  if (hull.length === 0) throw new Error('minAreaRect needs at least one point');
  if (hull.length === 1) {
    const p = hull[0] as Point;
    return { center: { ...p }, axis: { x: 1, y: 0 }, width: 0, height: 0 };
  }
  let best: RotatedRect | undefined;
  let bestArea = Infinity;
  for (let i = 0; i < hull.length; i++) {
    const a = hull[i] as Point;
    const b = hull[(i + 1) % hull.length] as Point;
    const len = Math.hypot(b.x - a.x, b.y - a.y);
    if (len === 0) continue;
    const ux = (b.x - a.x) / len;
    const uy = (b.y - a.y) / len;
    let minU = Infinity;
    let maxU = -Infinity;
    let minV = Infinity;
    let maxV = -Infinity;
    for (const p of hull) {
      const u = p.x * ux + p.y * uy;
      const v = -p.x * uy + p.y * ux;
      if (u < minU) minU = u;
      if (u > maxU) maxU = u;
      if (v < minV) minV = v;
      if (v > maxV) maxV = v;
    }
    const area = (maxU - minU) * (maxV - minV);
    // Ties go to the rectangle closest to axis-aligned, so upright text gets an upright box.
    if (area < bestArea - 1e-9 || (Math.abs(area - bestArea) <= 1e-9 && best !== undefined && Math.abs(uy) < Math.abs(best.axis.y))) {
      bestArea = area;
      const cu = (minU + maxU) / 2;
      const cv = (minV + maxV) / 2;
      best = { center: { x: cu * ux - cv * uy, y: cu * uy + cv * ux }, axis: { x: ux, y: uy }, width: maxU - minU, height: maxV - minV };
    }
  }
  return best as RotatedRect;
}
