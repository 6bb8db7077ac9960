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
 */
import type { RgbImage } from '../core/image.js';
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

class Painter {
  readonly data: Buffer;
  readonly ids: Int32Array;
  /** The mark being painted (its index), or NO_INK for plain layers. */
  mark = NO_INK;

  constructor(readonly width: number, readonly height: number, background: Rgb) {
    this.data = Buffer.alloc(width * height * 3, background[0] === background[1] && background[1] === background[2] ? background[0] : 0);
    if (background[0] !== background[1] || background[1] !== background[2]) for (let p = 0; p < width * height; p++) {
      this.data[p * 3] = background[0];
      this.data[p * 3 + 1] = background[1];
      this.data[p * 3 + 2] = background[2];
    }
    this.ids = new Int32Array(width * height).fill(NO_INK);
  }

  /** Blends colour c at coverage a (1–255) into pixel p, and claims p for the current mark. */
  blend(p: number, c: Rgb, a: number): void {
    const o = p * 3;
    const d = this.data;
    if (a >= 255) {
      d[o] = c[0];
      d[o + 1] = c[1];
      d[o + 2] = c[2];
    } else {
      const b = 255 - a;
      d[o] = ((d[o] as number) * b + c[0] * a + 127) / 255;
      d[o + 1] = ((d[o + 1] as number) * b + c[1] * a + 127) / 255;
      d[o + 2] = ((d[o + 2] as number) * b + c[2] * a + 127) / 255;
    }
    if (this.mark === NO_INK) return;
    const owner = this.ids[p] as number;
    if (owner === NO_INK) this.ids[p] = this.mark;
    else if (owner !== this.mark) this.ids[p] = CONFLICT;
  }

  rect(r: RectPrimitive): void {
    const c = parseColour(r.fill);
    const x1 = Math.max(0, Math.floor(r.x)), x2 = Math.min(this.width, Math.ceil(r.x + r.width));
    const y1 = Math.max(0, Math.floor(r.y)), y2 = Math.min(this.height, Math.ceil(r.y + r.height));
    for (let y = y1; y < y2; y++) {
      const cy = Math.min(y + 1, r.y + r.height) - Math.max(y, r.y);
      for (let x = x1; x < x2; x++) {
        const cx = Math.min(x + 1, r.x + r.width) - Math.max(x, r.x);
        const a = Math.round(cx * cy * 255);
        if (a > 0) this.blend(y * this.width + x, c, a);
      }
    }
  }

  circle(k: CirclePrimitive): void {
    const c = parseColour(k.fill);
    const x1 = Math.max(0, Math.floor(k.cx - k.r - 1)), x2 = Math.min(this.width, Math.ceil(k.cx + k.r + 1));
    const y1 = Math.max(0, Math.floor(k.cy - k.r - 1)), y2 = Math.min(this.height, Math.ceil(k.cy + k.r + 1));
    for (let y = y1; y < y2; y++) {
      for (let x = x1; x < x2; x++) {
        const d = Math.hypot(x + 0.5 - k.cx, y + 0.5 - k.cy);
        const a = Math.round(Math.min(1, Math.max(0, k.r + 0.5 - d)) * 255);
        if (a > 0) this.blend(y * this.width + x, c, a);
      }
    }
  }

  polyline(l: PolylinePrimitive): void {
    if (l.points.length === 0) return;
    const c = parseColour(l.stroke);
    const hw = l.width / 2;
    const reach = hw + 0.5;
    const xs = l.points.map((p) => p[0]);
    const ys = l.points.map((p) => p[1]);
    const bx1 = Math.max(0, Math.floor(Math.min(...xs) - reach)), bx2 = Math.min(this.width, Math.ceil(Math.max(...xs) + reach));
    const by1 = Math.max(0, Math.floor(Math.min(...ys) - reach)), by2 = Math.min(this.height, Math.ceil(Math.max(...ys) + reach));
    const bw = bx2 - bx1;
    if (bw <= 0 || by2 <= by1) return;
    const cover = new Float32Array(bw * (by2 - by1));
    const segments = l.points.length === 1 ? [[l.points[0], l.points[0]] as const] : l.points.slice(1).map((p, i) => [l.points[i], p] as const);
    for (const [a, b] of segments) {
      const [ax, ay] = a as readonly [number, number];
      const [ex, ey] = b as readonly [number, number];
      const dx = ex - ax, dy = ey - ay;
      const len2 = dx * dx + dy * dy;
      const x1 = Math.max(bx1, Math.floor(Math.min(ax, ex) - reach)), x2 = Math.min(bx2, Math.ceil(Math.max(ax, ex) + reach));
      const y1 = Math.max(by1, Math.floor(Math.min(ay, ey) - reach)), y2 = Math.min(by2, Math.ceil(Math.max(ay, ey) + reach));
      for (let y = y1; y < y2; y++) {
        for (let x = x1; x < x2; x++) {
          const px = x + 0.5 - ax, py = y + 0.5 - ay;
          const t = len2 === 0 ? 0 : Math.min(1, Math.max(0, (px * dx + py * dy) / len2));
          const d = Math.hypot(px - t * dx, py - t * dy);
          const v = reach - d;
          const i = (y - by1) * bw + (x - bx1);
          if (v > (cover[i] as number)) cover[i] = v;
        }
      }
    }
    for (let y = by1; y < by2; y++) {
      for (let x = bx1; x < bx2; x++) {
        const a = Math.round(Math.min(1, cover[(y - by1) * bw + (x - bx1)] as number) * 255);
        if (a > 0) this.blend(y * this.width + x, c, a);
      }
    }
  }

  glyphs(placed: readonly PlacedGlyph[], fill: string): void {
    const c = parseColour(fill);
    for (const g of placed) {
      const m = glyphMask(g.key);
      if (!m) continue;
      const ox = g.x + m.dx, oy = g.y + m.dy;
      for (let v = 0; v < m.height; v++) {
        const y = oy + v;
        if (y < 0 || y >= this.height) continue;
        for (let u = 0; u < m.width; u++) {
          const a = m.alpha[v * m.width + u] as number;
          const x = ox + u;
          if (a === 0 || x < 0 || x >= this.width) continue;
          this.blend(y * this.width + x, c, a);
        }
      }
    }
  }
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
  const painter = new Painter(scene.width, scene.height, parseColour(scene.background));
  for (const { p, mark } of items) {
    painter.mark = mark;
    if (p.kind === 'rect') painter.rect(p);
    else if (p.kind === 'circle') painter.circle(p);
    else if (p.kind === 'polyline') painter.polyline(p);
    else painter.glyphs(placed.get(p) as PlacedGlyph[], p.fill);
  }
  return { image: { width: scene.width, height: scene.height, data: painter.data }, labelMap: labelMapFromIds(scene.width, scene.height, marks, painter.ids) };
}

/** The label map alone (for checking a stored task whose image is already on disk). */
export async function renderLabelMap(scene: Scene): Promise<LabelMap> {
  return (await renderWithLabelMap(scene)).labelMap;
}
