/**
 * Reading and writing the in-memory image every tool works on (rgb-image.ts: tightly packed 8-bit
 * RGB pixels). Tools edit raw buffers (fast, exact, deterministic); sharp decodes and
 * png-encode.ts encodes. Alpha is flattened onto white at load, as a chart or table is read on a
 * white page.
 */
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { encodeRgbPng } from './png-encode.js';
import type { RgbImage } from './rgb-image.js';

export type { RgbImage };

/** An image whose header says it has more pixels than the caller allows; nothing was decoded. */
export class ImageTooLargeError extends Error {
  override name = 'ImageTooLargeError';
  constructor(
    readonly width: number,
    readonly height: number,
    readonly maxPixels: number,
  ) {
    super(`image is ${width}×${height} = ${width * height} pixels, over the limit of ${maxPixels}; use a smaller image or raise the limit`);
  }
}

/**
 * Decodes to RGB. With `maxPixels`, the size is read from the header first and an image over it
 * is refused before any pixel is decoded (a 775 KB PNG can hold 16000×16000 pixels, 750 MB raw);
 * sharp's own input limit backs that check up.
 */
export async function decodeImage(input: string | Buffer, options: { maxPixels?: number } = {}): Promise<RgbImage> {
  const { maxPixels } = options;
  if (maxPixels !== undefined) {
    const { width, height } = await sharp(input).metadata();
    if (width !== undefined && height !== undefined && width * height > maxPixels) throw new ImageTooLargeError(width, height, maxPixels);
  }
  const { data, info } = await sharp(input, maxPixels === undefined ? {} : { limitInputPixels: maxPixels })
    .flatten({ background: { r: 255, g: 255, b: 255 } })
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`expected 3 channels after decoding, got ${info.channels}`);
  return { width: info.width, height: info.height, data };
}

/**
 * PNG bytes for an image (png-encode.ts: node's zlib at level 1, no filters). Fixed encoder
 * settings make the bytes a pure function of the pixels, which is what content addressing and the
 * determinism tests rely on.
 *
 * The compression runs on the calling thread. Measured on two cores (npm run bench -- tools,
 * -- server): zlib's asynchronous API cost 1–6 ms more CPU per encode than its synchronous one
 * (its stream machinery and thread-pool hops), more than sharp's encoder, and the env server made
 * 347–422 steps/s with inline encodes against 317–352 asynchronous and 290–298 with sharp. The
 * price: one server encodes on one core; on a many-core machine, run more than one server.
 */
// The task generator calls png-encode.ts's encodeRgbPng directly (env/tasks/task-png.ts), or sharp for large canvases.
export async function encodePng(image: RgbImage): Promise<Buffer> {
  return encodeRgbPng(image);
}

export function cloneImage(image: RgbImage): RgbImage {
  return { width: image.width, height: image.height, data: Buffer.from(image.data) };
}

/** Content address of PNG bytes: the file name under a run's images/ folder. */
export function contentHash(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
