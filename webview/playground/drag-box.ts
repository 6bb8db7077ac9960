/**
 * A box dragged on the playground's image, turned into a tool's `bbox` [x1, y1, x2, y2] in pixels
 * of the image. The image is shown `zoom` times its size (display-zoom.ts), so a point `d` CSS
 * pixels from the image's top-left corner lies in image pixel d / zoom. The box covers every image
 * pixel the drag touched: its corners are ordered, clamped to the image, and rounded outwards
 * (floor the left and top, ceil the right and bottom), as zoom_in itself rounds a box. Pure: no DOM.
 */
export interface DisplayPoint {
  /** CSS pixels from the shown image's left and top edges (negative, or past its size, outside it). */
  x: number;
  y: number;
}

export type PixelBox = [x1: number, y1: number, x2: number, y2: number];

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

/**
 * The image box under a drag from `start` to `end` on an image of `width`×`height` pixels shown at
 * `zoom`; null when it covers no pixel (a click, or a drag wholly outside the image).
 */
export function dragToImageBox(start: DisplayPoint, end: DisplayPoint, zoom: number, width: number, height: number): PixelBox | null {
  if (!(zoom > 0) || !(width > 0) || !(height > 0) || ![start.x, start.y, end.x, end.y].every(Number.isFinite)) return null;
  const left = clamp(Math.min(start.x, end.x) / zoom, 0, width);
  const right = clamp(Math.max(start.x, end.x) / zoom, 0, width);
  const top = clamp(Math.min(start.y, end.y) / zoom, 0, height);
  const bottom = clamp(Math.max(start.y, end.y) / zoom, 0, height);
  if (!(right > left) || !(bottom > top)) return null;
  return [Math.floor(left), Math.floor(top), Math.ceil(right), Math.ceil(bottom)];
}

/** Where an image box lies on the shown image, in CSS pixels: for drawing the box over it. */
export function imageBoxToDisplay(box: PixelBox, zoom: number): { left: number; top: number; width: number; height: number } {
  const [x1, y1, x2, y2] = box;
  return { left: x1 * zoom, top: y1 * zoom, width: (x2 - x1) * zoom, height: (y2 - y1) * zoom };
}
