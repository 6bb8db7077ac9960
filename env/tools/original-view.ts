/**
 * Where an image an episode made lies in the task image it started from: the rectangle of the
 * original's pixels it shows (half-open, fractional after nested resamples) and the size it shows
 * them at. zoom_in and crop write it into the metadata they hand back (zoomMetadata), composed with
 * the view of the image they read, so a box in any later image maps back to the original exactly,
 * however many zooms and crops came before; the task image itself carries none (it is its own view).
 *
 * crop_view (crop.ts) is a different thing: it says which unresampled rectangle of a source a crop
 * may cut again, and a resample ends it. This view survives resamples: it is geometry, for judging
 * where a call looked (env/episodes/search-target.ts), never for cutting pixels.
 */
import type { BBox, PixelMetadata } from './metadata.js';
import type { ZoomPlan } from './region.js';

export interface OriginalView {
  /** The rectangle of the original shown, in the original's pixels (x2, y2 just past the last). */
  left: number;
  top: number;
  right: number;
  bottom: number;
  /** The size of the image that shows it. */
  width: number;
  height: number;
}

/** The view recorded on an image's metadata; undefined on the task image itself (or outside an episode's chain). */
export function originalViewOf(meta: PixelMetadata): OriginalView | undefined {
  const view = meta.original_view as OriginalView | undefined;
  return view === undefined ? undefined : view;
}

/**
 * The view of a zoom's or crop's output: the plan's rectangle (in the pixels of the image it read)
 * mapped through that image's view. An image without a view is the original: the plan is the view.
 */
export function composeView(read: OriginalView | undefined, plan: ZoomPlan): OriginalView {
  const size = { width: plan.outWidth, height: plan.outHeight };
  if (read === undefined) return { left: plan.left, top: plan.top, right: plan.right, bottom: plan.bottom, ...size };
  const kx = (read.right - read.left) / read.width;
  const ky = (read.bottom - read.top) / read.height;
  return { left: read.left + plan.left * kx, top: read.top + plan.top * ky, right: read.left + plan.right * kx, bottom: read.top + plan.bottom * ky, ...size };
}

/** The rectangle of the original a view shows, as a box. */
export function viewBox(view: OriginalView): BBox {
  return { x1: view.left, y1: view.top, x2: view.right, y2: view.bottom };
}
