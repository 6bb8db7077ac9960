/**
 * A box a model gave in pixels of the current image, made usable: checked for order, clipped to
 * the image, rounded outward to whole pixels, and each side grown around its centre to a minimum
 * (a crop or a read needs some room). Shared by zoom_in and ocr so both read boxes the same way.
 * Callers check first that the four numbers are finite.
 */
import { inlineJson } from './outcome.js';

export interface PixelRegion {
  left: number;
  top: number;
  right: number;
  bottom: number;
  /** True when a side was grown to the minimum. */
  grown: boolean;
}

/** A zoom's crop and the size its output is scaled to (zoom.ts plans it; original-view.ts follows it). */
export interface ZoomPlan extends PixelRegion {
  outWidth: number;
  outHeight: number;
}

export function clipRegion(width: number, height: number, bbox: readonly number[], minSide: number): PixelRegion | string {
  const [x1, y1, x2, y2] = bbox as [number, number, number, number];
  const shown = inlineJson(bbox);
  if (!(x2 > x1) || !(y2 > y1)) {
    return `bbox must be [x1, y1, x2, y2] with x1 < x2 and y1 < y2 (left, top, right, bottom in pixels); got ${shown}`;
  }
  const cx1 = Math.max(0, x1);
  const cy1 = Math.max(0, y1);
  const cx2 = Math.min(width, x2);
  const cy2 = Math.min(height, y2);
  if (!(cx2 > cx1) || !(cy2 > cy1)) {
    return `bbox ${shown} lies outside the ${width}×${height} image; x runs from 0 to ${width} and y from 0 to ${height}, from the top-left corner`;
  }
  const [left, right, grownX] = growSpan(Math.floor(cx1), Math.ceil(cx2), width, minSide);
  const [top, bottom, grownY] = growSpan(Math.floor(cy1), Math.ceil(cy2), height, minSide);
  return { left, top, right, bottom, grown: grownX || grownY };
}

function growSpan(start: number, end: number, limit: number, minSide: number): [number, number, boolean] {
  if (end - start >= minSide || end - start >= limit) return [start, end, false];
  const size = Math.min(minSide, limit);
  const from = Math.min(limit - size, Math.max(0, Math.round((start + end) / 2 - size / 2)));
  return [from, from + size, true];
}
