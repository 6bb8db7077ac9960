/**
 * How many tokens Qwen2.5-VL's image processor gives an image: its `smart_resize` (transformers,
 * models/qwen2_vl/image_processing_qwen2_vl.py) rounds each side to a multiple of patch × merge
 * (28) and rescales into [min_pixels, max_pixels]; every 28×28 block of the result is one token
 * after the 2×2 merge. Written from that function's rules, not copied, so the budgets the export
 * and the validator compute agree with what veRL's processor and vLLM will build.
 */

/** The image-size limits a processor is given (`mm_processor_kwargs`). */
export interface PixelBounds {
  minPixels: number;
  maxPixels: number;
}

/**
 * Qwen2.5-VL-3B/7B-Instruct's preprocessor_config.json: min_pixels 3,136 (56²), max_pixels
 * 12,845,056 (16,384 tokens), patch 14, spatial merge 2. What a run gets with policy.min_pixels
 * and policy.max_pixels null.
 */
export const QWEN2_5_VL_PROCESSOR = { minPixels: 3136, maxPixels: 12_845_056, patchSize: 14, mergeSize: 2 } as const;

/** Side of the pixel block that becomes one token (patch × merge). */
export const QWEN_TOKEN_SIDE = QWEN2_5_VL_PROCESSOR.patchSize * QWEN2_5_VL_PROCESSOR.mergeSize;

/** smart_resize refuses images whose long side is more than this many times the short one. */
const MAX_ASPECT_RATIO = 200;

/** Python's round(): halves go to the even neighbour (round(2.5) is 2), which smart_resize inherits. */
export function roundHalfToEven(x: number): number {
  const floor = Math.floor(x);
  const fraction = x - floor;
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** The size, [height, width], the processor resizes a height × width image to. */
export function smartResize(height: number, width: number, bounds: PixelBounds, factor: number = QWEN_TOKEN_SIDE): [number, number] {
  if (!(height > 0 && width > 0)) throw new RangeError(`an image's height and width must be positive, got ${height}×${width}`);
  const ratio = Math.max(height, width) / Math.min(height, width);
  if (ratio > MAX_ASPECT_RATIO) throw new RangeError(`an image of ${height}×${width} has an aspect ratio of ${ratio.toFixed(1)}; Qwen2.5-VL's processor refuses more than ${MAX_ASPECT_RATIO}`);
  let h = roundHalfToEven(height / factor) * factor;
  let w = roundHalfToEven(width / factor) * factor;
  if (h * w > bounds.maxPixels) {
    const beta = Math.sqrt((height * width) / bounds.maxPixels);
    h = Math.max(factor, Math.floor(height / beta / factor) * factor);
    w = Math.max(factor, Math.floor(width / beta / factor) * factor);
  } else if (h * w < bounds.minPixels) {
    const beta = Math.sqrt(bounds.minPixels / (height * width));
    h = Math.ceil((height * beta) / factor) * factor;
    w = Math.ceil((width * beta) / factor) * factor;
  }
  return [h, w];
}

/** The image tokens (`<|image_pad|>` count) of a height × width image under these bounds. */
export function imageTokens(height: number, width: number, bounds: PixelBounds): number {
  const [h, w] = smartResize(height, width, bounds);
  return (h / QWEN_TOKEN_SIDE) * (w / QWEN_TOKEN_SIDE);
}

/**
 * The most tokens one image can take under these bounds. The downscale keeps an image at most
 * max_pixels (floors on both sides) and a rounding that stays at most max_pixels is kept, so
 * those images stay within ⌊max_pixels / 784⌋ tokens (a 28a × 28b image with a·b at that count
 * reaches it). The upscale of a small image rounds both sides up to 28, and for a thin one
 * (aspect ratio up to 200) that can pass min_pixels several times over: with a short side s
 * after scaling (s ≥ √(min/200)) its tokens are at most (s/28 + 1)(min/(28 s) + 1), largest at
 * the thinnest s. The larger of the two is the bound.
 */
export function maxImageTokens(bounds: PixelBounds): number {
  const block = QWEN_TOKEN_SIDE * QWEN_TOKEN_SIDE;
  const downscaled = Math.floor(bounds.maxPixels / block);
  const thinnest = Math.sqrt(bounds.minPixels / MAX_ASPECT_RATIO);
  const upscaled = Math.floor((thinnest / QWEN_TOKEN_SIDE + 1) * (bounds.minPixels / (QWEN_TOKEN_SIDE * thinnest) + 1));
  return Math.max(downscaled, upscaled);
}

/** Why these bounds cannot be given to the processor, or null. */
export function pixelBoundsProblem(bounds: PixelBounds): string | null {
  const block = QWEN_TOKEN_SIDE * QWEN_TOKEN_SIDE;
  if (!Number.isInteger(bounds.minPixels) || bounds.minPixels < 1) return `min_pixels ${bounds.minPixels} is not a positive whole number of pixels`;
  if (!Number.isInteger(bounds.maxPixels) || bounds.maxPixels < block) return `max_pixels ${bounds.maxPixels} is under one image token (${block} pixels, 28×28)`;
  if (bounds.minPixels > bounds.maxPixels) return `min_pixels ${bounds.minPixels} is more than max_pixels ${bounds.maxPixels}`;
  return null;
}
