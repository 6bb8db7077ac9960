/**
 * Glyph rasters: each character at each size, weight, angle and quarter-pixel position, drawn
 * once by sharp (librsvg + pango, DejaVu Sans, the path the metrics table was derived on) and
 * kept as coverage by the thread (and passed to the other workers, task-worker.ts). librsvg
 * draws text as paths, a few hundredths of a millisecond per glyph, every time; a dense table
 * has thousands of glyphs and was most of a task's time. Reused rasters make text cost what
 * copying its pixels costs.
 *
 * Exactness: librsvg draws a glyph translated by whole pixels into exactly the same pixels
 * (tested), so a raster drawn at origin (cx + fx, cy + fy) in an atlas cell is the glyph at any
 * origin (n + fx, m + fy). Each cell is a clipping viewport, and a glyph whose ink reaches its
 * cell's edge is drawn again in a larger cell, so a raster never misses ink nor holds a neighbour's.
 */
import { rasteriseOpaque } from './scene.js';
import { text } from './svg.js';
import type { FontWeight } from './text-metrics.js';

/** Pen positions snap to this fraction of a pixel, in x and in y. */
export const PHASES = 4;

export interface GlyphKey {
  char: string;
  fontSize: number;
  weight: FontWeight;
  /** Degrees, SVG sense. */
  rotate: number;
  /** Sub-pixel position of the origin, in 1/PHASES px: 0 ≤ phase < PHASES. */
  phaseX: number;
  phaseY: number;
}

/** Coverage (0 none, 255 full) of the pixels around a glyph's integer origin. */
export interface GlyphRaster {
  /** Offset of the raster's top-left pixel from the origin pixel. */
  left: number;
  top: number;
  width: number;
  height: number;
  coverage: Uint8Array;
}

/** One font at one size, weight and angle, and the rasters of its glyphs drawn so far. */
export class Face {
  readonly id: string;
  /** By glyphCode(char, phaseX, phaseY): numbers, so the hot path hashes no strings. */
  readonly rasters = new Map<number, GlyphRaster | null>();

  constructor(readonly fontSize: number, readonly weight: FontWeight, readonly rotate: number) {
    this.id = faceId(fontSize, weight, rotate);
  }
}

const faces = new Map<string, Face>();
let rasterCount = 0;

function faceId(fontSize: number, weight: FontWeight, rotate: number): string {
  return `${weight === 'bold' ? 'b' : 'r'}${fontSize}/${rotate}`;
}

export function faceOf(fontSize: number, weight: FontWeight, rotate: number): Face {
  const id = faceId(fontSize, weight, rotate);
  let face = faces.get(id);
  if (!face) faces.set(id, (face = new Face(fontSize, weight, rotate)));
  return face;
}

export function glyphCode(char: string, phaseX: number, phaseY: number): number {
  return (char.codePointAt(0) as number) * PHASES * PHASES + phaseX * PHASES + phaseY;
}

/** A glyph key with its face and code already looked up (draw-text.ts places glyphs so). */
export interface GlyphRef extends GlyphKey {
  face: Face;
  code: number;
}

function refOf(key: GlyphKey): GlyphRef {
  if ('face' in key && 'code' in key) return key as GlyphRef;
  return { ...key, face: faceOf(key.fontSize, key.weight, key.rotate), code: glyphCode(key.char, key.phaseX, key.phaseY) };
}

export function glyphId(key: GlyphKey): string {
  return `${faceId(key.fontSize, key.weight, key.rotate)}/${key.phaseX}${key.phaseY}/${key.char}`;
}

/** A loaded glyph: null when it has no ink (a space). Throws if `loadGlyphs` has not drawn it. */
export function glyphRaster(key: GlyphKey): GlyphRaster | null {
  const ref = refOf(key);
  const raster = ref.face.rasters.get(ref.code);
  if (raster === undefined) throw new Error(`glyph ${glyphId(key)} was never loaded`);
  return raster;
}

/** How many glyph rasters this thread holds (for the benchmark). */
export function cachedGlyphCount(): number {
  return rasterCount;
}

function store(ref: GlyphRef, raster: GlyphRaster | null): void {
  if (ref.face.rasters.has(ref.code)) return;
  ref.face.rasters.set(ref.code, raster);
  rasterCount++;
}

export type GlyphEntry = [key: GlyphKey, raster: GlyphRaster | null];

const listeners: ((drawn: GlyphEntry[]) => void)[] = [];

/** Calls `listener` with the glyphs this thread draws from now on (to share them with other threads). */
export function onGlyphsDrawn(listener: (drawn: GlyphEntry[]) => void): void {
  listeners.push(listener);
}

/** Glyphs another thread drew: the same rasters this one would draw, so taking them changes no pixel. */
export function addGlyphs(entries: readonly GlyphEntry[]): void {
  for (const [key, raster] of entries) store(refOf(key), raster);
}

interface Cell {
  id: string;
  key: GlyphRef;
  /** Half the cell's side: the origin sits at the centre. */
  half: number;
  x: number;
  y: number;
}

/** Widest an atlas is drawn; cells wrap onto new rows beyond it. */
const ATLAS_WIDTH = 1024;

const loading = new Map<string, Promise<void>>();

/** Half the side of a glyph's first cell, in ems: room for any DejaVu glyph, at any angle, from its origin. */
const CELL_EM = 1.7;

/**
 * Draws every glyph not drawn yet (one sharp call per round); glyphs already being drawn are
 * awaited. `cellEm` sizes the first cell (tests start it too small to see glyphs drawn again).
 */
export async function loadGlyphs(keys: Iterable<GlyphKey>, options: { cellEm?: number } = {}): Promise<void> {
  const waits = new Set<Promise<void>>();
  let missing: Map<string, GlyphRef> | null = null;
  for (const key of keys) {
    const ref = refOf(key);
    if (ref.face.rasters.has(ref.code)) continue;
    const id = glyphId(ref);
    if (missing?.has(id)) continue;
    const inFlight = loading.get(id);
    if (inFlight) waits.add(inFlight);
    else (missing ??= new Map()).set(id, ref);
  }
  if (missing) {
    const drawing = drawGlyphs(missing, options.cellEm ?? CELL_EM).finally(() => {
      for (const id of (missing as Map<string, GlyphRef>).keys()) loading.delete(id);
    });
    for (const id of missing.keys()) loading.set(id, drawing);
    waits.add(drawing);
  }
  await Promise.all(waits);
}

async function drawGlyphs(missing: Map<string, GlyphRef>, cellEm: number): Promise<void> {
  let pending = new Map([...missing].map(([id, key]) => [id, { key, scale: 1 }]));
  while (pending.size > 0) {
    const retry = new Map<string, { key: GlyphRef; scale: number }>();
    const cells = packCells([...pending].map(([id, { key, scale }]) => ({ id, key, half: Math.ceil(key.fontSize * cellEm * scale) + 2 })));
    const width = Math.max(...cells.map((c) => c.x + 2 * c.half));
    const height = Math.max(...cells.map((c) => c.y + 2 * c.half));
    // A nested <svg> is a viewport that clips what it holds: cheaper in librsvg than clip-path.
    const body = cells.map((c) => {
      const { key } = c;
      const origin = c.half;
      return `<svg x="${c.x}" y="${c.y}" width="${2 * c.half}" height="${2 * c.half}">${text(origin + key.phaseX / PHASES, origin + key.phaseY / PHASES, key.char, '#000000', { fontSize: key.fontSize, weight: key.weight, rotate: key.rotate })}</svg>`;
    }).join('');
    const atlas = await rasteriseOpaque(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>${body}</svg>`);
    const drawn: GlyphEntry[] = [];
    for (const cell of cells) {
      const raster = readCell(atlas.data, width, cell);
      if (raster === 'edge') {
        const scale = (pending.get(cell.id)?.scale ?? 1) * 2;
        if (scale > 64) throw new Error(`glyph ${cell.id} still reaches the edge of a ${2 * cell.half} px cell`);
        retry.set(cell.id, { key: cell.key, scale });
      } else {
        store(cell.key, raster);
        const { char, fontSize, weight, rotate, phaseX, phaseY } = cell.key;
        drawn.push([{ char, fontSize, weight, rotate, phaseX, phaseY }, raster]);
      }
    }
    if (drawn.length > 0) for (const listener of listeners) listener(drawn);
    pending = retry;
  }
}

function packCells(cells: Omit<Cell, 'x' | 'y'>[]): Cell[] {
  const placed: Cell[] = [];
  let x = 0, y = 0, rowH = 0;
  for (const cell of cells) {
    const side = 2 * cell.half;
    if (x > 0 && x + side > ATLAS_WIDTH) {
      x = 0;
      y += rowH;
      rowH = 0;
    }
    placed.push({ ...cell, x, y });
    x += side;
    rowH = Math.max(rowH, side);
  }
  return placed;
}

/** The cell's ink as coverage, cropped to the ink; 'edge' when ink touches the cell's border. */
function readCell(data: Buffer, stride: number, cell: Cell): GlyphRaster | null | 'edge' {
  const side = 2 * cell.half;
  const dark = (x: number, y: number) => {
    const o = ((cell.y + y) * stride + cell.x + x) * 3;
    return 255 - Math.min(data[o] as number, data[o + 1] as number, data[o + 2] as number);
  };
  let x1 = side, y1 = side, x2 = 0, y2 = 0;
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      if (dark(x, y) === 0) continue;
      if (x === 0 || y === 0 || x === side - 1 || y === side - 1) return 'edge';
      if (x < x1) x1 = x;
      if (y < y1) y1 = y;
      if (x + 1 > x2) x2 = x + 1;
      if (y + 1 > y2) y2 = y + 1;
    }
  }
  if (x2 === 0) return null;
  const width = x2 - x1;
  const height = y2 - y1;
  const coverage = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) coverage[y * width + x] = dark(x1 + x, y1 + y);
  return { left: x1 - cell.half, top: y1 - cell.half, width, height, coverage };
}
