/**
 * Puts a label where layout wants its ink: "ink box left edge at x, top at y", centred, right
 * aligned, or rotated and centred on a tick. Returns the text primitive's writer and the estimated ink box
 * (slack included), which layout uses for spacing and which the checker later verifies on
 * pixels. Vertical extent is the line's (all labels in a row share a baseline), horizontal
 * extent is the string's.
 */
import type { BBox } from '../tools/metadata.js';
import { text, type TextPrimitive } from './svg.js';
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
  draw(fill: string): TextPrimitive;
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

export function placeText(content: string, style: TextStyle, at: Placement): PlacedText {
  const ext = labelExtent(content, style);
  const width = ext.x2 - ext.x1;
  const height = ext.y2 - ext.y1;
  const left = at.h === 'left' ? at.x : at.h === 'right' ? at.x - width : at.x - width / 2;
  const top = at.v === 'top' ? at.y : at.v === 'bottom' ? at.y - height : at.y - height / 2;
  const originX = left - ext.x1;
  const originY = top - ext.y1;
  const options = { fontSize: style.fontSize, weight: style.weight ?? 'normal', rotate: style.rotate ? -style.rotate : 0 };
  return {
    content,
    box: { x1: left, y1: top, x2: left + width, y2: top + height },
    draw: (fill: string) => text(originX, originY, content, fill, options),
  };
}
