/**
 * crop (alias: DeepEyes' `image_zoom_in_tool`): cut a box of the image the model was SHOWN out of
 * the full-resolution original, and hand it back at native resolution — "thinking with images" as
 * DeepEyes, Mini-o3 and Chain-of-Focus do it. zoom_in (zoom.ts) is the other kind of zoom: a box
 * in the current image's own pixels, enlarged by a factor; it stays as it is.
 *
 * A policy never sees an image's pixels as stored: Qwen2.5-VL's processor resizes each image to
 * `smartResize` (sides multiples of 28, pixels within [min_pixels, max_pixels]), and the box the
 * model writes is in that shown image's coordinates. Precisely, for bbox [x1, y1, x2, y2]:
 *  1. Non-finite numbers, or x2 ≤ x1 or y2 ≤ y1 → E4.
 *  2. The current image (w × h) is shown at Sw × Sh = smartResize(h, w, bounds). The box is clipped
 *     to [0, Sw] × [0, Sh]; nothing left → E4 (out of the image).
 *  3. The current image is the native rectangle V of the source (a crop's `crop_view`; the whole
 *     image otherwise): X = V.left + x · V.width / Sw, Y = V.top + y · V.height / Sh.
 *  4. In source pixels: rounded outwards (floor X1/Y1, ceil X2/Y2), a side under 28 px grown to 28
 *     around its centre inside the source (region.ts, as zoom_in and DeepEyes do); a crop whose
 *     long side is over 200 times its short side → E4 (the processor refuses such an image).
 *  5. The crop is cut from the source's own pixels and returned as is; only when it has more than
 *     max_pixels pixels is it resized (Catmull-Rom, resize.ts) to smartResize of its size, i.e.
 *     exactly the size the processor would show it at.
 * Nested: the outcome's metadata carries `crop_view` (the source's id and the rectangle), so the
 * next crop maps its box through the crop's shown size back to the source and cuts from the source
 * again, never from a resample (and `original_view`, where the crop lies in the task image through
 * any resample: original-view.ts). The source is the episode's task image (ToolContext.original); with
 * no context (the CLI, the playground) the current image is its own source and no chain is kept.
 * A `crop_view` naming a source the context does not hold → E5 (not the model's fault).
 */
import type { RgbImage } from '../core/image.js';
import { releasePixels } from '../core/pixel-pool.js';
import { QWEN2_5_VL_PROCESSOR, smartResize, type PixelBounds } from '../config/qwen-image-tokens.js';
import type { PixelMetadata } from './metadata.js';
import { inlineJson, toolError, toolSuccess } from './outcome.js';
import { clipRegion, type PixelRegion } from './region.js';
import { cropImage, resizeCubic } from './resize.js';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types.js';
import { zoomMetadata } from './zoom.js';

export const CROP_MIN_SIDE = 28;
/** smart_resize refuses images whose long side is more than 200 times the short one. */
export const CROP_MAX_ASPECT = 200;
/** What a policy is shown when the episode names no bounds: Qwen2.5-VL's processor defaults. */
export const DEFAULT_SHOWN_BOUNDS: Readonly<PixelBounds> = { minPixels: QWEN2_5_VL_PROCESSOR.minPixels, maxPixels: QWEN2_5_VL_PROCESSOR.maxPixels };

const NAME = 'crop';
export const CROP_ALIAS = 'image_zoom_in_tool';

/** Where an image made by crop lies in its source: the source's id and the native rectangle (half-open). */
export interface CropView {
  source: string;
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The crop in source pixels, and the size it is returned at. */
export interface CropPlan extends PixelRegion {
  outWidth: number;
  outHeight: number;
  /** The size the current image is shown at, which the box was read in. */
  shownWidth: number;
  shownHeight: number;
}

/** [width, height] an image of width × height is shown at under the bounds, or why the processor refuses it. */
export function shownSize(width: number, height: number, bounds: PixelBounds): [number, number] | string {
  try {
    const [h, w] = smartResize(height, width, bounds);
    return [w, h];
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Where a crop will cut (in the source's pixels) and what size it returns, or why it cannot.
 * `current` is the image the box was written on, `view` its rectangle in the source (`source` is
 * the source's size).
 */
export function planCrop(
  current: { width: number; height: number },
  view: { left: number; top: number; right: number; bottom: number },
  source: { width: number; height: number },
  bbox: readonly number[],
  bounds: PixelBounds,
): CropPlan | string {
  const [x1, y1, x2, y2] = bbox as [number, number, number, number];
  const shown = inlineJson(bbox);
  if (![x1, y1, x2, y2].every(Number.isFinite)) return `bbox must be four finite numbers [x1, y1, x2, y2]; got ${shown}`;
  if (!(x2 > x1) || !(y2 > y1)) return `bbox must be [x1, y1, x2, y2] with x1 < x2 and y1 < y2 (left, top, right, bottom); got ${shown}`;
  const size = shownSize(current.width, current.height, bounds);
  if (typeof size === 'string') return `the current image cannot be shown (${size})`;
  const [sw, sh] = size;
  const cx1 = Math.max(0, x1);
  const cy1 = Math.max(0, y1);
  const cx2 = Math.min(sw, x2);
  const cy2 = Math.min(sh, y2);
  if (!(cx2 > cx1) || !(cy2 > cy1)) {
    return `bbox ${shown} lies outside the image you see, which is ${sw}×${sh}: x runs from 0 to ${sw} and y from 0 to ${sh}, from the top-left corner`;
  }
  const vw = view.right - view.left;
  const vh = view.bottom - view.top;
  const mapped = [view.left + (cx1 * vw) / sw, view.top + (cy1 * vh) / sh, view.left + (cx2 * vw) / sw, view.top + (cy2 * vh) / sh];
  const region = clipRegion(source.width, source.height, mapped, CROP_MIN_SIDE);
  if (typeof region === 'string') return `bbox ${shown} covers no whole pixel of the image`;
  const w = region.right - region.left;
  const h = region.bottom - region.top;
  if (Math.max(w, h) > CROP_MAX_ASPECT * Math.min(w, h)) {
    return `bbox ${shown} is too thin: its crop would be ${w}×${h}, and an image's long side may be at most ${CROP_MAX_ASPECT} times its short side; give a wider box`;
  }
  let out: [number, number] = [w, h];
  if (w * h > bounds.maxPixels) {
    const fitted = shownSize(w, h, bounds);
    if (typeof fitted === 'string') return `bbox ${shown}: ${fitted}`;
    out = fitted;
  }
  return { ...region, outWidth: out[0], outHeight: out[1], shownWidth: sw, shownHeight: sh };
}

/** The crop chain on the current image's metadata, if it has one. */
export function cropViewOf(meta: PixelMetadata): CropView | undefined {
  const view = meta.crop_view as CropView | undefined;
  return view === undefined ? undefined : view;
}

/** The source a crop reads and the current image's rectangle in it, or an E5 message. */
function sourceOf(image: RgbImage, meta: PixelMetadata, context: ToolContext | undefined) {
  const view = cropViewOf(meta);
  const original = context?.original;
  if (view !== undefined) {
    if (original === undefined || original.ref !== view.source) {
      return `the current image was cropped from image ${view.source}, which this episode does not hold. This is not a problem with your call.`;
    }
    return { pixels: original.image, meta: original.meta, ref: original.ref, view };
  }
  // The task image itself, or an edit that moved no pixels (such a tool returns no metadata, so the
  // episode still holds the original's: types.ts): the original, whole.
  if (original !== undefined && meta === original.meta && original.image.width === image.width && original.image.height === image.height) {
    return { pixels: original.image, meta: original.meta, ref: original.ref, view: { left: 0, top: 0, right: image.width, bottom: image.height } };
  }
  // No original to go back to (a tool call outside an episode, or an image zoom_in resampled).
  return { pixels: image, meta, ref: null, view: { left: 0, top: 0, right: image.width, bottom: image.height } };
}

async function applyCrop(name: string, image: RgbImage, bbox: number[], meta: PixelMetadata, context: ToolContext | undefined, label?: string): Promise<ToolOutcome> {
  const source = sourceOf(image, meta, context);
  if (typeof source === 'string') return toolError('E5', name, source);
  const bounds = context?.bounds ?? DEFAULT_SHOWN_BOUNDS;
  const plan = planCrop(image, source.view, source.pixels, bbox, bounds);
  if (typeof plan === 'string') return toolError('E4', name, plan);
  const crop = cropImage(source.pixels, plan.left, plan.top, plan.right, plan.bottom);
  const sameSize = plan.outWidth === crop.width && plan.outHeight === crop.height;
  const result = sameSize ? crop : resizeCubic(crop, plan.outWidth, plan.outHeight);
  if (result !== crop) releasePixels(crop); // read by the resampler only: nobody else holds it
  const moved = zoomMetadata(source.meta, { ...plan, outWidth: result.width, outHeight: result.height });
  if (source.ref !== null) moved.crop_view = { source: source.ref, left: plan.left, top: plan.top, right: plan.right, bottom: plan.bottom } satisfies CropView;
  const what = label === undefined || label === '' ? '' : ` (${inlineJson(label, 60)})`;
  const grown = plan.grown ? `, grown to the ${CROP_MIN_SIDE} px minimum` : '';
  const scaled = sameSize ? 'at full resolution' : `downscaled from ${crop.width}×${crop.height} to fit ${bounds.maxPixels} pixels`;
  const summary =
    `cropped${what} [${plan.left}, ${plan.top}, ${plan.right}, ${plan.bottom}] of the ${source.pixels.width}×${source.pixels.height} original${grown}: ` +
    `the new image is ${result.width}×${result.height}, ${scaled}; boxes in later calls refer to this new image as you see it.`;
  return toolSuccess(result, summary, [], moved);
}

const BBOX_DESCRIPTION = 'four numbers [x1, y1, x2, y2]: the box to look at closely, in the coordinates of the image as you see it (left, top, right, bottom, from the top-left corner)';

export const cropTool: ToolDefinition = {
  name: NAME,
  description:
    'Crops a box of the image you see and returns that region at full resolution, to read small text or look at details. ' +
    'Give the box as [x1, y1, x2, y2] in the coordinates of the image as you see it; you can crop the returned image again, ' +
    'and its boxes then refer to the returned image as you see it.',
  parameters: {
    type: 'object',
    properties: { bbox: { type: 'array', items: { type: 'number' }, minItems: 4, maxItems: 4, description: BBOX_DESCRIPTION } },
    required: ['bbox'],
    additionalProperties: false,
  },
  exampleArguments(meta?: PixelMetadata): Record<string, unknown> {
    const f = meta?.figure_bbox;
    return { bbox: f ? [f.x1, f.y1, Math.round((f.x1 + f.x2) / 2), Math.round((f.y1 + f.y2) / 2)] : [40, 60, 240, 160] };
  },
  async apply(image: RgbImage, args: Record<string, unknown>, meta: PixelMetadata, context?: ToolContext): Promise<ToolOutcome> {
    return applyCrop(NAME, image, args.bbox as number[], meta, context);
  },
};

/** DeepEyes' name and argument shape (`bbox_2d`, an optional `label`) for the same tool: accepted, not offered. */
export const imageZoomInAlias: ToolDefinition = {
  name: CROP_ALIAS,
  description: `The same as ${NAME}, under DeepEyes' name: zooms into the box bbox_2d of the image as you see it.`,
  parameters: {
    type: 'object',
    properties: {
      bbox_2d: { type: 'array', items: { type: 'number' }, minItems: 4, maxItems: 4, description: BBOX_DESCRIPTION },
      label: { type: 'string', description: 'the name of the object in the box (optional)' },
    },
    required: ['bbox_2d'],
    additionalProperties: false,
  },
  exampleArguments(meta?: PixelMetadata): Record<string, unknown> {
    return { bbox_2d: cropTool.exampleArguments?.(meta).bbox, label: 'the region' };
  },
  async apply(image: RgbImage, args: Record<string, unknown>, meta: PixelMetadata, context?: ToolContext): Promise<ToolOutcome> {
    return applyCrop(CROP_ALIAS, image, args.bbox_2d as number[], meta, context, args.label as string | undefined);
  },
};
