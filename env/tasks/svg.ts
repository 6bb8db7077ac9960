/**
 * The generator's drawing primitives (rect, circle, polyline, text) as plain data, and their SVG
 * form. Layouts build primitives; paint.ts rasterises them in JS (text through the glyph cache,
 * glyph-cache.ts), and `primitiveSvg` writes the same drawing as SVG for librsvg (the reference
 * the tests compare against, and the bench's old path). Numbers are printed with at most two
 * decimals so the same layout always produces the same bytes; text is XML-escaped.
 */
import { FONT_FAMILY, type FontWeight } from './text-metrics.js';

export function num(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`cannot write ${value} into SVG`);
  const rounded = Math.round(value * 100) / 100;
  return Object.is(rounded, -0) ? '0' : String(rounded);
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

export interface RectPrimitive { kind: 'rect'; x: number; y: number; width: number; height: number; fill: string }
export interface CirclePrimitive { kind: 'circle'; cx: number; cy: number; r: number; fill: string }
export interface PolylinePrimitive { kind: 'polyline'; points: readonly (readonly [number, number])[]; stroke: string; width: number }
export interface TextPrimitive {
  kind: 'text';
  /** Pen origin: the start of the baseline. */
  x: number;
  y: number;
  content: string;
  fill: string;
  fontSize: number;
  weight: FontWeight;
  /** Degrees, SVG sense (negative = counter-clockwise), about the pen origin. */
  rotate: number;
}
export type Primitive = RectPrimitive | CirclePrimitive | PolylinePrimitive | TextPrimitive;

export function rect(x: number, y: number, width: number, height: number, fill: string): RectPrimitive {
  return { kind: 'rect', x, y, width, height, fill };
}

export interface TextOptions {
  fontSize: number;
  weight?: FontWeight;
  /** Degrees, SVG sense (negative = counter-clockwise), about the pen origin. */
  rotate?: number;
}

/** A text run whose pen origin (start of the baseline) is at (x, y); always text-anchor start. */
export function text(x: number, y: number, content: string, fill: string, options: TextOptions): TextPrimitive {
  return { kind: 'text', x, y, content, fill, fontSize: options.fontSize, weight: options.weight ?? 'normal', rotate: options.rotate ?? 0 };
}

export function polyline(points: readonly (readonly [number, number])[], stroke: string, width: number): PolylinePrimitive {
  return { kind: 'polyline', points, stroke, width };
}

export function circle(cx: number, cy: number, r: number, fill: string): CirclePrimitive {
  return { kind: 'circle', cx, cy, r, fill };
}

/** One primitive as SVG (librsvg's rendering is the reference for paint.ts). */
export function primitiveSvg(p: Primitive): string {
  switch (p.kind) {
    case 'rect':
      return `<rect x="${num(p.x)}" y="${num(p.y)}" width="${num(p.width)}" height="${num(p.height)}" fill="${p.fill}"/>`;
    case 'circle':
      return `<circle cx="${num(p.cx)}" cy="${num(p.cy)}" r="${num(p.r)}" fill="${p.fill}"/>`;
    case 'polyline':
      return `<polyline points="${p.points.map(([x, y]) => `${num(x)},${num(y)}`).join(' ')}" fill="none" stroke="${p.stroke}" stroke-width="${num(p.width)}" stroke-linejoin="round"/>`;
    case 'text': {
      const weight = p.weight === 'bold' ? ' font-weight="bold"' : '';
      const transform = p.rotate ? ` transform="translate(${num(p.x)} ${num(p.y)}) rotate(${num(p.rotate)})"` : '';
      const position = p.rotate ? 'x="0" y="0"' : `x="${num(p.x)}" y="${num(p.y)}"`;
      return `<text ${position}${transform} font-family="${FONT_FAMILY}" font-size="${num(p.fontSize)}"${weight} fill="${p.fill}" xml:space="preserve">${escapeXml(p.content)}</text>`;
    }
  }
}

export function primitivesSvg(list: readonly Primitive[]): string {
  return list.map(primitiveSvg).join('');
}
