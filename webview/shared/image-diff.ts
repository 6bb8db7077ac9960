/**
 * The difference overlay between a tool's input and output image, as RGBA pixels for a canvas:
 * changed pixels (summed absolute RGB difference above `threshold`) in a strong colour, the rest
 * as a faded copy of the output, so the eye goes straight to what the tool touched.
 * Pure: works on pixel arrays, no DOM.
 */

export interface DiffResult {
  /** width * height * 4 bytes, RGBA. */
  overlay: Uint8ClampedArray;
  changed: number;
  total: number;
}

export const DIFF_COLOUR: readonly [number, number, number] = [255, 0, 170];

/** `before` and `after` are RGBA (ImageData.data) of the same size. */
export function pixelDifference(before: Uint8ClampedArray, after: Uint8ClampedArray, width: number, height: number, threshold = 24): DiffResult {
  const total = width * height;
  if (before.length !== total * 4 || after.length !== total * 4) throw new Error(`pixelDifference: both images must be ${width}×${height} RGBA (${total * 4} bytes), got ${before.length} and ${after.length}`);
  const overlay = new Uint8ClampedArray(total * 4);
  let changed = 0;
  for (let i = 0; i < total * 4; i += 4) {
    const d = Math.abs((after[i] as number) - (before[i] as number)) + Math.abs((after[i + 1] as number) - (before[i + 1] as number)) + Math.abs((after[i + 2] as number) - (before[i + 2] as number));
    if (d > threshold) {
      changed += 1;
      overlay[i] = DIFF_COLOUR[0];
      overlay[i + 1] = DIFF_COLOUR[1];
      overlay[i + 2] = DIFF_COLOUR[2];
      overlay[i + 3] = 255;
    } else {
      // Faded output: blend toward mid-grey so unchanged content stays readable but quiet.
      overlay[i] = 128 + ((after[i] as number) - 128) * 0.3;
      overlay[i + 1] = 128 + ((after[i + 1] as number) - 128) * 0.3;
      overlay[i + 2] = 128 + ((after[i + 2] as number) - 128) * 0.3;
      overlay[i + 3] = 255;
    }
  }
  return { overlay, changed, total };
}
