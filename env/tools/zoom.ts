/**
 * zoom_in: crop a box of the current image and enlarge it, for small text and thin bars.
 *
 * Precisely, for bbox [x1, y1, x2, y2] in pixels of the current W×H image and factor f (1–4,
 * default 2):
 *  1. x2 ≤ x1 or y2 ≤ y1, or a box with no area inside the image → E4.
 *  2. Clip to the image, then round outwards to whole pixels (floor x1/y1, ceil x2/y2).
 *  3. A side shorter than ZOOM_MIN_SIDE (28 px, DeepEyes' minimum) is grown to 28 px (or to the
 *     whole image side, when the image is smaller) around the box's centre: start =
 *     round(centre − 28/2), then shifted to lie inside the image.
 *  4. Scale s = f · max(1, 28 / short side of the crop): the crop is enlarged f times, and its
 *     short side always reaches 28·f. Output size = round(w·s) × round(h·s).
 *     Only when that would exceed ZOOM_MAX_SIDE (4096 px) on the long side is s lowered to
 *     4096 / long side: memory wins over the factor.
 *  5. Resampled with the Catmull-Rom cubic kernel (resize.ts), in integer arithmetic: the same
 *     bytes on every machine. A factor of 1 returns the crop itself.
 * The outcome carries the metadata moved into the new image's coordinates (bands that leave the
 * crop are dropped), since every later call speaks in the new image's pixels, and the new image's
 * place in the task image (`original_view`, original-view.ts).
 */
import type { RgbImage } from '../core/image.js';
import { releasePixels } from '../core/pixel-pool.js';
import { BAND_FAMILIES, bandKey, type BBox, type PixelMetadata, type PointXY } from './metadata.js';
import { inlineJson, toolError, toolSuccess } from './outcome.js';
import { composeView, originalViewOf } from './original-view.js';
import { clipRegion, type ZoomPlan } from './region.js';
import { cropImage, resizeCubic } from './resize.js';
import type { ToolDefinition, ToolOutcome } from './types.js';

export const ZOOM_MIN_SIDE = 28;
export const ZOOM_MAX_SIDE = 4096;
export const ZOOM_DEFAULT_FACTOR = 2;

const NAME = 'zoom_in';

/** The crop in source pixels (half-open; `grown` when a side was grown to the 28 px minimum) and the output size. */
export type { ZoomPlan } from './region.js';

/** Where a zoom will crop and how big its output will be, or the reason it cannot be done. */
export function planZoom(width: number, height: number, bbox: readonly number[], factor: number): ZoomPlan | string {
  const [x1, y1, x2, y2] = bbox as [number, number, number, number];
  const shown = inlineJson(bbox);
  if (![x1, y1, x2, y2, factor].every(Number.isFinite)) return `bbox and factor must be finite numbers; got bbox ${shown}, factor ${factor}`;
  const region = clipRegion(width, height, bbox, ZOOM_MIN_SIDE);
  if (typeof region === 'string') return region;
  const { left, top, right, bottom, grown } = region;
  const w = right - left;
  const h = bottom - top;
  let scale = factor * Math.max(1, ZOOM_MIN_SIDE / Math.min(w, h));
  if (Math.max(w, h) * scale > ZOOM_MAX_SIDE) scale = ZOOM_MAX_SIDE / Math.max(w, h);
  return {
    left,
    top,
    right,
    bottom,
    outWidth: Math.max(1, Math.round(w * scale)),
    outHeight: Math.max(1, Math.round(h * scale)),
    grown,
  };
}

/** The metadata of the zoomed image: boxes moved and scaled, bands outside the crop dropped. */
export function zoomMetadata(meta: PixelMetadata, plan: ZoomPlan): PixelMetadata {
  const sx = plan.outWidth / (plan.right - plan.left);
  const sy = plan.outHeight / (plan.bottom - plan.top);
  const move = (box: BBox): BBox | null => {
    const moved = {
      x1: Math.round((Math.max(box.x1, plan.left) - plan.left) * sx),
      y1: Math.round((Math.max(box.y1, plan.top) - plan.top) * sy),
      x2: Math.round((Math.min(box.x2, plan.right) - plan.left) * sx),
      y2: Math.round((Math.min(box.y2, plan.bottom) - plan.top) * sy),
    };
    return moved.x1 < moved.x2 && moved.y1 < moved.y2 ? moved : null;
  };
  const out: PixelMetadata = { ...meta, unit: 'pixels' };
  // A resampled image is no longer a rectangle of crop's source (crop.ts): the chain ends here.
  delete out.crop_view;
  // Where it lies in the task image survives any resample (original-view.ts).
  out.original_view = composeView(originalViewOf(meta), plan);
  for (const family of BAND_FAMILIES) {
    const key = bandKey(family);
    const bands = meta[key];
    if (bands === undefined) continue;
    const kept: Record<string, BBox> = {};
    for (const [label, box] of Object.entries(bands)) {
      const moved = move(box);
      if (moved) kept[label] = moved;
    }
    if (Object.keys(kept).length > 0) out[key] = kept;
    else delete out[key];
  }
  if (meta.figure_bbox) {
    const moved = move(meta.figure_bbox);
    if (moved) out.figure_bbox = moved;
    else delete out.figure_bbox;
  }
  if (meta.points) {
    // A point is its pixel's centre: the centre moves and scales, and the point becomes the output
    // pixel that holds it. Points outside the crop are dropped (a label call on them is then an E4).
    const kept: Record<string, PointXY> = {};
    for (const [label, p] of Object.entries(meta.points)) {
      if (p.x < plan.left || p.x >= plan.right || p.y < plan.top || p.y >= plan.bottom) continue;
      kept[label] = {
        x: Math.min(plan.outWidth - 1, Math.floor((p.x + 0.5 - plan.left) * sx)),
        y: Math.min(plan.outHeight - 1, Math.floor((p.y + 0.5 - plan.top) * sy)),
      };
    }
    out.points = kept;
  }
  return out;
}

export const zoomTool: ToolDefinition = {
  name: NAME,
  description:
    'Crops a box of the current image and enlarges it, to read small text, thin bars or crowded labels. ' +
    'Give the box as [x1, y1, x2, y2] in pixels of the current image (left, top, right, bottom, from the top-left corner); ' +
    'boxes smaller than 28 px are widened to 28 px. Returns the enlarged crop; later coordinates refer to this new image.',
  parameters: {
    type: 'object',
    properties: {
      bbox: {
        type: 'array',
        items: { type: 'number' },
        minItems: 4,
        maxItems: 4,
        description: 'four numbers [x1, y1, x2, y2]: the box to zoom into, in pixels of the current image (left, top, right, bottom)',
      },
      factor: {
        type: 'number',
        minimum: 1,
        maximum: 4,
        default: ZOOM_DEFAULT_FACTOR,
        description: 'a number from 1 to 4: how many times to enlarge the crop (default 2)',
      },
    },
    required: ['bbox'],
    additionalProperties: false,
  },
  exampleArguments(meta?: PixelMetadata): Record<string, unknown> {
    const f = meta?.figure_bbox;
    return { bbox: f ? [f.x1, f.y1, Math.round((f.x1 + f.x2) / 2), Math.round((f.y1 + f.y2) / 2)] : [40, 60, 240, 160], factor: 2 };
  },
  async apply(image: RgbImage, args: Record<string, unknown>, meta: PixelMetadata): Promise<ToolOutcome> {
    const bbox = args.bbox as number[];
    const factor = (args.factor as number | undefined) ?? ZOOM_DEFAULT_FACTOR;
    const plan = planZoom(image.width, image.height, bbox, factor);
    if (typeof plan === 'string') return toolError('E4', NAME, plan);
    const crop = cropImage(image, plan.left, plan.top, plan.right, plan.bottom);
    const sameSize = plan.outWidth === crop.width && plan.outHeight === crop.height;
    const zoomed = sameSize ? crop : resizeCubic(crop, plan.outWidth, plan.outHeight);
    if (zoomed !== crop) releasePixels(crop); // read by the resampler only: nobody else holds it
    const region = `[${plan.left}, ${plan.top}, ${plan.right}, ${plan.bottom}]`;
    const grown = plan.grown ? ` (grown to the ${ZOOM_MIN_SIDE} px minimum)` : '';
    const summary = `zoomed into ${region}${grown}: the new image is ${zoomed.width}×${zoomed.height}; coordinates in later calls refer to this new image.`;
    return toolSuccess(zoomed, summary, [], zoomMetadata(meta, plan));
  },
};
