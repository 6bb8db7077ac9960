/**
 * Text without laying it out again: each glyph is rasterised once by sharp (librsvg + pango,
 * DejaVu Sans, the renderer the metrics in fonts/ were derived from) into a coverage mask, per
 * (character, font size, weight, rotation, sub-pixel phase of its pen position quantised to
 * 1/PHASES px in x and y), and kept for the life of the process. paint.ts composites the masks at
 * the pen positions the glyph table's advances give, so where a label's glyphs go is exactly what
 * layout measured (no kerning: pango's kerning only ever pulled glyphs closer).
 *
 * Glyphs a scene needs and the cache lacks are rendered together, one cell each in one atlas SVG,
 * in one sharp call. A cell's origin is a whole pixel, so a glyph rasterises the same in any cell
 * of any atlas: the masks, and so the images, do not depend on which task asked first.
 */
import sharp from 'sharp';
import { escapeXml, num, type TextPrimitive } from './svg.js';
import { glyphStorePath, readGlyphStoreFile, writeGlyphStore, type GlyphEntry, type GlyphMask } from './glyph-store.js';
import { FONT_FAMILY, glyphMetrics, type FontWeight } from './text-metrics.js';

/** Sub-pixel positions per pixel, in x and in y. */
export const PHASES = 4;

/** One glyph of a laid-out string: its cache key and the whole pixel its pen position falls in. */
export interface PlacedGlyph {
  key: string;
  x: number;
  y: number;
}

interface GlyphSpec {
  char: string;
  fontSize: number;
  weight: FontWeight;
  rotate: number;
  phaseX: number;
  phaseY: number;
}

const masks = new Map<string, GlyphMask | null>();
const pending = new Map<string, Promise<void>>();
const specs = new Map<string, GlyphSpec>();
/** Masks rasterised here since `takeNewGlyphs` last ran (what this thread can share with others). */
let fresh: GlyphEntry[] = [];

/** The glyphs of a text primitive, pen positions from the glyph table's advances along the (rotated) baseline. */
export function placeGlyphs(t: TextPrimitive): PlacedGlyph[] {
  const out: PlacedGlyph[] = [];
  const scale = t.fontSize / 1000;
  const angle = (t.rotate * Math.PI) / 180;
  // Exact for the angles layout uses (0, -45, -90): no drift from sin/cos rounding at ±90.
  const cos = t.rotate === -90 || t.rotate === 90 ? 0 : Math.cos(angle);
  const sin = t.rotate === 0 ? 0 : Math.sin(angle);
  let pen = 0;
  const prefix = `${t.weight === 'bold' ? 'b' : 'r'}${num(t.fontSize)}@${num(t.rotate)}:`;
  for (const char of t.content) {
    const [advance, xMin, xMax, yMin, yMax] = glyphMetrics(char, t.weight);
    if (xMax > xMin || yMax > yMin) {
      const qx = Math.round((t.x + cos * pen) * PHASES);
      const qy = Math.round((t.y + sin * pen) * PHASES);
      const phaseX = ((qx % PHASES) + PHASES) % PHASES;
      const phaseY = ((qy % PHASES) + PHASES) % PHASES;
      const key = `${prefix}${phaseX},${phaseY}:${char}`;
      if (!specs.has(key)) specs.set(key, { char, fontSize: t.fontSize, weight: t.weight, rotate: t.rotate, phaseX, phaseY });
      out.push({ key, x: (qx - phaseX) / PHASES, y: (qy - phaseY) / PHASES });
    }
    pen += advance * scale;
  }
  return out;
}

/** The mask of a glyph placeGlyphs named (null: it has no ink); `ensureGlyphs` must have finished for it. */
export function glyphMask(key: string): GlyphMask | null {
  const mask = masks.get(key);
  if (mask === undefined) throw new Error(`glyph ${key} was not rasterised (call ensureGlyphs first)`);
  return mask;
}

/** Rasterises every glyph among `keys` the cache lacks, in one sharp call (after reading the store, the first time). */
export async function ensureGlyphs(keys: Iterable<string>): Promise<void> {
  await loadStore();
  const missing: string[] = [];
  const waits: Promise<void>[] = [];
  const seen = new Set<string>();
  for (const key of keys) {
    if (masks.has(key) || seen.has(key)) continue;
    seen.add(key);
    const inFlight = pending.get(key);
    if (inFlight) waits.push(inFlight);
    else missing.push(key);
  }
  if (missing.length > 0) {
    const batch = renderIntoCache(missing).finally(() => missing.forEach((k) => pending.delete(k)));
    missing.forEach((k) => pending.set(k, batch));
    waits.push(batch);
  }
  await Promise.all(waits);
}

/** What names the renderer besides sharp's versions, for the store's file name. */
const RENDERER = { family: FONT_FAMILY, phases: PHASES, atlas: 'v1' };

/** Masks the store check re-renders: enough to catch a different font or hinting, a few ms. */
const STORE_SAMPLE = 16;

let storeLoad: Promise<void> | null = null;

/**
 * Digests of store files whose sample came out identical when re-rendered, in this thread or in
 * the thread that started it: the re-render (sharp and fontconfig, ~100 CPU ms) is paid once per
 * data set, not once per worker and again at the save.
 */
const verifiedStores = new Set<string>();

/** Store files (by digest) another thread of this process has verified: a task worker's start. */
export function trustVerifiedStores(digests: Iterable<string>): void {
  for (const digest of digests) verifiedStores.add(digest);
}

/** Checks the store on disk now, so the worker threads started next can trust it; returns the digests verified so far. */
export async function verifyStoreForWorkers(): Promise<string[]> {
  const path = glyphStorePath(RENDERER);
  if (path) await storeIsSound(readGlyphStoreFile(path));
  return [...verifiedStores];
}

async function storeIsSound({ entries, digest }: { entries: readonly GlyphEntry[]; digest: string | null }): Promise<boolean> {
  if (entries.length === 0 || digest === null) return false;
  if (verifiedStores.has(digest)) return true;
  if (!(await rendersAsStored(entries))) return false;
  verifiedStores.add(digest);
  return true;
}

/**
 * Reads the store once per thread: its masks join the cache if a sample of them, rendered
 * afresh, comes out identical (or the same file was verified already); otherwise the file is
 * ignored (and replaced at the next save).
 */
function loadStore(): Promise<void> {
  storeLoad ??= (async () => {
    const path = glyphStorePath(RENDERER);
    if (!path) return;
    const file = readGlyphStoreFile(path);
    if (!(await storeIsSound(file))) return;
    for (const [key, mask] of file.entries) if (!masks.has(key)) masks.set(key, mask);
  })();
  return storeLoad;
}

/** Whether a sample of stored masks, rendered afresh here, comes out identical. */
async function rendersAsStored(stored: readonly GlyphEntry[]): Promise<boolean> {
  const step = Math.max(1, Math.floor(stored.length / STORE_SAMPLE));
  const sample = stored.filter((_, i) => i % step === 0).slice(0, STORE_SAMPLE);
  const rerendered = await renderAtlas(sample.map(([key]) => key));
  return sample.every(([key, mask]) => sameMask(mask, rerendered.get(key) ?? null));
}

function sameMask(a: GlyphMask | null, b: GlyphMask | null): boolean {
  if (!a || !b) return a === b;
  return a.dx === b.dx && a.dy === b.dy && a.width === b.width && a.height === b.height && Buffer.from(a.alpha).equals(Buffer.from(b.alpha));
}

/**
 * Adds masks made in this process (by any of its threads) to the store on disk, for later runs;
 * a file whose masks fail the check is replaced instead. The data-set generator calls it once, at the end.
 */
export async function saveToStore(entries: readonly GlyphEntry[]): Promise<void> {
  const path = glyphStorePath(RENDERER);
  if (!path || entries.length === 0) return;
  const stored = readGlyphStoreFile(path);
  writeGlyphStore(path, (await storeIsSound(stored)) ? stored.entries : [], entries);
}

/** Cells per atlas row. */
const COLUMNS = 16;

/** Rasterises the glyphs into the cache (and the list of masks this thread made). */
async function renderIntoCache(keys: string[]): Promise<void> {
  for (const [key, mask] of await renderAtlas(keys)) {
    masks.set(key, mask);
    fresh.push([key, mask]);
  }
}

/** The spec a key names (the inverse of placeGlyphs' key): for keys read from the store. */
function specOfKey(key: string): GlyphSpec {
  const known = specs.get(key);
  if (known) return known;
  const m = /^([br])([\d.]+)@(-?[\d.]+):(\d+),(\d+):(.+)$/su.exec(key);
  if (!m) throw new Error(`unknown glyph ${key}`);
  return { weight: m[1] === 'b' ? 'bold' : 'normal', fontSize: Number(m[2]), rotate: Number(m[3]), phaseX: Number(m[4]), phaseY: Number(m[5]), char: m[6] as string };
}

/** One sharp call for many glyphs: a cell each, the pen at the cell's centre plus its phase. */
async function renderAtlas(keys: string[]): Promise<Map<string, GlyphMask | null>> {
  const list = keys.map(specOfKey);
  const out = new Map<string, GlyphMask | null>();
  // The pen sits at the cell's centre; ink stays within 1.5 em of the pen whatever the rotation.
  const half = Math.ceil(1.6 * Math.max(...list.map((s) => s.fontSize))) + 2;
  const cell = 2 * half;
  const rows = Math.ceil(list.length / COLUMNS);
  const width = cell * Math.min(COLUMNS, list.length);
  const height = cell * rows;
  const body = list.map((s, i) => {
    const px = (i % COLUMNS) * cell + half + s.phaseX / PHASES;
    const py = Math.floor(i / COLUMNS) * cell + half + s.phaseY / PHASES;
    const weight = s.weight === 'bold' ? ' font-weight="bold"' : '';
    const place = s.rotate ? `x="0" y="0" transform="translate(${num(px)} ${num(py)}) rotate(${num(s.rotate)})"` : `x="${num(px)}" y="${num(py)}"`;
    return `<text ${place} font-family="${FONT_FAMILY}" font-size="${num(s.fontSize)}"${weight} fill="#000000" xml:space="preserve">${escapeXml(s.char)}</text>`;
  }).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${body}</svg>`;
  const { data, info } = await sharp(Buffer.from(svg), { density: 72 }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 4 || info.width !== width || info.height !== height) throw new Error(`glyph atlas came back ${info.width}×${info.height}×${info.channels}, expected ${width}×${height}×4`);
  keys.forEach((key, i) => {
    const cx = (i % COLUMNS) * cell;
    const cy = Math.floor(i / COLUMNS) * cell;
    let x1 = cell, y1 = cell, x2 = -1, y2 = -1;
    for (let v = 0; v < cell; v++) {
      for (let u = 0; u < cell; u++) {
        if (data[((cy + v) * width + cx + u) * 4 + 3] === 0) continue;
        if (u < x1) x1 = u;
        if (u > x2) x2 = u;
        if (v < y1) y1 = v;
        if (v > y2) y2 = v;
      }
    }
    if (x2 < 0) {
      out.set(key, null);
      return;
    }
    if (x1 === 0 || y1 === 0 || x2 === cell - 1 || y2 === cell - 1) throw new Error(`glyph ${key} reaches its atlas cell's edge: the cell is too small`);
    const w = x2 - x1 + 1;
    const h = y2 - y1 + 1;
    const alpha = new Uint8Array(w * h);
    for (let v = 0; v < h; v++) for (let u = 0; u < w; u++) alpha[v * w + u] = data[((cy + y1 + v) * width + cx + x1 + u) * 4 + 3] as number;
    out.set(key, { dx: x1 - half, dy: y1 - half, width: w, height: h, alpha });
  });
  return out;
}

/**
 * The masks rasterised in this thread since the last call, for other threads of the same process
 * (the task pool's workers share them, so each glyph is rasterised about once per data set).
 * A mask is a pure function of its key, so one made anywhere is the one this thread would make.
 */
export function takeNewGlyphs(): GlyphEntry[] {
  const taken = fresh;
  fresh = [];
  return taken;
}

/** Masks another thread rasterised (see takeNewGlyphs). */
export function addGlyphs(entries: readonly GlyphEntry[]): void {
  for (const [key, mask] of entries) if (!masks.has(key)) masks.set(key, mask);
}

/** How many glyph masks the cache holds (for the bench). */
export function cachedGlyphs(): number {
  return masks.size;
}
