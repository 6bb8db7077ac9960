/**
 * Whether a tool call that ran acted on the task's target: "on", "partly", "off", or "unknown"
 * where the task says nothing about its target. A call rate is not evidence of use (issue 43):
 * a policy that masks bar "F" when asked about bar "E" calls a tool and shows the wrong bar.
 *
 * The target comes only from what the task record knows, never from a guess:
 * - band tools (focus_on_<family>_with_<mode>) on tasks with gold calls (the generator's charts
 *   and tables, env/tasks/gold.ts): the call's labels against the gold labels of the family the
 *   call acted on (after VTool-R1's binding of rows/columns to a chart's y/x values, as the tool
 *   resolves it). Equal sets: on; overlapping: partly; disjoint (an empty selection included):
 *   off. A table's first column (the row keys) is left out on both sides when the gold names
 *   other columns: gold masks keep it only so the rows stay identifiable. A family no gold call
 *   uses: off (the gold says what to look at, and it is not there).
 * - point tools (draw_line, draw_segment, draw_circle, mark_point) on geometry diagrams: the
 *   points named. On: the same tool over the same points as a gold call (draw_circle: the same
 *   centre and the same point on the circle). Partly: it names at least one of the question's
 *   points (query.points) otherwise. Off: none of them. A coordinate [x, y] names the labelled
 *   point within 3 px of it (the dot's radius), or none.
 * - zoom_in: the crop (the box clipped and grown to 28 px as the tool crops it) against the
 *   target in the image the call read: on a chart or table the box around the gold bands (where
 *   gold columns and gold rows cross, when the gold has both); on a diagram the question's
 *   points. Box: on at IoU ≥ 0.5, partly when they overlap at all, off otherwise (also when an
 *   earlier zoom cropped the target away). Points: on when the crop holds every one, partly some,
 *   off none.
 * - zoom_in and crop (and its alias image_zoom_in_tool) on search scenes (search-target.ts): the
 *   rectangle of the task image the call's output shows (through every earlier zoom and crop)
 *   against the record's exact target box. A good crop is larger than its target, so the rule is
 *   the generator's need-for-zoom criterion, not IoU: on when the crop holds the whole target box
 *   and the question's features are legible in the output at the task's pixel budget, partly when
 *   it overlaps the target otherwise (cuts some away, or shows it too small to read), off when it
 *   shares nothing with it. The other tools on a search scene are unknown.
 * - zoom_in, crop and image_zoom_in_tool on a converted benchmark photo whose record carries target
 *   boxes (V*'s `meta.targets`, benchmark-target.ts): the same rectangle of the task image, by
 *   containment only (a photo's record gives no feature sizes to judge legibility by): on when the
 *   crop holds every target box, partly when it overlaps at least one but not all of them, off
 *   when it overlaps none. Its crop IoU is against the union box of the targets.
 * - Everything else is unknown: converted data sets without target boxes carry no gold calls or
 *   grounding boxes (HR-Bench, VisualProbe, ChartQA's pies ...), the locate family has no gold
 *   call, and the line, mark and OCR tools on charts have no target.
 * Pure.
 */
import { lookupLabel } from '../tools/labels.js';
import { intersect, iou } from './box-overlap.js';
import { benchmarkCropIou, benchmarkTarget, benchmarkTargetBoxes, type ImageSize } from './benchmark-target.js';
import { SEARCH_ZOOM_TOOLS, searchCropIou, searchTarget } from './search-target.js';
import { BAND_FAMILIES, bandKey, type BandFamily, type BBox, type PixelMetadata, type PointXY } from '../tools/metadata.js';
import { clipRegion } from '../tools/region.js';
import type { ToolCall } from '../tools/types.js';
import { ZOOM_MIN_SIDE } from '../tools/zoom.js';
import type { CallTarget, TargetTask } from './target-task.js';

export type { CallTarget, TargetTask } from './target-task.js';

export { iou } from './box-overlap.js';

/** What the call read: the image's size and its metadata then (moved by earlier zooms). */
export interface CallScene {
  meta: PixelMetadata;
  width: number;
  height: number;
  /** The metadata the call handed back, where it moved pixels (zoom_in, crop): where its output lies in the task image. */
  result?: PixelMetadata;
  /** The task image's size, where the caller knows it: a benchmark's target box past its edge is judged by its part inside (benchmark-target.ts). */
  taskSize?: ImageSize;
}


/** A zoom is on target from this intersection-over-union with the target box (COCO's usual 0.5). */
export const ZOOM_ON_TARGET_IOU = 0.5;
/** A coordinate names a labelled point within this distance (px): the radius of the point's dot. */
export const POINT_SNAP_PX = 3;

const POINT_TOOLS = new Set(['draw_line', 'draw_segment', 'draw_circle', 'mark_point']);
const FOCUS_NAME = /^focus_on_(columns|rows|x_values|y_values)_with_(mask|draw|highlight)$/u;
/** VTool-R1's binding, as the focus tools apply it: rows/columns act on a chart's y/x values. */
const BINDING: Partial<Record<BandFamily, BandFamily>> = { rows: 'y_values', columns: 'x_values' };

export function callTarget(task: TargetTask, call: ToolCall, scene: CallScene): CallTarget {
  if (task.kind === 'search') return searchTarget(task, call, scene.result);
  if (SEARCH_ZOOM_TOOLS.has(call.name) && benchmarkTargetBoxes(task) !== null) return benchmarkTarget(task, call, scene.result, scene.taskSize);
  const focus = FOCUS_NAME.exec(call.name);
  if (focus) return focusTarget(task, focus[1] as BandFamily, call.arguments[focus[1] as BandFamily], scene.meta);
  if (call.name === 'zoom_in') return zoomTarget(task, call.arguments, scene);
  if (POINT_TOOLS.has(call.name) && task.kind === 'geometry') return pointTarget(task, call, scene);
  return 'unknown';
}

/** Equal sets: on; overlapping: partly; disjoint: off. */
export function compareSets(called: ReadonlySet<string>, wanted: ReadonlySet<string>): CallTarget {
  const shared = [...called].filter((label) => wanted.has(label)).length;
  if (shared === called.size && shared === wanted.size) return 'on';
  return shared > 0 ? 'partly' : 'off';
}

function bandsOf(meta: PixelMetadata, family: BandFamily): Record<string, BBox> | undefined {
  const bands = meta[bandKey(family)];
  return bands !== undefined && Object.keys(bands).length > 0 ? bands : undefined;
}

/** The family a focus call acts on: its own, or the one VTool-R1 binds it to; null when neither is there. */
function actedFamily(meta: PixelMetadata, family: BandFamily): BandFamily | null {
  if (bandsOf(meta, family)) return family;
  const bound = BINDING[family];
  return bound && bandsOf(meta, bound) ? bound : null;
}

/** The gold labels by band family (a gold call's family is its tool's own: the generator never relies on the binding). */
function goldLabels(task: TargetTask): Map<BandFamily, Set<string>> {
  const byFamily = new Map<BandFamily, Set<string>>();
  for (const gold of task.gold ?? []) {
    const match = FOCUS_NAME.exec(gold.name);
    if (!match) continue;
    const family = match[1] as BandFamily;
    const labels = gold.arguments[family];
    if (!Array.isArray(labels)) continue;
    const set = byFamily.get(family) ?? new Set<string>();
    for (const label of labels) if (typeof label === 'string') set.add(label);
    byFamily.set(family, set);
  }
  // The row-key column stays in gold masks only to keep rows readable: it is not the target.
  const key = task.table?.columns[0];
  const columns = byFamily.get('columns');
  if (key !== undefined && columns && columns.has(key) && columns.size > 1) columns.delete(key);
  return byFamily;
}

function focusTarget(task: TargetTask, family: BandFamily, requested: unknown, meta: PixelMetadata): CallTarget {
  const gold = goldLabels(task);
  if (gold.size === 0) return 'unknown';
  const acted = actedFamily(meta, family);
  if (acted === null || !Array.isArray(requested)) return 'unknown';
  const labels = Object.keys(bandsOf(meta, acted) ?? {});
  const called = new Set<string>();
  for (const label of requested) {
    if (typeof label !== 'string') continue;
    const found = lookupLabel(label, labels);
    if (found.kind === 'found') called.add(found.match.matched);
  }
  // The row-key column counts on neither side when goldLabels left it out of the gold.
  const key = task.table?.columns[0];
  const goldColumns = gold.get('columns');
  if (acted === 'columns' && key !== undefined && goldColumns !== undefined && !goldColumns.has(key)) called.delete(key);
  return compareSets(called, gold.get(acted) ?? new Set());
}

/** The labelled point a reference names: a label matched as the tools match it, or a coordinate within POINT_SNAP_PX of a point. */
export function namedPoint(ref: unknown, points: Readonly<Record<string, PointXY>>): string | null {
  const labels = Object.keys(points);
  if (typeof ref === 'string') {
    const found = lookupLabel(ref, labels);
    return found.kind === 'found' ? found.match.matched : null;
  }
  if (!Array.isArray(ref) || ref.length !== 2 || !ref.every((v) => typeof v === 'number' && Number.isFinite(v))) return null;
  const [x, y] = [Math.round(ref[0] as number), Math.round(ref[1] as number)];
  let best: [string | null, number] = [null, Infinity];
  for (const [label, p] of Object.entries(points)) {
    const d = Math.hypot(p.x - x, p.y - y);
    if (d <= POINT_SNAP_PX && d < best[1]) best = [label, d];
  }
  return best[0];
}

/** The point references of a point-tool call, in argument order (a circle: centre, then the point on it). */
function pointRefs(call: ToolCall): unknown[] {
  const args = call.arguments;
  if (call.name === 'draw_line') return Array.isArray(args.through) ? args.through : [];
  if (call.name === 'draw_segment') return Array.isArray(args.endpoints) ? args.endpoints : [];
  if (call.name === 'draw_circle') return args.through === undefined ? [args.center] : [args.center, args.through];
  if (call.name === 'mark_point') return [args.point ?? [args.x, args.y]];
  return [];
}

/** A construction's identity: the tool and its points (a line or segment is unordered, a circle's centre is not). */
function constructionKey(name: string, points: readonly (string | null)[]): string | null {
  if (points.some((p) => p === null)) return null;
  const named = points as string[];
  return `${name}:${name === 'draw_circle' ? named.join('→') : [...named].sort().join('|')}`;
}

function pointTarget(task: TargetTask, call: ToolCall, scene: CallScene): CallTarget {
  const gold = task.gold ?? [];
  if (gold.length === 0) return 'unknown';
  const points = scene.meta.points ?? {};
  const named = pointRefs(call).map((ref) => namedPoint(ref, points));
  // Gold calls name points by their labels on the task image; a zoom since keeps those labels.
  const goldKeys = new Set(gold.map((g) => constructionKey(g.name, pointRefs(g).map((ref) => (typeof ref === 'string' ? ref : null)))));
  const key = constructionKey(call.name, named);
  if (key !== null && goldKeys.has(key)) return 'on';
  const question = new Set(task.query?.points ?? gold.flatMap((g) => pointRefs(g).filter((r): r is string => typeof r === 'string')));
  return named.some((p) => p !== null && question.has(p)) ? 'partly' : 'off';
}

/** The box around the gold bands in the image the call read, or null when they are all cropped away. */
function goldBox(task: TargetTask, meta: PixelMetadata): BBox | null {
  const gold = goldLabels(task);
  const union = (family: BandFamily): BBox | null => {
    const bands = bandsOf(meta, family) ?? {};
    const boxes = [...(gold.get(family) ?? [])].map((label) => bands[label]).filter((b): b is BBox => b !== undefined);
    if (boxes.length === 0) return null;
    return { x1: Math.min(...boxes.map((b) => b.x1)), y1: Math.min(...boxes.map((b) => b.y1)), x2: Math.max(...boxes.map((b) => b.x2)), y2: Math.max(...boxes.map((b) => b.y2)) };
  };
  const boxes = BAND_FAMILIES.filter((family) => gold.has(family)).map(union);
  if (boxes.some((b) => b === null) || boxes.length === 0) return null;
  // Columns and rows together: the cells where they cross.
  return (boxes as BBox[]).reduce<BBox | null>((acc, b) => (acc === null ? null : intersect(acc, b)), boxes[0] as BBox);
}

/** The crop a zoom_in with these arguments takes of a width×height image, as the tool takes it; null when the box is unusable. */
export function zoomCrop(args: Record<string, unknown>, width: number, height: number): BBox | null {
  const bbox = args.bbox;
  if (!Array.isArray(bbox) || bbox.length !== 4 || !bbox.every((v) => typeof v === 'number' && Number.isFinite(v))) return null;
  const region = clipRegion(width, height, bbox as number[], ZOOM_MIN_SIDE);
  return typeof region === 'string' ? null : { x1: region.left, y1: region.top, x2: region.right, y2: region.bottom };
}

/**
 * The intersection-over-union of a zoom_in's crop with the target box in the image the call read
 * (the box zoomTarget judges it by): on a chart or table with gold calls, the box around the gold
 * bands; 0 when an earlier zoom cropped the target away. On a search scene, a zoom_in's or crop's
 * rectangle of the task image against the record's target box (search-target.ts; IoU is the same
 * in either image's pixels, a zoom scaling both boxes alike). On a converted benchmark photo with
 * target boxes, a zoom tool's rectangle of the task image against the union box of its targets
 * (benchmark-target.ts). Null where there is no target box (a
 * geometry diagram's target is points, a task without gold calls has none, an unusable box crops
 * nothing) and for every other tool: never a guess. The trainer's `tools/crop_iou` averages it.
 */
export function zoomTargetIou(task: TargetTask, call: ToolCall, scene: CallScene): number | null {
  if (task.kind === 'search') return searchCropIou(task, call, scene.result);
  if (SEARCH_ZOOM_TOOLS.has(call.name) && benchmarkTargetBoxes(task) !== null) return benchmarkCropIou(task, call, scene.result, scene.taskSize);
  if (call.name !== 'zoom_in' || task.kind === 'geometry' || goldLabels(task).size === 0) return null;
  const crop = zoomCrop(call.arguments, scene.width, scene.height);
  if (crop === null) return null;
  const target = goldBox(task, scene.meta);
  return target === null ? 0 : iou(crop, target);
}

function zoomTarget(task: TargetTask, args: Record<string, unknown>, scene: CallScene): CallTarget {
  const crop = zoomCrop(args, scene.width, scene.height);
  if (task.kind === 'geometry') {
    const wanted = task.query?.points ?? [];
    if ((task.gold ?? []).length === 0 || wanted.length === 0 || crop === null) return 'unknown';
    const points = scene.meta.points ?? {};
    const inside = wanted.filter((label) => {
      const p = points[label];
      return p !== undefined && p.x >= crop.x1 && p.x < crop.x2 && p.y >= crop.y1 && p.y < crop.y2;
    }).length;
    return inside === wanted.length ? 'on' : inside > 0 ? 'partly' : 'off';
  }
  if (goldLabels(task).size === 0 || crop === null) return 'unknown';
  const target = goldBox(task, scene.meta);
  if (target === null) return 'off';
  const overlap = iou(crop, target);
  return overlap >= ZOOM_ON_TARGET_IOU ? 'on' : overlap > 0 ? 'partly' : 'off';
}
