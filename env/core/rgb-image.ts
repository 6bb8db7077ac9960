/**
 * The in-memory image every tool works on: tightly packed 8-bit RGB pixels. Tools edit raw
 * buffers (fast, exact, deterministic). The type alone, so the pixel pool and the PNG writer,
 * which image.ts's encoder uses, can name it without importing the decoder (image.ts re-exports it).
 */
export interface RgbImage {
  readonly width: number;
  readonly height: number;
  /** width * height * 3 bytes, row-major, RGB. */
  readonly data: Buffer;
}
