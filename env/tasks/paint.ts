/**
 * Rasterises a scene in JS, in paint order, into a tightly packed RGB buffer, and records the
 * checker's label map on the way: every pixel a mark's primitive covers at all (coverage > 0 after
 * rounding to 8 bits, the very coverage blended into the image) is that mark's, and a pixel two
 * marks both cover is a CONFLICT. The map is therefore exact on the real pixels: what the
 * checker measures is the ink the image has.
 *
 * Coverage, per primitive (blended source-over in 8-bit sRGB, as cairo does):
 * - rect: the exact area of the pixel the rectangle covers (whole-pixel rects are solid);
 * - circle: clamp(r + ½ − distance from the pixel centre, 0, 1);
 * - polyline (round joins): clamp(w/2 + ½ − distance to the nearest segment, 0, 1), the union of
 *   its segments, blended once;
 * - text: glyph masks from glyph-cache.ts at the glyph table's pen positions.
 *
 * A circle's or a stroke's coverage depends only on where it lies relative to the pixel grid, so
 * one drawn again a whole number of pixels away has the same coverage. Where every coordinate is
 * a multiple of ½ (a search scene's objects and pebbles: hundreds per scene, a dozen distinct
 * sizes), the arithmetic is exact and the coverage computed once is reused bit for bit.
 */
import type { RgbImage } from '../core/image.js';
import { LruCache } from '../core/lru-cache.js';
import { releaseBuffers, takeFloat32s, takeInt32s, takePixels } from '../core/pixel-pool.js';
import { ensureGlyphs, glyphMask, placeGlyphs, type PlacedGlyph } from './glyph-cache.js';
import { CONFLICT, labelMapFromIds, NO_INK, type LabelMap } from './label-map.js';
import { isMark, sceneMarks, type Mark, type Scene } from './scene.js';
import type { CirclePrimitive, PolylinePrimitive, Primitive, RectPrimitive } from './svg.js';

type Rgb = readonly [number, number, number];

const colours = new Map<string, Rgb>();

export function parseColour(fill: string): Rgb {
  let c = colours.get(fill);
  if (c) return c;
  const hex = /^#([0-9a-f]{6})$/i.exec(fill);
  const rgb = /^rgb\((\d+),(\d+),(\d+)\)$/.exec(fill);
  if (hex) {
    const v = parseInt(hex[1] as string, 16);
    c = [(v >> 16) & 255, (v >> 8) & 255, v & 255];
  } else if (rgb) c = [Number(rgb[1]), Number(rgb[2]), Number(rgb[3])];
  else throw new Error(`paint: cannot read the colour '${fill}' (write #rrggbb or rgb(r,g,b))`);
  colours.set(fill, c);
  return c;
}

/** Scratch for a rect's per-column coverage, reused: a table paints hundreds of rects, each would otherwise allocate. */
let columnCover = new Float64Array(1024);
/** Scratch for the pixels a stroke reaches (indices into its box), reused for the same reason. */
let touchedScratch = new Int32Array(4096);

/** A primitive's 8-bit coverage over its drawing box: the pixels it reaches (box-relative) and their coverage (1–255). */
interface Coverage {
  count: number;
  cols: Int32Array;
  rows: Int32Array;
  alpha: Uint8Array;
  /** Stretches of full coverage along a row, as (row, first column, length) triples; their pixels are not in the lists above. */
  runs: Int32Array;
}

const NO_RUNS = new Int32Array(0);

/** A coverage being computed, in scratch arrays that grow as needed and are reused. */
const scratch: Coverage = { count: 0, cols: new Int32Array(4096), rows: new Int32Array(4096), alpha: new Uint8Array(4096), runs: NO_RUNS };

function pushCoverage(u: number, v: number, a: number): void {
  if (scratch.count === scratch.alpha.length) {
    const grow = <T extends Int32Array | Uint8Array>(old: T, made: T): T => {
      made.set(old);
      return made;
    };
    scratch.cols = grow(scratch.cols, new Int32Array(2 * scratch.count));
    scratch.rows = grow(scratch.rows, new Int32Array(2 * scratch.count));
    scratch.alpha = grow(scratch.alpha, new Uint8Array(2 * scratch.count));
  }
  scratch.cols[scratch.count] = u;
  scratch.rows[scratch.count] = v;
  scratch.alpha[scratch.count++] = a;
}

/** Full coverage along this many pixels of a row or more is kept as a run, written as one. */
const MIN_RUN = 4;

/**
 * The scratch coverage as one to keep: its fully covered stretches as runs, the rest pixel by
 * pixel. A shape drawn again is mostly its solid inside, which a run writes at once.
 */
function keepCoverage(): Coverage {
  const n = scratch.count;
  const { cols, rows, alpha } = scratch;
  const order = Array.from({ length: n }, (_, k) => k).sort((a, b) => (rows[a] as number) - (rows[b] as number) || (cols[a] as number) - (cols[b] as number));
  const single: number[] = [];
  const runs: number[] = [];
  for (let i = 0; i < n;) {
    let j = i + 1;
    const first = order[i] as number;
    if (alpha[first] === 255) {
      while (j < n && alpha[order[j] as number] === 255 && rows[order[j] as number] === rows[first] && cols[order[j] as number] === (cols[first] as number) + (j - i)) j++;
    }
    if (j - i >= MIN_RUN) runs.push(rows[first] as number, cols[first] as number, j - i);
    else for (let k = i; k < j; k++) single.push(order[k] as number);
    i = j;
  }
  return {
    count: single.length,
    cols: Int32Array.from(single, (k) => cols[k] as number),
    rows: Int32Array.from(single, (k) => rows[k] as number),
    alpha: Uint8Array.from(single, (k) => alpha[k] as number),
    runs: Int32Array.from(runs),
  };
}

/**
 * Coverages by shape and position relative to their drawing box. A search scene draws a dozen or
 * so distinct ones; a bound keeps scenes of arbitrary strokes (a line chart's, which rarely repeat) from growing it.
 */
const coverages = new LruCache<string, Coverage>(256);

/** Whether v is a multiple of ½ small enough that sums and products of such values are exact in a double. */
const onHalfGrid = (v: number): boolean => Number.isInteger(v * 2) && Math.abs(v) < 2 ** 20;

// Local copies of the label-map codes: the per-pixel loops below read them millions of times, and
// a module namespace's export (what tsx turns an import into) is a getter call each time.
const UNOWNED = NO_INK;
const CLASH = CONFLICT;

/**
 * The loops are written out per primitive (no per-pixel method call, no colour array): painting is
 * most of a task's CPU. Each pixel still gets exactly the coverage the formulas in the header give,
 * computed by the same expressions, so the pixels do not depend on how the loops are arranged.
 */
class Painter {
  readonly data: Buffer;
  readonly ids: Int32Array;
  /** The mark being painted (its index), or NO_INK for plain layers. */
  mark = UNOWNED;
  /** Per mark, [x1, y1, x2, y2]: the union of the boxes its primitives were drawn in (every pixel it claims lies inside). */
  readonly searchBoxes: Int32Array;
  /** Pixels that became CONFLICT, and the first of them in row-major order. */
  conflicts = 0;
  firstConflict = Infinity;

  constructor(readonly width: number, readonly height: number, background: Rgb, markCount: number) {
    this.data = takePixels(width * height * 3);
    if (background[0] === background[1] && background[1] === background[2]) this.data.fill(background[0]);
    else for (let p = 0; p < width * height; p++) {
      this.data[p * 3] = background[0];
      this.data[p * 3 + 1] = background[1];
      this.data[p * 3 + 2] = background[2];
    }
    this.ids = takeInt32s(width * height).fill(UNOWNED);
    this.searchBoxes = new Int32Array(markCount * 4);
    for (let m = 0; m < markCount; m++) this.searchBoxes.set([width, height, 0, 0], m * 4);
  }

  /** Widens the current mark's search box to hold [x1, x2) × [y1, y2). */
  private search(x1: number, y1: number, x2: number, y2: number): void {
    if (this.mark === UNOWNED || x2 <= x1 || y2 <= y1) return;
    const b = this.searchBoxes, o = this.mark * 4;
    if (x1 < (b[o] as number)) b[o] = x1;
    if (y1 < (b[o + 1] as number)) b[o + 1] = y1;
    if (x2 > (b[o + 2] as number)) b[o + 2] = x2;
    if (y2 > (b[o + 3] as number)) b[o + 3] = y2;
  }

  /** Claims pixel p for the current mark; a pixel another mark claimed becomes CONFLICT (counted once). */
  private claim(p: number, mark: number): void {
    const ids = this.ids;
    const owner = ids[p] as number;
    if (owner === UNOWNED) ids[p] = mark;
    else if (owner !== mark && owner !== CLASH) {
      ids[p] = CLASH;
      this.conflicts++;
      if (p < this.firstConflict) this.firstConflict = p;
    }
  }

  /** Blends (r, g, b) at coverage a (1–255) into pixel p, source-over in 8 bits, and claims p for the current mark. */
  blend(p: number, r: number, g: number, b: number, a: number): void {
    const o = p * 3;
    const d = this.data;
    if (a >= 255) {
      d[o] = r;
      d[o + 1] = g;
      d[o + 2] = b;
    } else {
      const k = 255 - a;
      d[o] = ((d[o] as number) * k + r * a + 127) / 255;
      d[o + 1] = ((d[o + 1] as number) * k + g * a + 127) / 255;
      d[o + 2] = ((d[o + 2] as number) * k + b * a + 127) / 255;
    }
    const mark = this.mark;
    if (mark !== UNOWNED) this.claim(p, mark);
  }

  /** Pixels [p, p + count) at full coverage: one colour written straight, each pixel claimed. */
  solidRun(p: number, count: number, r: number, g: number, b: number): void {
    const d = this.data;
    if (r === g && g === b) d.fill(r, p * 3, (p + count) * 3);
    else for (let o = p * 3, end = (p + count) * 3; o < end; o += 3) {
      d[o] = r;
      d[o + 1] = g;
      d[o + 2] = b;
    }
    const mark = this.mark;
    if (mark === UNOWNED) return;
    const ids = this.ids;
    for (let q = p; q < p + count; q++) {
      if (ids[q] === UNOWNED) ids[q] = mark;
      else this.claim(q, mark);
    }
  }

  rect(rect: RectPrimitive): void {
    const [r, g, b] = parseColour(rect.fill);
    const right = rect.x + rect.width, bottom = rect.y + rect.height;
    const x1 = Math.max(0, Math.floor(rect.x)), x2 = Math.min(this.width, Math.ceil(right));
    const y1 = Math.max(0, Math.floor(rect.y)), y2 = Math.min(this.height, Math.ceil(bottom));
    if (x2 <= x1 || y2 <= y1) return;
    this.search(x1, y1, x2, y2);
    // Per-column coverage. The columns a rect covers wholly (cx = 1) are exactly those between its
    // partial edge columns, so in a row it covers wholly (cy = 1) they are one solid run.
    if (columnCover.length < x2 - x1) columnCover = new Float64Array(2 * (x2 - x1));
    const cxs = columnCover;
    let full1 = x2, full2 = x2;
    for (let x = x1; x < x2; x++) {
      const cx = Math.min(x + 1, right) - Math.max(x, rect.x);
      cxs[x - x1] = cx;
      if (cx === 1 && full1 === x2) full1 = x;
      if (cx === 1) full2 = x + 1;
    }
    for (let y = y1; y < y2; y++) {
      const cy = Math.min(y + 1, bottom) - Math.max(y, rect.y);
      const row = y * this.width;
      for (let x = x1; x < x2; x++) {
        if (cy === 1 && x === full1) {
          this.solidRun(row + x, full2 - full1, r, g, b);
          x = full2 - 1;
          continue;
        }
        const a = Math.round((cxs[x - x1] as number) * cy * 255);
        if (a > 0) this.blend(row + x, r, g, b, a);
      }
    }
  }

  /**
   * Plain rects (isPlainRect), in paint order: a background texture's thousands of tiles or
   * bricks. Between two consecutive rect edges every row is covered by the same rects, each
   * opaque, so those rows come out identical where covered: the band's first row is painted rect
   * by rect and copied down, a copy per row instead of a fill per rect per row.
   */
  plainRects(rects: readonly RectPrimitive[]): void {
    const { width, height } = this;
    const n = rects.length;
    const box = new Int32Array(4 * n);
    const edges: number[] = [];
    rects.forEach((k, i) => {
      box[4 * i] = Math.max(0, k.x);
      box[4 * i + 1] = Math.max(0, k.y);
      box[4 * i + 2] = Math.min(width, k.x + k.width);
      box[4 * i + 3] = Math.min(height, k.y + k.height);
      edges.push(box[4 * i + 1] as number, box[4 * i + 3] as number);
    });
    const cuts = [...new Set(edges)].sort((a, b) => a - b);
    // Rects by their top edge, taken into the band's set as the bands come down.
    const byTop = Array.from({ length: n }, (_, i) => i).sort((a, b) => (box[4 * a + 1] as number) - (box[4 * b + 1] as number));
    let taken = 0;
    let active: number[] = [];
    const stride = width * 3;
    const d = this.data;
    for (let c = 0; c + 1 < cuts.length; c++) {
      const top = cuts[c] as number, bottom = cuts[c + 1] as number;
      if (top >= height) break;
      while (taken < n && (box[4 * (byTop[taken] as number) + 1] as number) <= top) active.push(byTop[taken++] as number);
      active = active.filter((i) => (box[4 * i + 3] as number) > top && (box[4 * i + 2] as number) > (box[4 * i] as number));
      // In paint order, so that where rects overlap the later one wins, as painted one by one.
      active.sort((a, b) => a - b);
      const spans: [number, number][] = [];
      for (const i of active) {
        const x1 = box[4 * i] as number, x2 = box[4 * i + 2] as number;
        const [r, g, b] = parseColour((rects[i] as RectPrimitive).fill);
        this.solidRun(top * width + x1, x2 - x1, r, g, b);
        spans.push([x1, x2]);
      }
      if (spans.length === 0) continue;
      // The covered columns as disjoint intervals: only those rows are the same across the band.
      spans.sort((a, b) => a[0] - b[0]);
      const covered: [number, number][] = [];
      for (const [x1, x2] of spans) {
        const last = covered[covered.length - 1];
        if (last && x1 <= last[1]) last[1] = Math.max(last[1], x2);
        else covered.push([x1, x2]);
      }
      for (let y = top + 1; y < bottom; y++) for (const [x1, x2] of covered) d.copyWithin(y * stride + x1 * 3, top * stride + x1 * 3, top * stride + x2 * 3);
    }
  }

  circle(k: CirclePrimitive): void {
    const [r, g, b] = parseColour(k.fill);
    const bx1 = Math.floor(k.cx - k.r - 1), bx2 = Math.ceil(k.cx + k.r + 1);
    const by1 = Math.floor(k.cy - k.r - 1), by2 = Math.ceil(k.cy + k.r + 1);
    const x1 = Math.max(0, bx1), x2 = Math.min(this.width, bx2);
    const y1 = Math.max(0, by1), y2 = Math.min(this.height, by2);
    this.search(x1, y1, x2, y2);
    const unclipped = x1 === bx1 && x2 === bx2 && y1 === by1 && y2 === by2;
    const key = unclipped && onHalfGrid(k.cx) && onHalfGrid(k.cy) && onHalfGrid(k.r) ? `c ${k.cx - x1} ${k.cy - y1} ${k.r}` : null;
    let cover = key === null ? undefined : coverages.get(key);
    if (!cover) {
      scratch.count = 0;
      // Coverage is 0 from r + ½ out: such pixels are skipped on their squared distance (no square root).
      const reach = k.r + 0.5;
      const reach2 = reach * reach;
      for (let y = y1; y < y2; y++) {
        for (let x = x1; x < x2; x++) {
          const ex = x + 0.5 - k.cx, ey = y + 0.5 - k.cy;
          if (ex * ex + ey * ey >= reach2) continue;
          const d = Math.hypot(ex, ey);
          const a = Math.round(Math.min(1, Math.max(0, reach - d)) * 255);
          if (a > 0) pushCoverage(x - x1, y - y1, a);
        }
      }
      cover = scratch;
      if (key !== null) coverages.set(key, (cover = keepCoverage()));
    }
    this.blendCoverage(cover, x1, y1, r, g, b);
  }

  /** Blends a coverage whose box starts at (x1, y1): each pixel once, so the order does not change the result. */
  private blendCoverage(cover: Coverage, x1: number, y1: number, r: number, g: number, b: number): void {
    const { cols, rows, alpha, count, runs } = cover;
    const width = this.width;
    for (let k = 0; k < count; k++) this.blend((y1 + (rows[k] as number)) * width + x1 + (cols[k] as number), r, g, b, alpha[k] as number);
    for (let k = 0; k < runs.length; k += 3) this.solidRun((y1 + (runs[k] as number)) * width + x1 + (runs[k + 1] as number), runs[k + 2] as number, r, g, b);
  }

  polyline(l: PolylinePrimitive): void {
    if (l.points.length === 0) return;
    const [r, g, b] = parseColour(l.stroke);
    const hw = l.width / 2;
    const reach = hw + 0.5;
    const reach2 = reach * reach;
    const xs = l.points.map((p) => p[0]);
    const ys = l.points.map((p) => p[1]);
    const ux1 = Math.floor(Math.min(...xs) - reach), ux2 = Math.ceil(Math.max(...xs) + reach);
    const uy1 = Math.floor(Math.min(...ys) - reach), uy2 = Math.ceil(Math.max(...ys) + reach);
    const bx1 = Math.max(0, ux1), bx2 = Math.min(this.width, ux2);
    const by1 = Math.max(0, uy1), by2 = Math.min(this.height, uy2);
    const bw = bx2 - bx1;
    if (bw <= 0 || by2 <= by1) return;
    this.search(bx1, by1, bx2, by2);
    const unclipped = bx1 === ux1 && bx2 === ux2 && by1 === uy1 && by2 === uy2;
    const key = unclipped && onHalfGrid(l.width) && l.points.every(([x, y]) => onHalfGrid(x) && onHalfGrid(y)) ? `l ${l.width} ${l.points.map(([x, y]) => `${x - bx1},${y - by1}`).join(' ')}` : null;
    const known = key === null ? undefined : coverages.get(key);
    if (known) {
      this.blendCoverage(known, bx1, by1, r, g, b);
      return;
    }
    // The stroke's coverage over its box, and the pixels it reaches (a line chart's box is most of
    // the plot, its stroke a thin part of it): only those are blended, each once, at its largest coverage.
    const cover = takeFloat32s(bw * (by2 - by1)).fill(0);
    let touched = touchedScratch;
    let touchedCount = 0;
    const segments = l.points.length === 1 ? [[l.points[0], l.points[0]] as const] : l.points.slice(1).map((p, i) => [l.points[i], p] as const);
    for (const [from, to] of segments) {
      const [ax, ay] = from as readonly [number, number];
      const [ex, ey] = to as readonly [number, number];
      const dx = ex - ax, dy = ey - ay;
      const len2 = dx * dx + dy * dy;
      const x1 = Math.max(bx1, Math.floor(Math.min(ax, ex) - reach)), x2 = Math.min(bx2, Math.ceil(Math.max(ax, ex) + reach));
      const y1 = Math.max(by1, Math.floor(Math.min(ay, ey) - reach)), y2 = Math.min(by2, Math.ceil(Math.max(ay, ey) + reach));
      for (let y = y1; y < y2; y++) {
        for (let x = x1; x < x2; x++) {
          const px = x + 0.5 - ax, py = y + 0.5 - ay;
          const t = len2 === 0 ? 0 : Math.min(1, Math.max(0, (px * dx + py * dy) / len2));
          const qx = px - t * dx, qy = py - t * dy;
          // Beyond the reach the coverage is 0 and never raises `cover`: skip the square root there.
          if (qx * qx + qy * qy >= reach2) continue;
          const v = reach - Math.hypot(qx, qy);
          const i = (y - by1) * bw + (x - bx1);
          const old = cover[i] as number;
          if (v <= old) continue;
          cover[i] = v;
          if (old === 0 && cover[i] !== 0) {
            if (touchedCount === touched.length) {
              touched = new Int32Array(2 * touched.length);
              touched.set(touchedScratch);
              touchedScratch = touched;
            }
            touched[touchedCount++] = i;
          }
        }
      }
    }
    scratch.count = 0;
    for (let k = 0; k < touchedCount; k++) {
      const i = touched[k] as number;
      const a = Math.round(Math.min(1, cover[i] as number) * 255);
      if (a > 0) pushCoverage(i % bw, Math.floor(i / bw), a);
    }
    releaseBuffers(cover);
    const made = key === null ? scratch : keepCoverage();
    if (key !== null) coverages.set(key, made);
    this.blendCoverage(made, bx1, by1, r, g, b);
  }

  glyphs(placed: readonly PlacedGlyph[], fill: string): void {
    const [r, g, b] = parseColour(fill);
    const { width, height } = this;
    for (const glyph of placed) {
      const m = glyphMask(glyph.key);
      if (!m) continue;
      const ox = glyph.x + m.dx, oy = glyph.y + m.dy;
      // The part of the mask inside the image.
      const u1 = Math.max(0, -ox), u2 = Math.min(m.width, width - ox);
      const v1 = Math.max(0, -oy), v2 = Math.min(m.height, height - oy);
      this.search(ox + u1, oy + v1, ox + u2, oy + v2);
      const alpha = m.alpha;
      for (let v = v1; v < v2; v++) {
        const row = (oy + v) * width + ox;
        const maskRow = v * m.width;
        for (let u = u1; u < u2; u++) {
          const a = alpha[maskRow + u] as number;
          if (a !== 0) this.blend(row + u, r, g, b, a);
        }
      }
    }
  }
}

/** A rect of no mark on whole pixels: opaque over exactly its box, nothing but pixels to write. */
function isPlainRect(p: Primitive, mark: number): p is RectPrimitive {
  return mark === UNOWNED && p.kind === 'rect' && Number.isInteger(p.x) && Number.isInteger(p.y) && Number.isInteger(p.width) && Number.isInteger(p.height);
}

/** Every primitive of the scene in paint order, each with the index of the mark it belongs to (or NO_INK). */
function flatten(scene: Scene, marks: Mark[]): { p: Primitive; mark: number }[] {
  const index = new Map(marks.map((m, i) => [m, i]));
  return scene.layers.flatMap((l) => (isMark(l) ? l.draw(null).map((p) => ({ p, mark: index.get(l) as number })) : [{ p: l, mark: NO_INK }]));
}

/** Renders the scene and its label map (marks in the order sceneMarks lists them), in one pass over the same pixels. */
export async function renderWithLabelMap(scene: Scene): Promise<{ image: RgbImage; labelMap: LabelMap }> {
  const marks = sceneMarks(scene);
  const items = flatten(scene, marks);
  const placed = new Map<Primitive, PlacedGlyph[]>();
  for (const { p } of items) if (p.kind === 'text') placed.set(p, placeGlyphs(p));
  await ensureGlyphs([...placed.values()].flatMap((g) => g.map((x) => x.key)));
  const painter = new Painter(scene.width, scene.height, parseColour(scene.background), marks.length);
  for (let i = 0; i < items.length; i++) {
    const { p, mark } = items[i] as { p: Primitive; mark: number };
    painter.mark = mark;
    if (isPlainRect(p, mark)) {
      let end = i + 1;
      while (end < items.length && isPlainRect((items[end] as { p: Primitive }).p, (items[end] as { mark: number }).mark)) end++;
      if (end - i > 1) {
        painter.plainRects(items.slice(i, end).map((item) => item.p as RectPrimitive));
        i = end - 1;
        continue;
      }
    }
    if (p.kind === 'rect') painter.rect(p);
    else if (p.kind === 'circle') painter.circle(p);
    else if (p.kind === 'polyline') painter.polyline(p);
    else painter.glyphs(placed.get(p) as PlacedGlyph[], p.fill);
  }
  return { image: { width: scene.width, height: scene.height, data: painter.data }, labelMap: labelMapFromIds(scene.width, scene.height, marks, painter.ids, painter) };
}

/** The label map alone (for checking a stored task whose image is already on disk). */
export async function renderLabelMap(scene: Scene): Promise<LabelMap> {
  return (await renderWithLabelMap(scene)).labelMap;
}
