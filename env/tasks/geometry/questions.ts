/**
 * The geometry question families: for each, where its points go (so the answer sits a chosen
 * margin from the deciding boundary: hard to judge by eye, never ambiguous), its wording, its
 * answer and its gold calls. Points are placed by role (the line's two points, the point asked
 * about, ...); labels are given to roles later, at random, so a letter says nothing.
 *
 * Families (the construction that makes each answer visible):
 *   above_below      does the line through A and B pass above or below C?   draw_line A, B
 *   same_side        are C and D on the same side of the line through A, B? draw_line A, B
 *   inside_triangle  which of P, Q, R lies inside triangle ABC?              draw_segment ×3
 *   segments_cross   do segments AB and CD cross?                            draw_segment ×2
 *   longer_segment   which is longer, OA or OB?                              draw_circle O through A
 *   locate           where is point C? (x, y) in pixels                       none: read it off
 * The constructions are never drawn in the diagram itself. A gold call names only points the
 * question names, chosen by role, never by the answer.
 */
import type { PointXY } from '../../tools/metadata.js';
import type { ToolCall } from '../../tools/types.js';
import type { Rng } from '../prng.js';
import { IllPosedQuestion } from '../ill-posed.js';
import { distance, insideTriangle, lineAbove, longer, orientationMargin, sameSide, segmentsCross } from './plane.js';

export const GEOMETRY_FAMILIES = ['above_below', 'same_side', 'inside_triangle', 'segments_cross', 'longer_segment', 'locate'] as const;
export type GeometryFamily = (typeof GEOMETRY_FAMILIES)[number];
/** How many points each family's question names (its roles). */
export const QUESTION_POINTS: Readonly<Record<GeometryFamily, number>> = { above_below: 3, same_side: 4, inside_triangle: 6, segments_cross: 4, longer_segment: 3, locate: 1 };

/** Asked when `--family` is absent: the construction families. `locate` (perception) is asked only by name. */
export const DEFAULT_GEOMETRY_FAMILIES: readonly GeometryFamily[] = GEOMETRY_FAMILIES.filter((f) => f !== 'locate');

/** Where points may go: whole pixels in [x1, x2) × [y1, y2). */
export interface Area {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

/** The question's points, by role, and how to word, answer and solve it once roles have labels. */
export interface PlacedQuestion {
  family: GeometryFamily;
  roles: PointXY[];
  /** The answer's margin (px, plane.ts). */
  margin: number;
  question(labels: readonly string[]): string;
  answer(labels: readonly string[]): string;
  gold(labels: readonly string[]): ToolCall[];
  /** locate: the tolerance (px) a predicted point may be off by. */
  tolerance?: number;
}

function pointIn(rng: Rng, area: Area): PointXY {
  return { x: rng.int(area.x1, area.x2 - 1), y: rng.int(area.y1, area.y2 - 1) };
}

function inside(area: Area, p: PointXY): boolean {
  return p.x >= area.x1 && p.x < area.x2 && p.y >= area.y1 && p.y < area.y2;
}

const round = (p: { x: number; y: number }): PointXY => ({ x: Math.round(p.x), y: Math.round(p.y) });

/**
 * Walks from `from` along the unit direction `step` one pixel at a time and returns the first
 * whole-pixel point whose margin (by `measure`, null when the answer is not yet the wanted one)
 * reaches `target`; null when it leaves the area first.
 */
function walkToMargin(from: { x: number; y: number }, step: { x: number; y: number }, area: Area, target: number, measure: (p: PointXY) => number | null): PointXY | null {
  for (let k = 1; k < 400; k++) {
    const p = round({ x: from.x + step.x * k, y: from.y + step.y * k });
    if (!inside(area, p)) return null;
    const m = measure(p);
    if (m !== null && m >= target) return p;
  }
  return null;
}

/** Two points far apart left to right, the line between them no steeper than 40°. */
function wideLine(rng: Rng, area: Area): [PointXY, PointXY] {
  const w = area.x2 - area.x1;
  const left = { x: rng.int(area.x1, area.x1 + Math.floor(w * 0.3)), y: rng.int(area.y1, area.y2 - 1) };
  const right = { x: rng.int(area.x2 - 1 - Math.floor(w * 0.3), area.x2 - 1), y: 0 };
  const dx = right.x - left.x;
  const rise = Math.floor(dx * 0.84);
  right.y = rng.int(Math.max(area.y1, left.y - rise), Math.min(area.y2 - 1, left.y + rise));
  return rng.chance(0.5) ? [left, right] : [right, left];
}

function aboveBelow(rng: Rng, area: Area, target: number): PlacedQuestion {
  const [a, b] = wideLine(rng, area);
  const wantAbove = rng.chance(0.5);
  const x = rng.int(area.x1, area.x2 - 1);
  const lineY = a.y + ((b.y - a.y) * (x - a.x)) / (b.x - a.x);
  // The line passes above c when c lies below it (larger y).
  const c = walkToMargin({ x, y: lineY }, { x: 0, y: wantAbove ? 1 : -1 }, area, target, (p) => {
    const r = lineAbove(a, b, p);
    return r.above === wantAbove ? r.margin : null;
  });
  if (!c) throw new IllPosedQuestion('above_below: no room for the point at the margin asked');
  const { margin } = lineAbove(a, b, c);
  return {
    family: 'above_below',
    roles: [a, b, c],
    margin,
    question: ([la, lb, lc]) => `Does the line through ${la} and ${lb} pass above or below point ${lc}? Answer above or below.`,
    answer: () => (wantAbove ? 'above' : 'below'),
    gold: ([la, lb]) => [{ name: 'draw_line', arguments: { through: [la, lb] } }],
  };
}

/** A point whose orientation against a→b has the wanted sign and a margin of at least `target`, walking off the line at x. */
function besideLine(a: PointXY, b: PointXY, x: number, sign: number, area: Area, target: number): PointXY | null {
  const lineY = a.y + ((b.y - a.y) * (x - a.x)) / (b.x - a.x);
  // Moving a point down (y + 1) adds b.x − a.x to cross(a, b, p): down is the wanted sign when that agrees.
  const dir = sign === Math.sign(b.x - a.x) ? 1 : -1;
  return walkToMargin({ x, y: lineY }, { x: 0, y: dir }, area, target, (p) => {
    const o = Math.sign((b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x));
    return o === sign ? orientationMargin(a, b, p) : null;
  });
}

function sameSideQuestion(rng: Rng, area: Area, target: number, robustFloor: number): PlacedQuestion {
  const [a, b] = wideLine(rng, area);
  const wantSame = rng.chance(0.5);
  const signC = rng.chance(0.5) ? 1 : -1;
  const signD = wantSame ? signC : -signC;
  const c = besideLine(a, b, rng.int(area.x1, area.x2 - 1), signC, area, target);
  // D anywhere on its side, at least the robust floor from the line (it may be far).
  const far = robustFloor + rng.next() * 60;
  const d = besideLine(a, b, rng.int(area.x1, area.x2 - 1), signD, area, far) ?? besideLine(a, b, rng.int(area.x1, area.x2 - 1), signD, area, robustFloor);
  if (!c || !d) throw new IllPosedQuestion('same_side: no room for the points at the margin asked');
  const result = sameSide(a, b, c, d);
  if (result.same !== wantSame) throw new IllPosedQuestion('same_side: the points landed on the wrong sides');
  return {
    family: 'same_side',
    roles: [a, b, c, d],
    margin: result.margin,
    question: ([la, lb, lc, ld]) => `Are points ${lc} and ${ld} on the same side of the line through ${la} and ${lb}? Answer yes or no.`,
    answer: () => (wantSame ? 'yes' : 'no'),
    gold: ([la, lb]) => [{ name: 'draw_line', arguments: { through: [la, lb] } }],
  };
}

function triangle(rng: Rng, area: Area): [PointXY, PointXY, PointXY] {
  const w = area.x2 - area.x1;
  const h = area.y2 - area.y1;
  for (let tries = 0; tries < 40; tries++) {
    const t: [PointXY, PointXY, PointXY] = [pointIn(rng, area), pointIn(rng, area), pointIn(rng, area)];
    const [a, b, c] = t;
    const area2 = Math.abs((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x));
    const sides = [distance(a, b), distance(b, c), distance(c, a)];
    // Big enough to hold points with room, no angle sharper than ~25° (sin 25° ≈ 0.42).
    const sharpest = Math.min(...sides.map((s, i) => area2 / (s * (sides[(i + 1) % 3] as number))));
    if (area2 >= 0.24 * w * h && sharpest >= 0.42) return t;
  }
  throw new IllPosedQuestion('inside_triangle: no roomy triangle found');
}

function insideTriangleQuestion(rng: Rng, area: Area, target: number, robustFloor: number): PlacedQuestion {
  const [a, b, c] = triangle(rng, area);
  const centroid = { x: (a.x + b.x + c.x) / 3, y: (a.y + b.y + c.y) / 3 };
  const edges: [PointXY, PointXY][] = [[a, b], [b, c], [c, a]];
  const [inEdge, outEdge] = rng.sample([0, 1, 2], 2).map((i) => edges[i] as [PointXY, PointXY]) as [[PointXY, PointXY], [PointXY, PointXY]];
  /** From a point on an edge, walk toward (inward) or away from (outward) the centroid until the margin is reached. */
  const nearEdge = (edge: [PointXY, PointXY], wantInside: boolean): PointXY | null => {
    const t = 0.25 + 0.5 * rng.next();
    const foot = { x: edge[0].x + t * (edge[1].x - edge[0].x), y: edge[0].y + t * (edge[1].y - edge[0].y) };
    const ex = edge[1].x - edge[0].x, ey = edge[1].y - edge[0].y;
    const len = Math.hypot(ex, ey);
    let nx = -ey / len, ny = ex / len;
    if ((centroid.x - foot.x) * nx + (centroid.y - foot.y) * ny < 0) [nx, ny] = [-nx, -ny];
    const step = wantInside ? { x: nx, y: ny } : { x: -nx, y: -ny };
    return walkToMargin(foot, step, area, target, (p) => {
      const r = insideTriangle(a, b, c, p);
      return r.inside === wantInside ? r.margin : null;
    });
  };
  const pIn = nearEdge(inEdge, true);
  const pOut = nearEdge(outEdge, false);
  let pFar: PointXY | null = null;
  for (let tries = 0; tries < 30 && !pFar; tries++) {
    const p = pointIn(rng, area);
    const r = insideTriangle(a, b, c, p);
    if (!r.inside && r.margin >= robustFloor) pFar = p;
  }
  if (!pIn || !pOut || !pFar) throw new IllPosedQuestion('inside_triangle: no room for the candidates at the margin asked');
  const candidates = rng.shuffle([pIn, pOut, pFar]);
  const answerRole = 3 + candidates.indexOf(pIn);
  const margin = Math.min(...candidates.map((p) => insideTriangle(a, b, c, p).margin));
  return {
    family: 'inside_triangle',
    roles: [a, b, c, ...candidates],
    margin,
    question: ([la, lb, lc, lp, lq, lr]) => `Which of the points ${lp}, ${lq} and ${lr} lies inside triangle ${la}${lb}${lc}? Answer with its letter.`,
    answer: (labels) => labels[answerRole] as string,
    gold: ([la, lb, lc]) => [
      { name: 'draw_segment', arguments: { endpoints: [la, lb] } },
      { name: 'draw_segment', arguments: { endpoints: [lb, lc] } },
      { name: 'draw_segment', arguments: { endpoints: [lc, la] } },
    ],
  };
}

function segmentsCrossQuestion(rng: Rng, area: Area, target: number): PlacedQuestion {
  const w = area.x2 - area.x1;
  const h = area.y2 - area.y1;
  // C–D long, then A far on one side and B just across C–D's line (crossing) or just short of it.
  const c = pointIn(rng, area);
  let d: PointXY | null = null;
  for (let tries = 0; tries < 30 && !d; tries++) {
    const p = pointIn(rng, area);
    if (distance(c, p) >= 0.55 * Math.min(w, h)) d = p;
  }
  if (!d) throw new IllPosedQuestion('segments_cross: no long segment found');
  const wantCross = rng.chance(0.5);
  const t = 0.25 + 0.5 * rng.next();
  const foot = { x: c.x + t * (d.x - c.x), y: c.y + t * (d.y - c.y) };
  const len = distance(c, d);
  const normal = { x: -(d.y - c.y) / len, y: (d.x - c.x) / len };
  const sideSign = rng.chance(0.5) ? 1 : -1;
  const tilt = (rng.next() - 0.5) * 1.2;
  const dirA = { x: sideSign * (normal.x * Math.cos(tilt) - normal.y * Math.sin(tilt)), y: sideSign * (normal.x * Math.sin(tilt) + normal.y * Math.cos(tilt)) };
  const reach = (0.3 + 0.25 * rng.next()) * Math.min(w, h);
  const a = round({ x: foot.x + dirA.x * reach, y: foot.y + dirA.y * reach });
  if (!inside(area, a)) throw new IllPosedQuestion('segments_cross: the far end left the canvas');
  // B on the ray from A through the foot: short of the line (no cross) or past it (cross).
  const toward = { x: (foot.x - a.x) / reach, y: (foot.y - a.y) / reach };
  // Crossing: walk on from the line, away from A; not crossing: walk back from it toward A.
  const b = wantCross
    ? walkToMargin(foot, toward, area, target, (p) => {
      const r = segmentsCross(a, p, c, d as PointXY);
      return r.cross ? r.margin : null;
    })
    : walkToMargin(foot, { x: -toward.x, y: -toward.y }, area, target, (p) => {
      const r = segmentsCross(a, p, c, d as PointXY);
      return r.cross ? null : r.margin;
    });
  if (!b) throw new IllPosedQuestion('segments_cross: no room for the end at the margin asked');
  const result = segmentsCross(a, b, c, d);
  if (result.cross !== wantCross) throw new IllPosedQuestion('segments_cross: the end landed on the wrong side');
  // Which segment is named first, and each one's ends, at random.
  const first = rng.chance(0.5) ? [a, b] : [b, a];
  const second = rng.chance(0.5) ? [c, d] : [d, c];
  const roles = rng.chance(0.5) ? [...first, ...second] : [...second, ...first];
  return {
    family: 'segments_cross',
    roles,
    margin: result.margin,
    question: ([p, q, r, s]) => `Do the segments ${p}${q} and ${r}${s} cross each other? Answer yes or no.`,
    answer: () => (wantCross ? 'yes' : 'no'),
    gold: ([p, q, r, s]) => [
      { name: 'draw_segment', arguments: { endpoints: [p, q] } },
      { name: 'draw_segment', arguments: { endpoints: [r, s] } },
    ],
  };
}

function longerSegmentQuestion(rng: Rng, area: Area, target: number, hi: number): PlacedQuestion {
  const w = area.x2 - area.x1;
  const h = area.y2 - area.y1;
  const o = round({ x: area.x1 + w * (0.35 + 0.3 * rng.next()), y: area.y1 + h * (0.35 + 0.3 * rng.next()) });
  const r1 = (0.22 + 0.2 * rng.next()) * Math.min(w, h);
  const difference = 4 * (target + rng.next() * (hi - target));
  const r2 = r1 + (rng.chance(0.5) ? difference : -difference);
  const t1 = rng.next() * 2 * Math.PI;
  const t2 = t1 + (Math.PI / 3 + rng.next() * (2 * Math.PI / 3)) * (rng.chance(0.5) ? 1 : -1);
  const a = round({ x: o.x + r1 * Math.cos(t1), y: o.y + r1 * Math.sin(t1) });
  const b = round({ x: o.x + r2 * Math.cos(t2), y: o.y + r2 * Math.sin(t2) });
  if (!inside(area, a) || !inside(area, b)) throw new IllPosedQuestion('longer_segment: an end left the canvas');
  const result = longer(o, a, b);
  // The segment named first is the one the gold circle goes through, whichever is longer.
  const [first, second] = rng.chance(0.5) ? [a, b] : [b, a];
  const firstLonger = first === a ? result.aLonger : !result.aLonger;
  return {
    family: 'longer_segment',
    roles: [o, first, second],
    margin: result.margin,
    question: ([lo, l1, l2]) => `Which segment is longer, ${lo}${l1} or ${lo}${l2}? Answer with its name as written here.`,
    answer: ([lo, l1, l2]) => (firstLonger ? `${lo}${l1}` : `${lo}${l2}`),
    gold: ([lo, l1]) => [{ name: 'draw_circle', arguments: { center: lo, through: l1 } }],
  };
}

function locateQuestion(rng: Rng, area: Area, tolerance: number): PlacedQuestion {
  const p = pointIn(rng, area);
  return {
    family: 'locate',
    roles: [p],
    margin: Infinity,
    tolerance,
    question: ([l]) => `Where is point ${l}? Answer with its pixel coordinates (x, y): x from the left edge, y from the top edge of the image.`,
    answer: () => `(${p.x}, ${p.y})`,
    gold: () => [],
  };
}

/**
 * Places one question of `family` in `area`, its margin at least `target` (and, where the family
 * can aim, not far above it). Throws IllPosedQuestion when the roll leaves no room (a re-roll).
 */
export function placeQuestion(rng: Rng, family: GeometryFamily, area: Area, margin: readonly [number, number], tolerance: number, robustFloor: number): PlacedQuestion {
  const target = margin[0] + rng.next() * (margin[1] - margin[0]);
  switch (family) {
    case 'above_below':
      return aboveBelow(rng, area, target);
    case 'same_side':
      return sameSideQuestion(rng, area, target, robustFloor);
    case 'inside_triangle':
      return insideTriangleQuestion(rng, area, target, robustFloor);
    case 'segments_cross':
      return segmentsCrossQuestion(rng, area, target);
    case 'longer_segment':
      return longerSegmentQuestion(rng, area, target, margin[1]);
    case 'locate':
      return locateQuestion(rng, area, tolerance);
  }
}
