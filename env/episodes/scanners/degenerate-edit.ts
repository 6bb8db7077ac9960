/**
 * degenerate_edit: a call that ran but showed nothing new.
 * - An editing tool (every tool but zoom_in, which always makes a new image, and ocr, which
 *   reads) whose output image is the image it read, byte for byte (`image_out` = `image_in`, both
 *   content hashes): a mask that keeps every band or selects none, a highlight of nothing. A
 *   mask cannot hide every band: by the focus tools' rule an empty selection leaves the image as
 *   it was, so that case is this one too.
 * - zoom_in on the task image into empty space: the crop (as the tool takes it) overlaps none of
 *   what the task's metadata locates — the figure box, any band, any labelled point. Decided only
 *   where the caller gives the task image's metadata (ScanContext) and that metadata locates
 *   something, and only for zooms on the task image itself, whose pixels the metadata describes.
 */
import { zoomCrop } from '../call-target.js';
import { OCR_TOOL_NAME } from '../../grounding/ocr-tool.js';
import { BAND_FAMILIES, bandKey, type BBox, type PixelMetadata } from '../../tools/metadata.js';
import type { CallRecord, Trajectory } from '../trajectory.js';
import { assistantTurnsOf, type ScanContext, type Scanner } from './types.js';

/** Everything the metadata places on the image: the figure, the bands, each point as its pixel. */
export function contentBoxes(meta: PixelMetadata): BBox[] {
  const boxes: BBox[] = meta.figure_bbox ? [meta.figure_bbox] : [];
  for (const family of BAND_FAMILIES) boxes.push(...Object.values(meta[bandKey(family)] ?? {}));
  for (const p of Object.values(meta.points ?? {})) boxes.push({ x1: p.x, y1: p.y, x2: p.x + 1, y2: p.y + 1 });
  return boxes;
}

const overlaps = (a: BBox, b: BBox): boolean => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;

function zoomOnEmptySpace(call: CallRecord, record: Trajectory, context: ScanContext): boolean {
  const scene = context.taskImage;
  if (scene === undefined || call.image_in !== record.task.image) return false;
  const content = contentBoxes(scene.meta);
  const crop = zoomCrop(call.arguments, scene.width, scene.height);
  return content.length > 0 && crop !== null && !content.some((box) => overlaps(crop, box));
}

export const degenerateEdit: Scanner = {
  name: 'degenerate_edit',
  description: 'an edit changed no pixel, or a zoom showed only empty space',
  fires(record, context) {
    return assistantTurnsOf(record).some((turn) =>
      turn.calls.some((call) => {
        if (!call.ok) return false;
        if (call.name === 'zoom_in') return zoomOnEmptySpace(call, record, context);
        return call.name !== OCR_TOOL_NAME && call.image_out !== undefined && call.image_out === call.image_in;
      }),
    );
  },
};
