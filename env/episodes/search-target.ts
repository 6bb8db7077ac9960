/**
 * A zoom on a search scene (env/tasks/search/), judged by where it looked in the task image.
 *
 * The target is the record's `meta.target_bbox`, exact: the union of the boxes of the objects the
 * question needs (every counted one for how_many, the named object and its neighbour for next_to).
 * The crop is the rectangle of the task image the call's output shows, its `original_view`
 * (env/tools/original-view.ts): a zoom_in's box or a crop's, mapped back through every zoom and
 * crop before it exactly as the tools cut, so a nested crop is judged where it really lies.
 *
 * A good crop is larger than its target by design (the gold crop is the target grown by an
 * object's side on every edge), so plain IoU would call every good crop off. The rule is the
 * generator's own need-for-zoom criterion (search/legibility.ts, search/zoom-need.ts), applied to
 * the call's output:
 * - on: the crop holds the whole target box, and every feature the question needs (a label's cap
 *   height, a shape's detail) is legible in the output as the policy sees it: its native size ×
 *   the view's scale (the output's width over the crop's, then the budget's downscale) ≥
 *   legible_px. The budget is the one the task was made for (`generator.max_pixels` and
 *   `legible_px`, else 50176 and 6), as `data check` judges it; a task the checker passes has its
 *   gold zoom on.
 * - partly: the crop overlaps the target but cuts part of it away, or holds it too small to read
 *   (the whole image at factor 1 holds every target and reads none).
 * - off: the crop shares no area with the target.
 * The crop IoU (`target_iou`, the trainer's tools/crop_iou) stays the plain IoU of crop and target
 * box, as for charts: the gold crop's is the target's share of it, well under 1 on purpose.
 * Unknown (and no IoU): a record without a well-formed target_bbox, objects, targets, label size
 * and search family, or an output that does not say where it lies. Pure.
 */
import { CROP_ALIAS } from '../tools/crop.js';
import type { BBox, PixelMetadata } from '../tools/metadata.js';
import { originalViewOf, viewBox, type OriginalView } from '../tools/original-view.js';
import type { ToolCall } from '../tools/types.js';
import { budgetOf } from '../tasks/search/check-search.js';
import { SEARCH_FAMILIES, type SearchFamily } from '../tasks/search/families.js';
import { viewScale, type ZoomBudget } from '../tasks/search/legibility.js';
import type { SearchObject } from '../tasks/search/objects.js';
import { searchFeatures } from '../tasks/search/zoom-need.js';
import { contains, intersect, iou } from './box-overlap.js';
import type { CallTarget, TargetTask } from './target-task.js';

/** The tools that cut a region out of the task image: judged against the target. */
export const SEARCH_ZOOM_TOOLS: ReadonlySet<string> = new Set(['zoom_in', 'crop', CROP_ALIAS]);

/** Edges of nested views are fractions: a crop holds a target edge it misses by less than this (px). */
export const VIEW_EDGE_SLACK_PX = 1e-6;

/** What the record says about the target: its box, and the native sizes of the features the question needs. */
export interface SearchGoal {
  target: BBox;
  needed: number[];
}

const isBox = (b: unknown): b is BBox => {
  if (typeof b !== 'object' || b === null) return false;
  const { x1, y1, x2, y2 } = b as Record<string, unknown>;
  return [x1, y1, x2, y2].every((v) => typeof v === 'number' && Number.isFinite(v)) && (x1 as number) < (x2 as number) && (y1 as number) < (y2 as number);
};

/** The task's target and needed features, or null when the record does not carry them all. */
export function searchGoal(task: TargetTask): SearchGoal | null {
  const meta = task.meta;
  const family = task.query?.family;
  if (task.kind !== 'search' || meta === undefined || !isBox(meta.target_bbox)) return null;
  if (family === undefined || !(SEARCH_FAMILIES as readonly string[]).includes(family)) return null;
  const { objects, targets, label_font_size: fontSize } = meta;
  if (!Array.isArray(objects) || !Array.isArray(targets) || targets.length === 0 || typeof fontSize !== 'number') return null;
  const known = (i: unknown) => Number.isInteger(i) && (i as number) >= 0 && (i as number) < objects.length && isBox((objects[i as number] as SearchObject | undefined)?.bbox);
  if (!targets.every(known)) return null;
  const features = searchFeatures({ family: family as SearchFamily, objects: objects as SearchObject[], targets: targets as number[], fontSize });
  return { target: meta.target_bbox, needed: features.needed };
}

/** The rule of the header, for a crop of the task image shown as `view` describes. */
export function judgeSearchCrop(goal: SearchGoal, view: OriginalView, budget: ZoomBudget): CallTarget {
  const crop = viewBox(view);
  if (intersect(crop, goal.target) === null) return 'off';
  if (!contains(crop, goal.target, VIEW_EDGE_SLACK_PX)) return 'partly';
  const seen = Math.min(...goal.needed) * viewScale(crop.x2 - crop.x1, view.width, view.height, budget.maxPixels);
  return seen >= budget.legiblePx ? 'on' : 'partly';
}

/** Where a zoom tool's output lies in the task image, from the metadata it handed back; null for other tools or an output that does not say. */
function zoomView(call: ToolCall, result: PixelMetadata | undefined): OriginalView | null {
  if (!SEARCH_ZOOM_TOOLS.has(call.name) || result === undefined) return null;
  return originalViewOf(result) ?? null;
}

/** A call on a search task: judged by the header's rule when it is a zoom whose output says where it lies; unknown otherwise. */
export function searchTarget(task: TargetTask, call: ToolCall, result: PixelMetadata | undefined): CallTarget {
  const goal = searchGoal(task);
  const view = zoomView(call, result);
  return goal === null || view === null ? 'unknown' : judgeSearchCrop(goal, view, budgetOf(task));
}

/** A zoom's crop on a search task: its plain IoU with the target box, in the task image's pixels; null where searchTarget is unknown. */
export function searchCropIou(task: TargetTask, call: ToolCall, result: PixelMetadata | undefined): number | null {
  const goal = searchGoal(task);
  const view = zoomView(call, result);
  return goal === null || view === null ? null : iou(viewBox(view), goal.target);
}
