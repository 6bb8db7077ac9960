/**
 * A zoom on a converted visual-search benchmark photo whose record carries target boxes, judged by
 * where it looked in the task image. V* is the one such format today: its loader
 * (env/tasks/loaders/vstar.ts) writes `meta.targets` as `[{label, bbox}]`, `bbox` in pixel edges
 * of the task image (x2 = x + w) with `meta.unit: "pixels"`. HR-Bench and VisualProbe carry no
 * boxes, so their calls stay unknown.
 *
 * The crop is the rectangle of the task image the call's output shows, its `original_view`
 * (env/tools/original-view.ts): a zoom_in's, crop's or image_zoom_in_tool's box mapped back through
 * every zoom and crop before it, so a nested crop is judged where it really lies.
 *
 * The rule is containment only. A photo's record says nothing of how large the detail the question
 * asks about is, so the legibility half of the search-scene rule (search-target.ts) cannot be
 * applied, and a good crop is larger than its targets, so IoU would call it off:
 * - on: the crop holds every target box (to VIEW_EDGE_SLACK_PX: nested views have fractional edges);
 * - partly: it overlaps at least one target box but does not hold them all;
 * - off: it shares no area with any target box.
 * A target box that runs past the image's edge (the loader keeps it as annotated, with a warning)
 * is judged by its part inside the image, where the task image's size is known: nothing can crop
 * the rest.
 * The crop IoU (`target_iou`, the trainer's tools/crop_iou) is the plain IoU of the crop with the
 * union box of the target boxes (the smallest box holding them all), in the task image's pixels.
 * Unknown (and no IoU): a record without a non-empty, well-formed `meta.targets` of boxes in pixels,
 * any other tool, or an output that does not say where it lies. Never a guess. Pure.
 */
import type { BBox, PixelMetadata } from '../tools/metadata.js';
import { originalViewOf, viewBox } from '../tools/original-view.js';
import type { ToolCall } from '../tools/types.js';
import { contains, intersect, iou } from './box-overlap.js';
import type { CallTarget, TargetTask } from './target-task.js';
import { SEARCH_ZOOM_TOOLS, VIEW_EDGE_SLACK_PX } from './search-target.js';

/** The size of the task image, to clip target boxes that run past its edge. */
export interface ImageSize {
  width: number;
  height: number;
}

const isBox = (b: unknown): b is BBox => {
  if (typeof b !== 'object' || b === null) return false;
  const { x1, y1, x2, y2 } = b as Record<string, unknown>;
  return [x1, y1, x2, y2].every((v) => typeof v === 'number' && Number.isFinite(v)) && (x1 as number) < (x2 as number) && (y1 as number) < (y2 as number);
};

const isTarget = (t: unknown): t is { label: string; bbox: BBox } =>
  typeof t === 'object' && t !== null && typeof (t as Record<string, unknown>).label === 'string' && isBox((t as Record<string, unknown>).bbox);

/**
 * The record's target boxes in the task image's pixels (clipped to `image` when given), or null
 * when it carries none: a search scene (its `meta.targets` are object indices, search-target.ts),
 * no `meta.targets`, an empty or malformed one, or boxes in other units than pixels.
 */
export function benchmarkTargetBoxes(task: TargetTask, image?: ImageSize): BBox[] | null {
  const meta = task.meta;
  if (task.kind === 'search' || meta === undefined || (meta.unit !== undefined && meta.unit !== 'pixels')) return null;
  const targets: unknown = meta.targets;
  if (!Array.isArray(targets) || targets.length === 0 || !targets.every(isTarget)) return null;
  const boxes = targets.map((t) => t.bbox);
  if (image === undefined) return boxes;
  const clipped = boxes.map((b) => intersect(b, { x1: 0, y1: 0, x2: image.width, y2: image.height }));
  // The loader refuses a box wholly outside its image: one here means another image than the record's.
  return clipped.every((b): b is BBox => b !== null) ? clipped : null;
}

/** The smallest box holding every box given (at least one). */
export function unionBox(boxes: readonly BBox[]): BBox {
  return {
    x1: Math.min(...boxes.map((b) => b.x1)),
    y1: Math.min(...boxes.map((b) => b.y1)),
    x2: Math.max(...boxes.map((b) => b.x2)),
    y2: Math.max(...boxes.map((b) => b.y2)),
  };
}

/** The header's rule for a crop (in the task image's pixels) against the target boxes. */
export function judgeBenchmarkCrop(targets: readonly BBox[], crop: BBox): CallTarget {
  if (!targets.some((t) => intersect(crop, t) !== null)) return 'off';
  return targets.every((t) => contains(crop, t, VIEW_EDGE_SLACK_PX)) ? 'on' : 'partly';
}

/** Where a zoom tool's output lies in the task image, from the metadata it handed back; null for other tools or an output that does not say. */
function cropOf(call: ToolCall, result: PixelMetadata | undefined): BBox | null {
  if (!SEARCH_ZOOM_TOOLS.has(call.name) || result === undefined) return null;
  const view = originalViewOf(result);
  return view === undefined ? null : viewBox(view);
}

/** A call on a record with target boxes: the header's rule for a zoom whose output says where it lies; unknown otherwise. */
export function benchmarkTarget(task: TargetTask, call: ToolCall, result: PixelMetadata | undefined, image?: ImageSize): CallTarget {
  const targets = benchmarkTargetBoxes(task, image);
  const crop = cropOf(call, result);
  return targets === null || crop === null ? 'unknown' : judgeBenchmarkCrop(targets, crop);
}

/** The plain IoU of such a zoom's crop with the union box of the targets; null where benchmarkTarget is unknown. */
export function benchmarkCropIou(task: TargetTask, call: ToolCall, result: PixelMetadata | undefined, image?: ImageSize): number | null {
  const targets = benchmarkTargetBoxes(task, image);
  const crop = cropOf(call, result);
  return targets === null || crop === null ? null : iou(crop, unionBox(targets));
}
