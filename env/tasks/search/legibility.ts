/**
 * The need-for-zoom criterion: how big a feature the question depends on (a label's letters, a
 * shape's corners) is in what the policy sees, before and after the gold zoom.
 *
 * The policy sees an image scaled to fit its pixel budget (`max_pixels`, area): the scale is
 * min(1, √(max_pixels / (W·H))) (the Qwen2-VL processor's smart_resize, without its rounding to
 * 28 px). A feature of native size f px is LEGIBLE in a view of scale s when f·s ≥ the legible
 * size (6 px by default). A task needs the zoom when its answer-bearing feature is illegible in
 * the whole image at the budget, and every feature the question needs is legible in the gold
 * zoom's output (the crop enlarged by the zoom_in tool, planZoom in env/tools/zoom.ts) seen at
 * the same budget.
 *
 * Feature sizes: a label's cap height (DejaVu Sans Bold's H, 730/1000 of the font size); a shape's
 * detail, half its box side (a corner against a curve is about that big). Pure arithmetic.
 */
import type { BBox } from '../../tools/metadata.js';
import { planZoom } from '../../tools/zoom.js';
import { DEJAVU_SANS_BOLD } from '../fonts/dejavu-sans-metrics.js';

/** DejaVu Sans Bold's cap height, as a fraction of the font size (the H's ink top). */
export const CAP_HEIGHT_EM = (DEJAVU_SANS_BOLD.H?.[4] ?? 730) / 1000;

export interface ZoomBudget {
  /** The policy's image budget, in pixels of area. */
  maxPixels: number;
  /** A feature this many pixels tall (after scaling) or more is legible. */
  legiblePx: number;
}

/** The scale at which a W×H image is seen under the budget. */
export function budgetScale(width: number, height: number, maxPixels: number): number {
  return Math.min(1, Math.sqrt(maxPixels / (width * height)));
}

/** A label's legible size at native resolution: its cap height. */
export function capHeight(fontSize: number): number {
  return fontSize * CAP_HEIGHT_EM;
}

/** A shape's legible size at native resolution: half its box's shorter side. */
export function shapeDetail(box: BBox): number {
  return Math.min(box.x2 - box.x1, box.y2 - box.y1) / 2;
}

/**
 * The scale at which the policy sees native pixels in an image of outWidth × outHeight that shows
 * a region `regionWidth` native pixels wide, under the budget: the enlargement (along x), then the
 * budget's downscale.
 */
export function viewScale(regionWidth: number, outWidth: number, outHeight: number, maxPixels: number): number {
  return (outWidth / regionWidth) * budgetScale(outWidth, outHeight, maxPixels);
}

/** The scale at which the policy sees the output of zoom_in(bbox, factor) on a W×H image under the budget; null when the zoom cannot be made. */
export function zoomViewScale(width: number, height: number, bbox: readonly number[], factor: number, maxPixels: number): number | null {
  const plan = planZoom(width, height, bbox, factor);
  if (typeof plan === 'string') return null;
  return viewScale(plan.right - plan.left, plan.outWidth, plan.outHeight, maxPixels);
}

export interface Legibility {
  /** The answer-bearing feature's size in the whole image at the budget (px). */
  atBudget: number;
  /** The smallest needed feature's size in the gold zoom's view at the budget (px); 0 when the zoom cannot be made. */
  inZoom: number;
  /** Whether the task needs the zoom and the zoom suffices: atBudget < legible ≤ inZoom. */
  ok: boolean;
}

/**
 * The criterion for one task: `answerFeature` the native size of the feature the answer is read
 * from, `needed` every feature the question needs (the answer's included), `crop` the gold zoom.
 */
export function judgeLegibility(width: number, height: number, answerFeature: number, needed: readonly number[], crop: readonly number[], factor: number, budget: ZoomBudget): Legibility {
  const atBudget = answerFeature * budgetScale(width, height, budget.maxPixels);
  const view = zoomViewScale(width, height, crop, factor, budget.maxPixels) ?? 0;
  const inZoom = Math.min(...needed) * view;
  return { atBudget, inZoom, ok: atBudget < budget.legiblePx && inZoom >= budget.legiblePx };
}
