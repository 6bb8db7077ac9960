/**
 * Tiny SVG writers for the generator. Numbers are printed with at most two decimals so the same
 * layout always produces the same bytes; text is XML-escaped. Nothing here decides layout.
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

export function rect(x: number, y: number, width: number, height: number, fill: string): string {
  return `<rect x="${num(x)}" y="${num(y)}" width="${num(width)}" height="${num(height)}" fill="${fill}"/>`;
}

export interface TextOptions {
  fontSize: number;
  weight?: FontWeight;
  /** Degrees, SVG sense (negative = counter-clockwise), about the pen origin. */
  rotate?: number;
}

/** A text run whose pen origin (start of the baseline) is at (x, y); always text-anchor start. */
export function text(x: number, y: number, content: string, fill: string, options: TextOptions): string {
  const weight = options.weight === 'bold' ? ' font-weight="bold"' : '';
  const transform = options.rotate ? ` transform="translate(${num(x)} ${num(y)}) rotate(${num(options.rotate)})"` : '';
  const position = options.rotate ? 'x="0" y="0"' : `x="${num(x)}" y="${num(y)}"`;
  return `<text ${position}${transform} font-family="${FONT_FAMILY}" font-size="${num(options.fontSize)}"${weight} fill="${fill}" xml:space="preserve">${escapeXml(content)}</text>`;
}

export function line(x1: number, y1: number, x2: number, y2: number, stroke: string, width: number, dash?: string): string {
  const dashes = dash ? ` stroke-dasharray="${dash}"` : '';
  return `<line x1="${num(x1)}" y1="${num(y1)}" x2="${num(x2)}" y2="${num(y2)}" stroke="${stroke}" stroke-width="${num(width)}"${dashes}/>`;
}

export function polyline(points: readonly (readonly [number, number])[], stroke: string, width: number): string {
  const list = points.map(([x, y]) => `${num(x)},${num(y)}`).join(' ');
  return `<polyline points="${list}" fill="none" stroke="${stroke}" stroke-width="${num(width)}" stroke-linejoin="round"/>`;
}

export function circle(cx: number, cy: number, r: number, fill: string): string {
  return `<circle cx="${num(cx)}" cy="${num(cy)}" r="${num(r)}" fill="${fill}"/>`;
}

export function svgDocument(width: number, height: number, background: string, body: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${rect(0, 0, width, height, background)}${body}</svg>`;
}
