/**
 * The checker's own answer to a geometry question, from the record's `meta.points` and `query`
 * alone, on a path independent of the generator's (plane.ts): exact BigInt arithmetic with the
 * textbook formulas — the line's y at a point's x, a line equation's sign, barycentric
 * coordinates, the intersection parameters of two segments, squared lengths. It throws when the
 * record does not pose a question with one answer.
 */
import type { PointXY } from '../../tools/metadata.js';
import type { TaskQuery } from '../record.js';

const big = (p: PointXY): { x: bigint; y: bigint } => ({ x: BigInt(p.x), y: BigInt(p.y) });

function pointsOf(points: Readonly<Record<string, PointXY>>, query: TaskQuery, count: number): { x: bigint; y: bigint }[] {
  const labels = query.points ?? [];
  if (labels.length !== count) throw new Error(`a ${query.family} question names ${count} points; the query has ${labels.length}`);
  return labels.map((label) => {
    const p = points[label];
    if (!p) throw new Error(`the query names point '${label}', which meta.points lacks`);
    if (!Number.isInteger(p.x) || !Number.isInteger(p.y)) throw new Error(`point '${label}' is not at whole pixels (${p.x}, ${p.y})`);
    return big(p);
  });
}

/** Sign of a rational n/d. */
const signOf = (n: bigint, d: bigint): number => (n === 0n ? 0 : (n > 0n) === (d > 0n) ? 1 : -1);

export function recomputeDiagramAnswer(points: Readonly<Record<string, PointXY>>, query: TaskQuery): string {
  switch (query.family) {
    case 'above_below': {
      const [a, b, c] = pointsOf(points, query, 3) as [{ x: bigint; y: bigint }, { x: bigint; y: bigint }, { x: bigint; y: bigint }];
      if (a.x === b.x) throw new Error('the line is vertical: neither above nor below');
      // The line's y at c.x is a.y + (b.y − a.y)(c.x − a.x)/(b.x − a.x); it passes above c when that is less than c.y.
      const diff = signOf((b.y - a.y) * (c.x - a.x) - (c.y - a.y) * (b.x - a.x), b.x - a.x);
      if (diff === 0) throw new Error('the line passes through the point');
      return diff < 0 ? 'above' : 'below';
    }
    case 'same_side': {
      const [a, b, c, d] = pointsOf(points, query, 4) as { x: bigint; y: bigint }[] as [{ x: bigint; y: bigint }, { x: bigint; y: bigint }, { x: bigint; y: bigint }, { x: bigint; y: bigint }];
      const ka = b.y - a.y, kb = a.x - b.x, kc = -(ka * a.x + kb * a.y);
      const sc = ka * c.x + kb * c.y + kc;
      const sd = ka * d.x + kb * d.y + kc;
      if (sc === 0n || sd === 0n) throw new Error('a point lies on the line');
      return (sc > 0n) === (sd > 0n) ? 'yes' : 'no';
    }
    case 'inside_triangle': {
      const labels = query.points ?? [];
      const [a, b, c, ...candidates] = pointsOf(points, query, 6) as { x: bigint; y: bigint }[];
      const A = a as { x: bigint; y: bigint }, B = b as { x: bigint; y: bigint }, C = c as { x: bigint; y: bigint };
      const det = (B.y - C.y) * (A.x - C.x) + (C.x - B.x) * (A.y - C.y);
      if (det === 0n) throw new Error('the triangle is degenerate');
      const inside = candidates.map((p) => {
        // Barycentric weights times det: all three strictly of det's sign inside.
        const l1 = (B.y - C.y) * (p.x - C.x) + (C.x - B.x) * (p.y - C.y);
        const l2 = (C.y - A.y) * (p.x - C.x) + (A.x - C.x) * (p.y - C.y);
        const l3 = det - l1 - l2;
        return [l1, l2, l3].every((l) => signOf(l, det) > 0);
      });
      const found = inside.flatMap((hit, i) => (hit ? [labels[3 + i] as string] : []));
      if (found.length !== 1) throw new Error(`${found.length} of the candidates lie inside the triangle; exactly one must`);
      return found[0] as string;
    }
    case 'segments_cross': {
      const [p1, p2, q1, q2] = pointsOf(points, query, 4) as [{ x: bigint; y: bigint }, { x: bigint; y: bigint }, { x: bigint; y: bigint }, { x: bigint; y: bigint }];
      // p1 + t(p2 − p1) = q1 + u(q2 − q1): t = tn/den, u = un/den; they cross when both lie in (0, 1).
      const rx = p2.x - p1.x, ry = p2.y - p1.y, sx = q2.x - q1.x, sy = q2.y - q1.y;
      const den = rx * sy - ry * sx;
      if (den === 0n) throw new Error('the segments are parallel');
      const tn = (q1.x - p1.x) * sy - (q1.y - p1.y) * sx;
      const un = (q1.x - p1.x) * ry - (q1.y - p1.y) * rx;
      const within = (n: bigint) => (den > 0n ? n > 0n && n < den : n < 0n && n > den);
      const touches = (n: bigint) => n === 0n || n === den;
      if ((within(tn) || touches(tn)) && (within(un) || touches(un)) && (touches(tn) || touches(un))) throw new Error('the segments touch at an end');
      return within(tn) && within(un) ? 'yes' : 'no';
    }
    case 'longer_segment': {
      const labels = query.points ?? [];
      const [o, a, b] = pointsOf(points, query, 3) as [{ x: bigint; y: bigint }, { x: bigint; y: bigint }, { x: bigint; y: bigint }];
      const la = (a.x - o.x) ** 2n + (a.y - o.y) ** 2n;
      const lb = (b.x - o.x) ** 2n + (b.y - o.y) ** 2n;
      if (la === lb) throw new Error('the segments are equally long');
      return `${labels[0]}${la > lb ? labels[1] : labels[2]}`;
    }
    case 'locate': {
      const [p] = pointsOf(points, query, 1) as [{ x: bigint; y: bigint }];
      return `(${p.x}, ${p.y})`;
    }
    default:
      throw new Error(`'${query.family}' is not a geometry question family`);
  }
}
