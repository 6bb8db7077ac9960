/**
 * Puts a label where layout wants its ink: "ink box left edge at x, top at y", centred, right
 * aligned, or rotated and centred on a tick. Returns the text run to draw and the estimated ink box
 * (slack included), which layout uses for spacing and which the checker later verifies on
 * pixels. Vertical extent is the line's (all labels in a row share a baseline), horizontal
 * extent is the string's.
 */
import type { BBox } from '../tools/metadata.js';
import type { Paint, TextRun } from './scene.js';
import { text } from './svg.js';
import { INK_SLACK_PX, lineInk, measureText, type FontWeight } from './text-metrics.js';

export interface TextStyle {
  fontSize: number;
  weight?: FontWeight;
  /** Degrees counter-clockwise (positive), e.g. 45 or 90 for tick labels. */
  rotate?: number;
}

export interface Placement {
  x: number;
  y: number;
  /** Which point of the ink box (x, y) is. */
  h: 'left' | 'center' | 'right';
  v: 'top' | 'middle' | 'bottom';
}

export interface PlacedText {
  content: string;
  box: BBox;
  /** The label as it is drawn in the image. */
  run(fill: string): TextRun;
  /** A mark's paint that is this label alone. */
  paint(fill: string): Paint;
  /** The same label as an SVG <text> (for measuring what librsvg makes of the estimate). */
  svg(fill: string): string;
}

/** The estimated ink box of a label with its pen origin at (0, 0), rotation applied. */
export function labelExtent(content: string, style: TextStyle): BBox {
  const e = measureText(content, style.fontSize, style.weight ?? 'normal');
  const v = lineInk(style.fontSize);
  const box = { x1: e.left - INK_SLACK_PX, x2: e.right + INK_SLACK_PX, y1: v.top, y2: v.bottom };
  const angle = style.rotate ?? 0;
  if (angle === 0) return box;
  const rad = (-angle * Math.PI) / 180;
  const cos = Math.cos(rad);
  const sin = Math.sin(rad);
  const corners = [[box.x1, box.y1], [box.x2, box.y1], [box.x1, box.y2], [box.x2, box.y2]].map(([x, y]) => [x! * cos - y! * sin, x! * sin + y! * cos] as const);
  return {
    x1: Math.min(...corners.map((c) => c[0])) - INK_SLACK_PX,
    x2: Math.max(...corners.map((c) => c[0])) + INK_SLACK_PX,
    y1: Math.min(...corners.map((c) => c[1])) - INK_SLACK_PX,
    y2: Math.max(...corners.map((c) => c[1])) + INK_SLACK_PX,
  };
}

export function labelWidth(content: string, style: TextStyle): number {
  const b = labelExtent(content, style);
  return b.x2 - b.x1;
}

export function labelHeight(content: string, style: TextStyle): number {
  const b = labelExtent(content, style);
  return b.y2 - b.y1;
}

function snap(value: number, anchor: 'start' | 'end' | 'centre'): number {
  return anchor === 'start' ? Math.ceil(value) : anchor === 'end' ? Math.floor(value) : Math.round(value);
}

export function placeText(content: string, style: TextStyle, at: Placement): PlacedText {
  const ext = labelExtent(content, style);
  const width = ext.x2 - ext.x1;
  const height = ext.y2 - ext.y1;
  const left = at.h === 'left' ? at.x : at.h === 'right' ? at.x - width : at.x - width / 2;
  const top = at.v === 'top' ? at.y : at.v === 'bottom' ? at.y - height : at.y - height / 2;
  // A flat label's baseline (an upright one's, its x) sits on a whole pixel, as hinted text
  // does: its glyphs then need one vertical position in the glyph cache instead of four. It
  // moves away from the edge it is anchored to (a top-aligned label down), never past it, and
  // the box moves with it, so the estimate is still where the label is drawn.
  const angle = style.rotate ?? 0;
  const originX = Math.abs(angle) === 90 ? snap(left - ext.x1, at.h === 'left' ? 'start' : at.h === 'right' ? 'end' : 'centre') : left - ext.x1;
  const originY = angle === 0 ? snap(top - ext.y1, at.v === 'top' ? 'start' : at.v === 'bottom' ? 'end' : 'centre') : top - ext.y1;
  const options = { fontSize: style.fontSize, weight: style.weight ?? 'normal', rotate: angle ? -angle : 0 };
  const run = (fill: string): TextRun => ({ content, ...options, x: originX, y: originY, fill });
  return {
    content,
    box: { x1: originX + ext.x1, y1: originY + ext.y1, x2: originX + ext.x2, y2: originY + ext.y2 },
    run,
    paint: (fill: string) => ({ shapes: [], text: [run(fill)] }),
    svg: (fill: string) => text(originX, originY, content, fill, options),
  };
}
