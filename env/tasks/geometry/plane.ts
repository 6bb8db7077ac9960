/**
 * Plane geometry on integer pixel points, for the geometry generator: orientations, distances,
 * and each answer's robustness margin — how far (in pixels) every point involved may move before
 * the answer can change. Points are whole pixels, so every orientation is an exact integer.
 * Pure functions, no randomness, no pixels. The checker recomputes answers on another path
 * (geometry-answer.ts); the margins here are the checker's too (a margin is a bound, not an answer).
 */
import type { PointXY } from '../../tools/metadata.js';

/** Twice the signed area of (p, q, r): > 0 when r lies to the left of p→q in image coordinates (y down: clockwise on screen). */
export function cross(p: PointXY, q: PointXY, r: PointXY): number {
  return (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x);
}

export function distance(p: PointXY, q: PointXY): number {
  return Math.hypot(q.x - p.x, q.y - p.y);
}

/** Distance from r to the segment p–q. */
export function distanceToSegment(p: PointXY, q: PointXY, r: PointXY): number {
  const dx = q.x - p.x;
  const dy = q.y - p.y;
  const len2 = dx * dx + dy * dy;
  const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, ((r.x - p.x) * dx + (r.y - p.y) * dy) / len2));
  return Math.hypot(p.x + t * dx - r.x, p.y + t * dy - r.y);
}

/**
 * How far each of p, q, r may move (every one by up to δ, in any direction) while the sign of
 * cross(p, q, r) provably stays: the largest δ with 4δ² + 2δ·S < |cross|, S the sum of the two
 * shortest sides. (Pivoting on the vertex between those sides, each of the two edge vectors
 * changes by at most 2δ, so the cross product changes by at most 2δ·S + 4δ².) 0 for collinear points.
 */
export function orientationMargin(p: PointXY, q: PointXY, r: PointXY): number {
  const f = Math.abs(cross(p, q, r));
  if (f === 0) return 0;
  const sides = [distance(p, q), distance(q, r), distance(r, p)].sort((a, b) => a - b);
  const s = (sides[0] as number) + (sides[1] as number);
  return (-2 * s + Math.sqrt(4 * s * s + 16 * f)) / 8;
}

/** Orientation of r against the directed line p→q with its margin: sign ±1 (0 when collinear). */
export function side(p: PointXY, q: PointXY, r: PointXY): { sign: number; margin: number } {
  return { sign: Math.sign(cross(p, q, r)), margin: orientationMargin(p, q, r) };
}

/**
 * Whether the line through a and b passes above c (image coordinates: above = smaller y at c's
 * x), and the margin: the orientation's, and half the x extent of a–b (the line must not turn
 * past vertical, which would swap above and below).
 */
export function lineAbove(a: PointXY, b: PointXY, c: PointXY): { above: boolean; margin: number } {
  const [left, right] = a.x <= b.x ? [a, b] : [b, a];
  // cross(left, right, c) = dx · (c.y − the line's y at c.x), dx > 0: positive when c lies below
  // the line on screen, i.e. when the line passes above c.
  const o = side(left, right, c);
  return { above: o.sign > 0, margin: Math.min(o.margin, (right.x - left.x) / 2) };
}

/** Whether c and d lie on the same side of the line through a and b, with the smaller of their two margins. */
export function sameSide(a: PointXY, b: PointXY, c: PointXY, d: PointXY): { same: boolean; margin: number } {
  const sc = side(a, b, c);
  const sd = side(a, b, d);
  return { same: sc.sign === sd.sign, margin: Math.min(sc.margin, sd.margin) };
}

/**
 * Whether p lies strictly inside triangle abc, and the margin: inside, the least margin of the
 * three edge orientations; outside, the largest margin among the edges p lies beyond (one edge
 * that robustly has p on its outer side keeps p outside).
 */
export function insideTriangle(a: PointXY, b: PointXY, c: PointXY, p: PointXY): { inside: boolean; margin: number } {
  const turn = Math.sign(cross(a, b, c));
  const edges: [PointXY, PointXY][] = [[a, b], [b, c], [c, a]];
  const sides = edges.map(([u, v]) => side(u, v, p));
  const inside = sides.every((s) => s.sign === turn);
  if (inside) return { inside, margin: Math.min(...sides.map((s) => s.margin), orientationMargin(a, b, c)) };
  const beyond = sides.filter((s) => s.sign !== turn).map((s) => s.margin);
  return { inside, margin: Math.min(Math.max(...beyond), orientationMargin(a, b, c)) };
}

/**
 * Whether the closed segments a–b and c–d cross, and the margin. They cross exactly when each
 * segment's ends lie on opposite sides of the other's line: crossing is as robust as the least of
 * those four orientations; not crossing is as robust as the best pair of ends on one side.
 */
export function segmentsCross(a: PointXY, b: PointXY, c: PointXY, d: PointXY): { cross: boolean; margin: number } {
  const abc = side(a, b, c), abd = side(a, b, d), cda = side(c, d, a), cdb = side(c, d, b);
  const straddleAB = abc.sign * abd.sign < 0;
  const straddleCD = cda.sign * cdb.sign < 0;
  if (straddleAB && straddleCD) return { cross: true, margin: Math.min(abc.margin, abd.margin, cda.margin, cdb.margin) };
  const apart = [abc.sign * abd.sign > 0 ? Math.min(abc.margin, abd.margin) : 0, cda.sign * cdb.sign > 0 ? Math.min(cda.margin, cdb.margin) : 0];
  return { cross: false, margin: Math.max(...apart) };
}

/** Which of o–a and o–b is longer, and the margin: each length moves by at most 2δ, so a quarter of the difference. */
export function longer(o: PointXY, a: PointXY, b: PointXY): { aLonger: boolean; margin: number } {
  const da = distance(o, a);
  const db = distance(o, b);
  return { aLonger: da > db, margin: Math.abs(da - db) / 4 };
}
