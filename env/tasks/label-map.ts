/**
 * The checker's eyes: which mark painted which pixel, read from real rasterised pixels.
 *
 * Text is drawn into the image from glyph rasters (draw-text.ts), so every pixel a label inks is
 * known as it is inked: those are the image's own pixels, not a second drawing of them. A
 * whole-pixel rectangle (a bar, a swatch) inks exactly its pixels (fill-rects.ts). Any other
 * shape mark (a line chart's points) is drawn again alone, in black on white, in its own clipping
 * cell of an atlas below the image in the same SVG — one sharp call for the image and every such
 * mark. librsvg draws a shape translated by whole pixels into exactly the same pixels, so a
 * cell's ink is the mark's ink in the image. A cell spans the shape's geometric bounds plus a
 * margin; ink on the margin's outer ring means the bounds were short, and the mark is measured
 * again on a cell the size of the canvas.
 *
 * A pixel inked by two marks is a CONFLICT, attributed to neither.
 */
import type { BBox } from '../tools/metadata.js';
import type { RgbImage } from '../core/image.js';
import { paintGlyphs, placeGlyphs, type PlacedGlyph } from './draw-text.js';
import { loadGlyphs, type GlyphKey } from './glyph-cache.js';
import { InkLedger } from './ink-ledger.js';
import { fillRects, isPixelRect, rectPixels } from './fill-rects.js';
import { isMark, rasteriseOpaque, rectShape, shapeSvg, type Mark, type Paint, type Rect, type Scene, type Shape } from './scene.js';
import { rect } from './svg.js';

export { CONFLICT, NO_INK } from './ink-ledger.js';

export interface LabelMap {
  width: number;
  height: number;
  /** Per pixel: index into `marks`, NO_INK, or CONFLICT. */
  ids: Int16Array;
  marks: Mark[];
  /** Per mark: the bounding box of its pixels (half-open), or null if it painted nothing. */
  extents: (BBox | null)[];
  /** Pixels where marks overlap, and the first such pixel (in raster order). */
  conflicts: number;
  firstConflict: { x: number; y: number } | null;
}

/** Pixels around a shape mark's bounds that its cell also covers (anti-aliasing, rounding). */
const CELL_MARGIN_PX = 2;

/** A shape mark's cell: the canvas region it measures, and where that region sits in the atlas. */
interface Cell {
  mark: number;
  svg: string;
  region: BBox;
  x: number;
  y: number;
}

function clampedRegion(bounds: BBox | undefined, width: number, height: number): BBox {
  if (!bounds) return { x1: 0, y1: 0, x2: width, y2: height };
  return {
    x1: Math.max(0, Math.floor(bounds.x1) - CELL_MARGIN_PX),
    y1: Math.max(0, Math.floor(bounds.y1) - CELL_MARGIN_PX),
    x2: Math.min(width, Math.ceil(bounds.x2) + CELL_MARGIN_PX),
    y2: Math.min(height, Math.ceil(bounds.y2) + CELL_MARGIN_PX),
  };
}

/** Shelf-packs the cells below the image, `top` px down, each row at most `width` wide. */
function packCells(cells: Omit<Cell, 'x' | 'y'>[], width: number, top: number): { cells: Cell[]; height: number } {
  const placed: Cell[] = [];
  let x = 0, y = top, rowH = 0;
  for (const cell of cells) {
    const w = cell.region.x2 - cell.region.x1;
    const h = cell.region.y2 - cell.region.y1;
    if (x > 0 && x + w > width) {
      x = 0;
      y += rowH;
      rowH = 0;
    }
    placed.push({ ...cell, x, y });
    x += w;
    rowH = Math.max(rowH, h);
  }
  return { cells: placed, height: y + rowH - top };
}

/** A mark drawn in its own colours, its text laid out glyph by glyph: once per mark, however often asked. */
const coloured = new WeakMap<Mark, { paint: Paint; runs: { fill: string; glyphs: PlacedGlyph[] }[] }>();

function inColour(mark: Mark): { paint: Paint; runs: { fill: string; glyphs: PlacedGlyph[] }[] } {
  let drawn = coloured.get(mark);
  if (!drawn) {
    const paint = mark.draw(null);
    drawn = { paint, runs: paint.text.map((run) => ({ fill: run.fill, glyphs: placeGlyphs(run) })) };
    coloured.set(mark, drawn);
  }
  return drawn;
}

/** A cell as a nested <svg>: a viewport that clips the mark to its region. */
function cellSvg(cell: Cell): string {
  const { region } = cell;
  return `<svg x="${cell.x}" y="${cell.y}" width="${region.x2 - region.x1}" height="${region.y2 - region.y1}"><g transform="translate(${-region.x1} ${-region.y1})">${cell.svg}</g></svg>`;
}

/**
 * Claims each cell's ink for its mark. Returns the cells whose ink reached an edge of their
 * region that is not the canvas edge: their bounds were short, so they must be measured again.
 */
function readCells(data: Buffer, stride: number, cells: readonly Cell[], ledger: InkLedger): Cell[] {
  const short: Cell[] = [];
  for (const cell of cells) {
    const { region } = cell;
    const w = region.x2 - region.x1;
    const h = region.y2 - region.y1;
    let escaped = false;
    for (let y = 0; y < h && !escaped; y++) {
      for (let x = 0; x < w; x++) {
        const o = ((cell.y + y) * stride + cell.x + x) * 3;
        if (data[o] === 255 && data[o + 1] === 255 && data[o + 2] === 255) continue;
        const cx = region.x1 + x;
        const cy = region.y1 + y;
        if ((x === 0 && cx > 0) || (y === 0 && cy > 0) || (x === w - 1 && cx < ledger.width - 1) || (y === h - 1 && cy < ledger.height - 1)) {
          escaped = true;
          break;
        }
        ledger.claim(cx, cy, cell.mark);
      }
    }
    if (escaped) short.push(cell);
  }
  return short;
}

async function renderCells(cells: Omit<Cell, 'x' | 'y'>[], width: number, ledger: InkLedger): Promise<Cell[]> {
  const packed = packCells(cells, width, 0);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${packed.height}" viewBox="0 0 ${width} ${packed.height}">${rect(0, 0, width, packed.height, '#ffffff')}${packed.cells.map(cellSvg).join('')}</svg>`;
  const atlas = await rasteriseOpaque(svg);
  return readCells(atlas.data, width, packed.cells, ledger);
}

/**
 * Renders the scene and its label map. A scene of whole-pixel rectangles (tables, bar charts) is
 * filled directly (fill-rects.ts); any other goes through librsvg, its non-rectangle shape marks
 * each in an atlas cell of the same SVG. Meanwhile the glyphs its labels need are drawn (once per
 * process); then the text is painted from them, every inked pixel claimed by its mark.
 */
export async function renderWithLabelMap(scene: Scene): Promise<{ image: RgbImage; labelMap: LabelMap }> {
  const { width, height } = scene;
  const marks: Mark[] = [];
  const shapes: Shape[] = [rectShape(0, 0, width, height, scene.background)];
  const texts: { mark: number; fill: string; glyphs: PlacedGlyph[] }[] = [];
  const exact: { mark: number; box: BBox }[] = [];
  const cells: Omit<Cell, 'x' | 'y'>[] = [];
  for (const layer of scene.layers) {
    if (!isMark(layer)) {
      shapes.push(layer);
      continue;
    }
    const id = marks.push(layer) - 1;
    const { paint, runs } = inColour(layer);
    shapes.push(...paint.shapes);
    for (const run of runs) texts.push({ mark: id, ...run });
    const alone = paint.shapes.length > 0 ? layer.draw('#000000').shapes : [];
    paint.shapes.forEach((shape, k) => {
      if ('rect' in shape && isPixelRect(shape.rect)) exact.push({ mark: id, box: rectPixels(shape.rect, width, height) });
      else {
        const black = alone[k];
        if (!black || ('rect' in black) !== ('rect' in shape)) throw new Error(`${layer.name} paints other shapes in black than in its colours`);
        cells.push({ mark: id, svg: shapeSvg(black), region: clampedRegion('rect' in black ? rectBounds(black.rect) : black.bounds, width, height) });
      }
    });
  }
  const glyphs = loadGlyphs(texts.flatMap((t) => t.glyphs));
  const ledger = new InkLedger(width, height, marks.length);
  let image: RgbImage;
  if (shapes.every((s) => 'rect' in s && isPixelRect(s.rect))) {
    image = fillRects(width, height, shapes.map((s) => (s as { rect: Rect }).rect));
    await glyphs;
  } else {
    const packed = packCells(cells, width, height);
    const total = height + packed.height;
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${total}" viewBox="0 0 ${width} ${total}">${rect(0, 0, width, total, '#ffffff')}` +
      `<svg x="0" y="0" width="${width}" height="${height}">${shapes.map(shapeSvg).join('')}</svg>${packed.cells.map(cellSvg).join('')}</svg>`;
    const [rendered] = await Promise.all([rasteriseOpaque(svg), glyphs]);
    const short = readCells(rendered.data, width, packed.cells, ledger);
    if (short.length > 0) {
      const again = short.map((c) => ({ mark: c.mark, svg: c.svg, region: clampedRegion(undefined, width, height) }));
      const still = await renderCells(again, width, ledger);
      if (still.length > 0) throw new Error(`label map: ${marks[still[0]!.mark]!.name} escaped a cell the size of the canvas`);
    }
    image = { width, height, data: rendered.data.subarray(0, width * height * 3) };
  }
  for (const { mark, box } of exact) ledger.claimBox(box, mark);
  for (const t of texts) paintGlyphs(image, t.fill, t.glyphs, ledger, t.mark);
  return {
    image,
    labelMap: { width, height, ids: ledger.ids, marks, extents: ledger.extents(), conflicts: ledger.conflicts, firstConflict: ledger.firstConflict() },
  };
}

function rectBounds(r: Rect): BBox {
  return { x1: r.x, y1: r.y, x2: r.x + r.width, y2: r.y + r.height };
}

/** Every glyph the scene's labels draw (to draw the missing ones ahead, for several scenes at once). */
export function sceneGlyphs(scene: Scene): GlyphKey[] {
  return scene.layers.filter(isMark).flatMap((m) => inColour(m).runs.flatMap((run) => run.glyphs));
}

/** The label map alone (for checking a stored task whose image is already on disk). */
export async function renderLabelMap(scene: Scene): Promise<LabelMap> {
  return (await renderWithLabelMap(scene)).labelMap;
}

/** How many pixels of mark `id` fall inside `box` (half-open). */
export function inkInside(map: LabelMap, id: number, box: BBox): number {
  const extent = map.extents[id];
  if (!extent) return 0;
  const x1 = Math.max(extent.x1, Math.ceil(box.x1));
  const x2 = Math.min(extent.x2, Math.ceil(box.x2));
  const y1 = Math.max(extent.y1, Math.ceil(box.y1));
  const y2 = Math.min(extent.y2, Math.ceil(box.y2));
  let count = 0;
  for (let y = y1; y < y2; y++) for (let x = x1; x < x2; x++) if (map.ids[y * map.width + x] === id) count++;
  return count;
}
