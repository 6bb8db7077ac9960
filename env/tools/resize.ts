/**
 * Image resampling for zoom_in, in pure integer arithmetic so the output is the same bytes on
 * every machine, whatever native build is installed; it is the same kernel sharp calls 'cubic':
 * Catmull-Rom (B = 0, C = 0.5).
 *
 * Geometry: pixel centres are aligned, i.e. output pixel d samples the source at
 * (d + 0.5) · (srcSize / dstSize) − 0.5; samples past the border repeat the edge pixel. When
 * shrinking, the kernel is widened by the shrink ratio so it averages instead of aliasing.
 * Weights are 14-bit fixed point summing to exactly 2^14 per output pixel, so a flat colour
 * stays exactly that colour and a scale of 1 copies the source unchanged.
 */
import type { RgbImage } from '../core/image.js';
import { takePixels } from '../core/pixel-pool.js';

const WEIGHT_BITS = 14;
const WEIGHT_ONE = 1 << WEIGHT_BITS;

/** Catmull-Rom cubic: 1 at 0, 0 at ±1 and ±2, support [−2, 2]. */
function catmullRom(t: number): number {
  const x = Math.abs(t);
  if (x < 1) return 1.5 * x * x * x - 2.5 * x * x + 1;
  if (x < 2) return -0.5 * x * x * x + 2.5 * x * x - 4 * x + 2;
  return 0;
}

interface Taps {
  /** First source index of each output pixel's taps (already clamped per tap in `index`). */
  index: Int32Array;
  weight: Int32Array;
  count: number;
}

/** For each output position: which source pixels it reads and with what integer weights. */
function computeTaps(srcSize: number, dstSize: number): Taps {
  const ratio = srcSize / dstSize;
  const stretch = Math.max(1, ratio);
  const count = Math.ceil(2 * stretch) * 2 + 1;
  const index = new Int32Array(dstSize * count);
  const weight = new Int32Array(dstSize * count);
  const raw = new Float64Array(count);
  for (let d = 0; d < dstSize; d++) {
    const centre = (d + 0.5) * ratio - 0.5;
    const first = Math.floor(centre) - Math.floor(count / 2);
    let sum = 0;
    for (let k = 0; k < count; k++) {
      raw[k] = catmullRom((first + k - centre) / stretch);
      sum += raw[k] as number;
    }
    let total = 0;
    let largest = 0;
    for (let k = 0; k < count; k++) {
      const w = Math.round(((raw[k] as number) / sum) * WEIGHT_ONE);
      weight[d * count + k] = w;
      index[d * count + k] = Math.min(srcSize - 1, Math.max(0, first + k));
      total += w;
      if (Math.abs(w) > Math.abs(weight[d * count + largest] as number)) largest = k;
    }
    // Rounding may leave the sum a unit off 2^14; the largest weight absorbs it so flat areas stay exact.
    weight[d * count + largest] = (weight[d * count + largest] as number) + (WEIGHT_ONE - total);
  }
  return { index, weight, count };
}

/** Resizes `source` to dstWidth×dstHeight (both ≥ 1) with the Catmull-Rom kernel. */
export function resizeCubic(source: RgbImage, dstWidth: number, dstHeight: number): RgbImage {
  const { width: sw, height: sh, data: src } = source;
  const horizontal = computeTaps(sw, dstWidth);
  const vertical = computeTaps(sh, dstHeight);

  // Pass 1: rows, kept at full fixed-point precision (values fit easily in 32 bits).
  const middle = new Int32Array(dstWidth * sh * 3);
  for (let y = 0; y < sh; y++) {
    const rowIn = y * sw * 3;
    const rowOut = y * dstWidth * 3;
    for (let x = 0; x < dstWidth; x++) {
      let r = 0;
      let g = 0;
      let b = 0;
      const base = x * horizontal.count;
      for (let k = 0; k < horizontal.count; k++) {
        const w = horizontal.weight[base + k] as number;
        if (w === 0) continue;
        const i = rowIn + (horizontal.index[base + k] as number) * 3;
        r += w * (src[i] as number);
        g += w * (src[i + 1] as number);
        b += w * (src[i + 2] as number);
      }
      middle[rowOut + x * 3] = r;
      middle[rowOut + x * 3 + 1] = g;
      middle[rowOut + x * 3 + 2] = b;
    }
  }

  // Pass 2: columns. Sums reach ~2^37, exact in a double; one rounding at the very end.
  const out = takePixels(dstWidth * dstHeight * 3);
  const shift = 2 ** (2 * WEIGHT_BITS);
  const half = shift / 2;
  const rowStride = dstWidth * 3;
  for (let y = 0; y < dstHeight; y++) {
    const base = y * vertical.count;
    for (let x = 0; x < rowStride; x++) {
      let acc = 0;
      for (let k = 0; k < vertical.count; k++) {
        const w = vertical.weight[base + k] as number;
        if (w === 0) continue;
        acc += w * (middle[(vertical.index[base + k] as number) * rowStride + x] as number);
      }
      const value = Math.floor((acc + half) / shift);
      out[y * rowStride + x] = value < 0 ? 0 : value > 255 ? 255 : value;
    }
  }
  return { width: dstWidth, height: dstHeight, data: out };
}

/** The sub-image left ≤ x < right, top ≤ y < bottom (a copy, in a buffer from the pixel pool). */
export function cropImage(image: RgbImage, left: number, top: number, right: number, bottom: number): RgbImage {
  const width = right - left;
  const height = bottom - top;
  const data = takePixels(width * height * 3);
  for (let y = 0; y < height; y++) {
    const from = ((top + y) * image.width + left) * 3;
    image.data.copy(data, y * width * 3, from, from + width * 3);
  }
  return { width, height, data };
}
