/**
 * What difficulty 1–5 means for geometry diagrams: the canvas, how many labelled points, how many
 * distractor constructions (segments, circles, polygons among the points the question does not
 * name), the label font, and how close to the deciding boundary the answer sits (the margin range,
 * in pixels: how far the points may move before the answer could change). A smaller margin is
 * harder to judge by eye; no margin is ever below ROBUST_MARGIN_PX, which the checker enforces.
 */
import type { Difficulty } from '../difficulty.js';

export interface DiagramProfile {
  canvas: readonly [number, number];
  /** Labelled points in all, the question's included. */
  points: readonly [number, number];
  /** Distractor segments, circles and polygons drawn among the other points. */
  distractors: readonly [number, number];
  fontSize: number;
  /** The answer's margin is drawn from this range (px), see plane.ts. */
  margin: readonly [number, number];
}

/**
 * The least margin any generated answer has: every point the question involves may move this
 * many pixels in any direction and the answer stays. The checker refuses tasks below it.
 */
export const ROBUST_MARGIN_PX = 3;

export const DIAGRAM_PROFILES: Readonly<Record<Difficulty, DiagramProfile>> = {
  1: { canvas: [320, 240], points: [3, 3], distractors: [0, 0], fontSize: 16, margin: [10, 22] },
  2: { canvas: [400, 300], points: [5, 7], distractors: [0, 1], fontSize: 15, margin: [7, 14] },
  3: { canvas: [480, 360], points: [6, 8], distractors: [1, 2], fontSize: 14, margin: [5, 10] },
  4: { canvas: [560, 420], points: [7, 10], distractors: [2, 3], fontSize: 13, margin: [4, 7] },
  5: { canvas: [640, 480], points: [8, 12], distractors: [3, 4], fontSize: 12, margin: [3, 5] },
};

/** The radius of a point's dot (px). */
export const DOT_RADIUS = 3;
/** Stroke width of drawn segments, polygons and circles (px). */
export const STROKE_WIDTH = 2;
/** Clear space between a label's ink box and any other ink (px). */
export const LABEL_CLEARANCE = 3;

/** Point-localisation tolerance (px) on a canvas: 3 % of its longer side, at least 4 px. */
export function locateTolerance(width: number, height: number): number {
  return Math.max(4, Math.round(0.03 * Math.max(width, height)));
}
