/**
 * A drawing before it becomes pixels: primitives (svg.ts) in paint order, some of them grouped
 * into "marks" — the labels, bars and points whose ink must fall inside a given band. paint.ts
 * rasterises the layers and records, per pixel, which mark inked it (the checker's label map).
 * `sceneSvg` writes the same drawing as SVG for librsvg, the reference renderer. Given a fill,
 * a mark must paint only with that fill (no strokes, no other colours).
 */
import sharp from 'sharp';
import type { RgbImage } from '../core/image.js';
import type { BandFamily, BBox, ImageMetadata } from '../tools/metadata.js';
import { primitivesSvg, primitiveSvg, rect, type Primitive } from './svg.js';

/** The band a mark belongs to, per family. A family absent here must not see any of its ink. */
export type MarkOwners = Partial<Record<BandFamily, string>>;

export interface Mark {
  /** For messages: `cell (Ana Berg, Wins)`, `x tick label "2015"`. */
  name: string;
  owners: MarkOwners;
  /** Its primitives: in its own colours when `fill` is null (the image), else entirely in `fill`. */
  draw(fill: string | null): Primitive[];
  /** A metadata box the ink must also stay inside (e.g. bars inside `plot_bbox`). */
  within?: 'plot_bbox' | 'figure_bbox';
}

export type Layer = Primitive | Mark;

export interface Scene {
  width: number;
  height: number;
  background: string;
  layers: Layer[];
  /** Pixel-unit metadata, as it will be stored in the task record. */
  meta: ImageMetadata & { unit: 'pixels'; source: 'generator' };
}

export function isMark(layer: Layer): layer is Mark {
  return 'owners' in layer;
}

export function sceneMarks(scene: Scene): Mark[] {
  return scene.layers.filter(isMark);
}

/** The drawing without the <svg> wrapper, background included. */
export function sceneBody(scene: Scene): string {
  return primitiveSvg(rect(0, 0, scene.width, scene.height, scene.background)) + scene.layers.map((l) => (isMark(l) ? primitivesSvg(l.draw(null)) : primitiveSvg(l))).join('');
}

export function sceneSvg(scene: Scene): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${scene.width}" height="${scene.height}" viewBox="0 0 ${scene.width} ${scene.height}">${sceneBody(scene)}</svg>`;
}

/** Rasterise SVG at 1 px per user unit onto white, as tightly packed RGB. */
export async function rasterise(svg: string): Promise<RgbImage> {
  return toRgb(sharp(Buffer.from(svg), { density: 72 }).flatten({ background: { r: 255, g: 255, b: 255 } }));
}

/**
 * Rasterise SVG that paints an opaque background first (every scene and label-map section does):
 * alpha is 255 everywhere, so dropping it gives the same pixels as flattening, ~15% cheaper.
 */
export async function rasteriseOpaque(svg: string): Promise<RgbImage> {
  return toRgb(sharp(Buffer.from(svg), { density: 72 }));
}

async function toRgb(pipeline: sharp.Sharp): Promise<RgbImage> {
  const { data, info } = await pipeline.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`rasterising gave ${info.channels} channels, expected 3`);
  return { width: info.width, height: info.height, data };
}

/** Half-open pixel test: a box covers pixels x1 <= x < x2, y1 <= y < y2. */
export function boxContainsPixel(box: BBox, x: number, y: number): boolean {
  return x >= box.x1 && x < box.x2 && y >= box.y1 && y < box.y2;
}
