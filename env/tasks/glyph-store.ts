/**
 * The glyph cache on disk: masks glyph-cache.ts rasterised, kept between runs, so a data set does
 * not pay for rasterising again (a mixed data set needs some 11,000 masks; one costs ~0.2 CPU ms in
 * sharp, a few ms per atlas call on top). A mask is a pure function of its key and the renderer,
 * so the file is named after the renderer (sharp's library versions, the font family, the pen
 * phases and this format); glyph-cache.ts also re-renders a sample of a loaded file and drops the
 * whole file if any mask differs (a changed font or fontconfig setting), so a stale file can cost
 * time, never pixels.
 *
 * Where: $VISTOOL_GLYPH_CACHE (a folder), else $XDG_CACHE_HOME/vistool or ~/.cache/vistool;
 * VISTOOL_GLYPH_CACHE=off keeps masks in memory only. Writes go to a temporary file renamed into
 * place, merged with the file as read just before (glyph-cache.ts saveToStore).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import sharp from 'sharp';

const MAGIC = 'VTGLYPH1';

/** A store never grows past this many masks (tiny canvases scale fonts to many sizes): about 10 MB. */
export const STORE_LIMIT = 100_000;

/** A glyph's coverage: alpha[v * width + u] is the pixel at (pen pixel + (dx + u, dy + v)). */
export interface GlyphMask {
  dx: number;
  dy: number;
  width: number;
  height: number;
  alpha: Uint8Array;
}

/** A stored glyph: its cache key and its mask (null: the glyph draws nothing). */
export type GlyphEntry = readonly [string, GlyphMask | null];

/** The store file for this renderer, or null when stores are off. `parts` are what else names the renderer (font family, phases). */
export function glyphStorePath(parts: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): string | null {
  const setting = env.VISTOOL_GLYPH_CACHE;
  if (setting === 'off') return null;
  const folder = setting || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'vistool');
  const renderer = createHash('sha256').update(JSON.stringify({ format: MAGIC, sharp: sharp.versions, ...parts })).digest('hex').slice(0, 16);
  return join(folder, `glyphs-${renderer}.bin`);
}

/** The masks in a store file; none when it is missing or not a store (a damaged file is ignored, and replaced at the next write). */
export function readGlyphStore(path: string): GlyphEntry[] {
  return readGlyphStoreFile(path).entries;
}

/** The masks in a store file and the SHA-256 of its bytes (null with no entries), which names what a check of them vouches for. */
export function readGlyphStoreFile(path: string): { entries: GlyphEntry[]; digest: string | null } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return { entries: [], digest: null };
  }
  try {
    const entries = decode(bytes);
    return { entries, digest: entries.length > 0 ? createHash('sha256').update(bytes).digest('hex') : null };
  } catch {
    return { entries: [], digest: null };
  }
}

function decode(bytes: Buffer): GlyphEntry[] {
  if (bytes.toString('latin1', 0, MAGIC.length) !== MAGIC) throw new Error('not a glyph store');
  const count = bytes.readUInt32LE(MAGIC.length);
  const entries: GlyphEntry[] = [];
  let at = MAGIC.length + 4;
  for (let i = 0; i < count; i++) {
    const keyLength = bytes.readUInt16LE(at);
    const key = bytes.toString('utf8', at + 2, at + 2 + keyLength);
    at += 2 + keyLength;
    if (bytes.readUInt8(at++) === 0) {
      entries.push([key, null]);
      continue;
    }
    const dx = bytes.readInt16LE(at), dy = bytes.readInt16LE(at + 2), width = bytes.readUInt16LE(at + 4), height = bytes.readUInt16LE(at + 6);
    at += 8;
    if (at + width * height > bytes.length) throw new Error('truncated glyph store');
    entries.push([key, { dx, dy, width, height, alpha: new Uint8Array(bytes.subarray(at, at + width * height)) }]);
    at += width * height;
  }
  return entries;
}

function encode(entries: Iterable<GlyphEntry>): Buffer {
  const parts: Buffer[] = [];
  let count = 0;
  for (const [key, mask] of entries) {
    const name = Buffer.from(key, 'utf8');
    const head = Buffer.alloc(3 + (mask ? 8 : 0));
    head.writeUInt16LE(name.length, 0);
    head.writeUInt8(mask ? 1 : 0, 2);
    if (mask) {
      head.writeInt16LE(mask.dx, 3);
      head.writeInt16LE(mask.dy, 5);
      head.writeUInt16LE(mask.width, 7);
      head.writeUInt16LE(mask.height, 9);
    }
    parts.push(head.subarray(0, 2), name, head.subarray(2), ...(mask ? [Buffer.from(mask.alpha.buffer, mask.alpha.byteOffset, mask.alpha.byteLength)] : []));
    count++;
  }
  const header = Buffer.alloc(MAGIC.length + 4);
  header.write(MAGIC, 0, 'latin1');
  header.writeUInt32LE(count, MAGIC.length);
  return Buffer.concat([header, ...parts]);
}

/**
 * Writes the store: the masks `kept` from the file as it was read (none, for a file whose masks
 * failed the check), then the `added` ones it lacks, to a temporary file renamed into place. A
 * store that cannot be written (a read-only home) is skipped: it only saves time.
 */
export function writeGlyphStore(path: string, kept: Iterable<GlyphEntry>, added: Iterable<GlyphEntry>): void {
  const merged = new Map<string, GlyphMask | null>(kept);
  for (const [key, mask] of added) if (merged.size < STORE_LIMIT && !merged.has(key)) merged.set(key, mask);
  const temporary = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(temporary, encode(merged));
    renameSync(temporary, path);
  } catch {
    // Best effort: the next run rasterises again.
    rmSync(temporary, { force: true });
  }
}
