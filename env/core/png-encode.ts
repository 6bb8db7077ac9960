/**
 * The PNG writer for every image vistool makes but generated task canvases of 2 megapixels or
 * more (env/tasks/task-png.ts): 8-bit RGB, no interlace, filter type 0 on every row, one IDAT
 * chunk compressed by node's zlib at level 1 (docs/CONTRACTS.md, "The PNG files vistool writes",
 * has why).
 *
 * Why not sharp, which still decodes everything: the encode is most of a tool step and a third
 * of making a task, and for the same pixels at the same level node's zlib spent a third less CPU
 * than sharp's encoder (libvips, libpng, zlib-ng) on generated charts and tables and about the
 * same on the densest 800×600 table the tools bench draws; sharp also pays a pipeline per call.
 * The container is a signature and three chunks; the compression is zlib's.
 */
import zlib from 'node:zlib';
import type { RgbImage } from './rgb-image.js';
import { releaseBuffers, takePixels } from './pixel-pool.js';

/** zlib level of every PNG vistool writes (bench/tools.ts measures the levels against each other). */
export const PNG_ZLIB_LEVEL = 1;

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** PNG bytes of RGB pixels, compressed on the calling thread; a `level` other than the default is for the benchmarks. */
export function encodeRgbPng(image: RgbImage, level = PNG_ZLIB_LEVEL): Buffer {
  const rows = scanlines(image);
  try {
    return assemble(image, zlib.deflateSync(rows, { level }));
  } finally {
    releaseBuffers(rows);
  }
}

/**
 * Each row behind its filter byte (0: none). Filters cost more time than they save bytes on charts
 * and tables. The buffer comes from the pixel pool (a fresh one this size is a fresh mapping, one
 * page fault per 4 KiB) and goes back once zlib has read it.
 */
function scanlines({ width, height, data }: RgbImage): Buffer {
  const stride = width * 3;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || data.length !== stride * height) {
    throw new Error(`cannot encode a ${width}×${height} RGB image from ${data.length} bytes (expected ${stride * height})`);
  }
  const rows = takePixels((stride + 1) * height);
  for (let y = 0, at = 0; y < height; y++, at += stride + 1) {
    rows[at] = 0;
    data.copy(rows, at + 1, y * stride, (y + 1) * stride);
  }
  return rows;
}

function assemble({ width, height }: RgbImage, compressed: Buffer): Buffer {
  const out = Buffer.allocUnsafe(SIGNATURE.length + 25 + 12 + compressed.length + 12);
  SIGNATURE.copy(out, 0);
  let at = SIGNATURE.length;
  at = beginChunk(out, at, 'IHDR', 13);
  out.writeUInt32BE(width, at);
  out.writeUInt32BE(height, at + 4);
  out[at + 8] = 8; // bits per channel
  out[at + 9] = 2; // colour type: truecolour (RGB)
  out[at + 10] = 0; // deflate compression
  out[at + 11] = 0; // filter method 0 (per-row filter bytes)
  out[at + 12] = 0; // no interlace
  at = endChunk(out, at + 13, 13);
  at = beginChunk(out, at, 'IDAT', compressed.length);
  compressed.copy(out, at);
  at = endChunk(out, at + compressed.length, compressed.length);
  at = beginChunk(out, at, 'IEND', 0);
  endChunk(out, at, 0);
  return out;
}

/** Writes a chunk's length and type at `at`; returns where its data starts. */
function beginChunk(out: Buffer, at: number, type: string, length: number): number {
  out.writeUInt32BE(length, at);
  out.write(type, at + 4, 'latin1');
  return at + 8;
}

/** Writes the CRC-32 of the chunk's type and data, which end at `at`; returns where the next chunk starts. */
function endChunk(out: Buffer, at: number, length: number): number {
  out.writeUInt32BE(crc32(out.subarray(at - length - 4, at)), at);
  return at + 4;
}

// zlib.crc32 arrived in Node 20.15; the table-driven fallback keeps older 20.x runtimes working.
const nodeCrc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
let crcTable: Uint32Array | null = null;

export function crc32(data: Uint8Array): number {
  return nodeCrc32 ? nodeCrc32(data) : tableCrc32(data);
}

/** CRC-32 (the PNG and zlib polynomial) by table, for runtimes without zlib.crc32. */
export function tableCrc32(data: Uint8Array): number {
  crcTable ??= Uint32Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  let c = 0xffffffff;
  for (const byte of data) c = (crcTable[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
