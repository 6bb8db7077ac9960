/**
 * A drawing before it becomes pixels: layers in paint order, some of them "marks" — the labels,
 * bars and points whose ink must fall inside a given band. A layer paints shapes as SVG (librsvg
 * rasterises them) and text as runs (drawn from glyph rasters, draw-text.ts), so the checker can
 * tell which mark painted which pixel without drawing the scene again (label-map.ts).
 */
import sharp from 'sharp';
import type { RgbImage } from '../core/image.js';
import type { BandFamily, BBox, ImageMetadata } from '../tools/metadata.js';
import { circle, rect } from './svg.js';
import type { FontWeight } from './text-metrics.js';

/** The band a mark belongs to, per family. A family absent here must not see any of its ink. */
export type MarkOwners = Partial<Record<BandFamily, string>>;

/** One line of text, drawn glyph by glyph along its baseline from the pen origin (x, y). */
export interface TextRun {
  content: string;
  fontSize: number;
  weight: FontWeight;
  /** Degrees, SVG sense (negative = counter-clockwise), about the pen origin. */
  rotate: number;
  x: number;
  y: number;
  /** `#rrggbb`. */
  fill: string;
}

/** A filled axis-aligned rectangle; `fill` is `#rrggbb`. */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
  fill: string;
}

/**
 * A shape: a rectangle, or any other SVG (lines, circles). `bounds` is an SVG shape's geometric
 * extent, computed from the same numbers as the SVG: the checker measures its ink within it
 * plus a margin for anti-aliasing, and over the whole canvas when ink reaches the margin's edge.
 * Absent: the whole canvas.
 */
export type Shape = { rect: Rect } | { svg: string; bounds?: BBox };

/** What a layer paints: shapes, then text on top. */
export interface Paint {
  shapes: Shape[];
  text: TextRun[];
}

export interface Mark {
  /** For messages: `cell (Ana Berg, Wins)`, `x tick label "2015"`. */
  name: string;
  owners: MarkOwners;
  /** What it paints: in its own colours when `fill` is null (the image), else its shapes entirely in `fill`. */
  draw(fill: string | null): Paint;
  /** A metadata box the ink must also stay inside (e.g. bars inside `plot_bbox`). */
  within?: 'plot_bbox' | 'figure_bbox';
}

/** A layer that is not a mark is a shape (rules, fills, grid lines): no text, no band. */
export type Layer = Shape | Mark;

export interface Scene {
  width: number;
  height: number;
  background: string;
  layers: Layer[];
  /** Pixel-unit metadata, as it will be stored in the task record. */
  meta: ImageMetadata & { unit: 'pixels'; source: 'generator' };
}

export function isMark(layer: Layer): layer is Mark {
  return 'draw' in layer;
}

export function sceneMarks(scene: Scene): Mark[] {
  return scene.layers.filter(isMark);
}

export function rectShape(x: number, y: number, width: number, height: number, fill: string): Shape {
  return { rect: { x, y, width, height, fill } };
}

/** The SVG of a shape. */
export function shapeSvg(shape: Shape): string {
  return 'rect' in shape ? rect(shape.rect.x, shape.rect.y, shape.rect.width, shape.rect.height, shape.rect.fill) : shape.svg;
}

/** Filled rectangles as one mark's paint. */
export function rectsPaint(rects: readonly Rect[]): Paint {
  return { shapes: rects.map((r) => ({ rect: { ...r } })), text: [] };
}

/** Filled circles as one mark's paint, bounded by the circles' own extent. */
export function circlesPaint(circles: readonly { cx: number; cy: number; r: number; fill: string }[]): Paint {
  if (circles.length === 0) return { shapes: [], text: [] };
  const bounds = circles.map((c) => ({ x1: c.cx - c.r, y1: c.cy - c.r, x2: c.cx + c.r, y2: c.cy + c.r }))
    .reduce((a, b) => ({ x1: Math.min(a.x1, b.x1), y1: Math.min(a.y1, b.y1), x2: Math.max(a.x2, b.x2), y2: Math.max(a.y2, b.y2) }));
  return { shapes: [{ svg: circles.map((c) => circle(c.cx, c.cy, c.r, c.fill)).join(''), bounds }], text: [] };
}

/** Several paints as one (a legend entry: its swatch and its label). */
export function mergePaints(...paints: Paint[]): Paint {
  return { shapes: paints.flatMap((p) => p.shapes), text: paints.flatMap((p) => p.text) };
}

/** Rasterise SVG at 1 px per user unit onto white, as tightly packed RGB. */
export async function rasterise(svg: string): Promise<RgbImage> {
  return toRgb(sharp(Buffer.from(svg), { density: 72 }).flatten({ background: { r: 255, g: 255, b: 255 } }));
}

/**
 * Rasterise SVG that paints an opaque background first (every scene and atlas does): alpha is
 * 255 everywhere, so dropping it gives the same pixels as flattening, ~15% cheaper.
 */
export async function rasteriseOpaque(svg: string): Promise<RgbImage> {
  return toRgb(sharp(Buffer.from(svg), { density: 72 }));
}

async function toRgb(pipeline: sharp.Sharp): Promise<RgbImage> {
  const { data, info } = await pipeline.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`rasterising gave ${info.channels} channels, expected 3`);
  return { width: info.width, height: info.height, data };
}
