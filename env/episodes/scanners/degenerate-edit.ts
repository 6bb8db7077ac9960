/**
 * degenerate_edit: a call that ran but showed nothing new.
 * - An editing tool (every tool but zoom_in, which always makes a new image, and ocr, which
 *   reads) whose output image is the image it read, byte for byte (`image_out` = `image_in`, both
 *   content hashes): a mask that keeps every band or selects none, a highlight of nothing, a crop
 *   of the whole image at its own size. A mask cannot hide every band: by the focus tools' rule an
 *   empty selection leaves the image as it was, so that case is this one too.
 * - zoom_in, crop or image_zoom_in_tool on the task image into empty space: the region the tool
 *   cuts (zoom_in: its box clipped and grown to 28 px; crop: its box read in the image as shown
 *   under the episode's pixel bounds, then rounded out and grown, as crop.ts cuts) overlaps none of
 *   what the task's metadata locates — the figure box, any band, any labelled point, and on a
 *   search scene any object (`meta.objects`, every shape drawn: the rest is background). Decided
 *   only where the caller gives the task image's metadata (ScanContext) and that metadata locates
 *   something, and only for calls on the task image itself, whose pixels the metadata describes: a
 *   nested call's region in the task image is not in the record.
 * A converted benchmark photo's `meta.targets` (V*) are left out on purpose: they locate the
 * objects asked about, not everything in the photo, so a crop beside them shows the scene, not
 * empty space; the call is off target (call-target.ts), and off_target_call says so.
 */
import { zoomCrop } from '../call-target.js';
import { SEARCH_ZOOM_TOOLS } from '../search-target.js';
import { OCR_TOOL_NAME } from '../../grounding/ocr-tool.js';
import { CROP_ALIAS, DEFAULT_SHOWN_BOUNDS, planCrop } from '../../tools/crop.js';
import { BAND_FAMILIES, bandKey, type BBox, type PixelMetadata } from '../../tools/metadata.js';
import type { CallRecord, Trajectory } from '../trajectory.js';
import { assistantTurnsOf, type ScanContext, type Scanner } from './types.js';

const isBox = (b: unknown): b is BBox => {
  if (typeof b !== 'object' || b === null) return false;
  const { x1, y1, x2, y2 } = b as Record<string, unknown>;
  return [x1, y1, x2, y2].every((v) => typeof v === 'number' && Number.isFinite(v)) && (x1 as number) < (x2 as number) && (y1 as number) < (y2 as number);
};

/** Every search-scene object's box (`meta.objects[].bbox`, search/objects.ts); none elsewhere. */
function objectBoxes(meta: PixelMetadata): BBox[] {
  const objects: unknown = meta.objects;
  if (!Array.isArray(objects)) return [];
  return objects.map((o: unknown) => (typeof o === 'object' && o !== null ? (o as { bbox?: unknown }).bbox : undefined)).filter(isBox);
}

/** Everything the metadata places on the image: the figure, the bands, each point as its pixel, each search object. */
export function contentBoxes(meta: PixelMetadata): BBox[] {
  const boxes: BBox[] = meta.figure_bbox ? [meta.figure_bbox] : [];
  for (const family of BAND_FAMILIES) boxes.push(...Object.values(meta[bandKey(family)] ?? {}));
  for (const p of Object.values(meta.points ?? {})) boxes.push({ x1: p.x, y1: p.y, x2: p.x + 1, y2: p.y + 1 });
  boxes.push(...objectBoxes(meta));
  return boxes;
}

/** The region of a width×height task image a zoom tool's call cuts, as the tool cuts it; null when its box is unusable (the call would have failed). */
export function regionOnTaskImage(call: Pick<CallRecord, 'name' | 'arguments'>, width: number, height: number, bounds = DEFAULT_SHOWN_BOUNDS): BBox | null {
  if (call.name === 'zoom_in') return zoomCrop(call.arguments, width, height);
  const bbox = call.name === CROP_ALIAS ? call.arguments.bbox_2d : call.arguments.bbox;
  if (!Array.isArray(bbox) || bbox.length !== 4 || !bbox.every((v) => typeof v === 'number')) return null;
  const size = { width, height };
  const plan = planCrop(size, { left: 0, top: 0, right: width, bottom: height }, size, bbox as number[], bounds);
  return typeof plan === 'string' ? null : { x1: plan.left, y1: plan.top, x2: plan.right, y2: plan.bottom };
}

const overlaps = (a: BBox, b: BBox): boolean => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;

function zoomOnEmptySpace(call: CallRecord, record: Trajectory, context: ScanContext): boolean {
  const scene = context.taskImage;
  if (scene === undefined || call.image_in !== record.task.image) return false;
  const content = contentBoxes(scene.meta);
  const crop = regionOnTaskImage(call, scene.width, scene.height, context.bounds);
  return content.length > 0 && crop !== null && !content.some((box) => overlaps(crop, box));
}

export const degenerateEdit: Scanner = {
  name: 'degenerate_edit',
  description: 'an edit changed no pixel, or a zoom showed only empty space',
  fires(record, context) {
    return assistantTurnsOf(record).some((turn) =>
      turn.calls.some((call) => {
        if (!call.ok) return false;
        if (SEARCH_ZOOM_TOOLS.has(call.name) && zoomOnEmptySpace(call, record, context)) return true;
        if (call.name === 'zoom_in') return false;
        return call.name !== OCR_TOOL_NAME && call.image_out !== undefined && call.image_out === call.image_in;
      }),
    );
  },
};
