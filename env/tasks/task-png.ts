/**
 * The PNG of a generated task. Canvases under LARGE_CANVAS_PIXELS (charts, tables, diagrams) go
 * through png-encode.ts like every other image vistool writes. Larger ones (search scenes, 2048×1536
 * by default) go through sharp: libvips hands the rows to libspng without the copy into a
 * filter-byte layout png-encode.ts makes, zlib-ng's level 1 spends less CPU per byte than node's
 * zlib on these mostly flat scenes, and the encode runs on libuv's thread pool, so the thread that
 * painted the scene paints the next one meanwhile. Same settings as png-encode.ts (8-bit RGB, no
 * filters, level 1, no palette: lossless, the pixels exactly), and the bytes are again a pure
 * function of the pixels for a given sharp build; `data check` compares pixels where bytes differ.
 *
 * Measured on 2048×1536 search scenes (2-core AMD EPYC, loaded by other jobs): 10.1 against 9.4 CPU
 * ms per encode, node's against sharp's (each best of three); `data gen` made 17.8–20.1 against
 * 26.6–28.8 tasks/s, 33–34 against 30–32 CPU ms per task. At 1024×768 the two cost the same.
 */
import sharp from 'sharp';
import type { RgbImage } from '../core/image.js';
import { encodeRgbPng } from '../core/png-encode.js';

/** From this many pixels on, a task's PNG is sharp's. */
export const LARGE_CANVAS_PIXELS = 2_000_000;

export async function encodeTaskPng(image: RgbImage): Promise<Buffer> {
  if (image.width * image.height < LARGE_CANVAS_PIXELS) return encodeRgbPng(image);
  return sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .png({ compressionLevel: 1, adaptiveFiltering: false, palette: false })
    .toBuffer();
}
