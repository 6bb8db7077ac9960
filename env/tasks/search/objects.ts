/**
 * One object of a search scene: a filled shape in a named colour, in an odd-sided square box,
 * maybe carrying a two-character label, and how it is drawn. Every shape's ink box is exactly its
 * box (half-open, integer edges), by construction:
 * - square: a whole-pixel rect;
 * - circle: centred on the box's middle pixel's centre, radius (side − 1)/2, so the pixels at that
 *   distance along the axes are inked at half coverage and the next ones not at all;
 * - triangle and diamond: a closed polyline through vertices at pixel centres, its stroke's half
 *   width h (a whole number) enough to fill the polygon within (h ≥ inradius + 1), so the shape is
 *   the polygon grown by h (rounded corners); its extreme vertices sit h px inside the box.
 * A label is drawn in bold at a whole-pixel pen origin, centred on the shape's widest inner disc,
 * and only where every corner of its ink box lies on the shape's fully covered part (checked).
 */
import type { BBox } from '../../tools/metadata.js';
import { LayoutError } from '../layout-error.js';
import type { Mark } from '../scene.js';
import { circle, polyline, rect, text, type Primitive } from '../svg.js';
import { INK_SLACK_PX, measureText } from '../text-metrics.js';
import { COLOURS, type SearchShape } from './profiles.js';

/** An object as the record's `meta.objects` stores it. */
export interface SearchObject {
  shape: SearchShape;
  /** A colour name (profiles.ts COLOURS). */
  colour: string;
  /** Its label, or null when it carries none. */
  text: string | null;
  /** Its ink box, half-open, integer edges. */
  bbox: BBox;
}

type Vec = readonly [number, number];

/** A polygon shape's outline (vertices at pixel centres) and its stroke's half width. */
interface Outline {
  vertices: Vec[];
  halfWidth: number;
  /** Where a label is centred: the polygon's incentre. */
  centre: Vec;
}

/** The polygon's inradius for a triangle (base and height L) or a diamond (diagonals L). */
function inradius(shape: 'triangle' | 'diamond', span: number): number {
  return shape === 'triangle' ? span / (1 + Math.sqrt(5)) : span / (2 * Math.SQRT2);
}

function outline(shape: 'triangle' | 'diamond', box: BBox): Outline {
  const side = box.x2 - box.x1;
  let h = 1;
  while (h < inradius(shape, side - 1 - 2 * h) + 1) h++;
  const lo = h + 0.5, hi = side - 1 - h + 0.5, mid = (side - 1) / 2 + 0.5;
  const at = (x: number, y: number): Vec => [box.x1 + x, box.y1 + y];
  if (shape === 'triangle') {
    const r = inradius('triangle', hi - lo);
    return { vertices: [at(mid, lo), at(hi, hi), at(lo, hi)], halfWidth: h, centre: at(mid, hi - r) };
  }
  return { vertices: [at(mid, lo), at(hi, mid), at(mid, hi), at(lo, mid)], halfWidth: h, centre: at(mid, mid) };
}

/** Distance from p to a convex polygon (0 inside). */
function distanceToPolygon(p: Vec, vertices: readonly Vec[]): number {
  let inside = true;
  let best = Infinity;
  for (let i = 0; i < vertices.length; i++) {
    const [ax, ay] = vertices[i] as Vec;
    const [bx, by] = vertices[(i + 1) % vertices.length] as Vec;
    const dx = bx - ax, dy = by - ay;
    // Clockwise on screen (y down): the inside is where the cross product is positive.
    if (dx * (p[1] - ay) - dy * (p[0] - ax) < 0) inside = false;
    const t = Math.max(0, Math.min(1, ((p[0] - ax) * dx + (p[1] - ay) * dy) / (dx * dx + dy * dy)));
    best = Math.min(best, Math.hypot(p[0] - ax - t * dx, p[1] - ay - t * dy));
  }
  return inside ? 0 : best;
}

/** Whether the point is inked at full coverage with 1 px to spare. */
function solidAt(shape: SearchShape, box: BBox, p: Vec): boolean {
  const side = box.x2 - box.x1;
  if (shape === 'square') return p[0] >= box.x1 + 1 && p[0] <= box.x2 - 1 && p[1] >= box.y1 + 1 && p[1] <= box.y2 - 1;
  if (shape === 'circle') return Math.hypot(p[0] - box.x1 - side / 2, p[1] - box.y1 - side / 2) <= (side - 1) / 2 - 1.5;
  const o = outline(shape, box);
  return distanceToPolygon(p, o.vertices) <= o.halfWidth - 1.5;
}

function labelCentre(shape: SearchShape, box: BBox): Vec {
  if (shape === 'triangle' || shape === 'diamond') return outline(shape, box).centre;
  return [(box.x1 + box.x2) / 2, (box.y1 + box.y2) / 2];
}

/** A label's pen origin (whole pixels) and its estimated ink box, slack included, with its centre `drop` px below the shape's centre. */
function placeAt(object: SearchObject, fontSize: number, drop: number): { x: number; y: number; box: BBox } {
  const content = object.text ?? '';
  const e = measureText(content, fontSize, 'bold');
  const [cx, cy] = labelCentre(object.shape, object.bbox);
  const x = Math.round(cx - (e.left + e.right) / 2);
  const y = Math.round(cy + drop - (e.top + e.bottom) / 2);
  return { x, y, box: { x1: x + e.left - INK_SLACK_PX, y1: y + e.top - INK_SLACK_PX, x2: x + e.right + INK_SLACK_PX, y2: y + e.bottom + INK_SLACK_PX } };
}

function solidBox(object: SearchObject, box: BBox): boolean {
  const corners: Vec[] = [[box.x1, box.y1], [box.x2, box.y1], [box.x1, box.y2], [box.x2, box.y2]];
  return corners.every((c) => solidAt(object.shape, object.bbox, c));
}

/**
 * Where the object's label goes: centred on the shape's centre (a triangle's incentre), or, in a
 * triangle, up to 4 px lower where it is wider, at the first drop where it fits wholly.
 */
export function labelPlacement(object: SearchObject, fontSize: number): { x: number; y: number; box: BBox } {
  const drops = object.shape === 'triangle' ? [0, 1, 2, 3, 4] : [0];
  for (const drop of drops) {
    const at = placeAt(object, fontSize, drop);
    if (solidBox(object, at.box)) return at;
  }
  return placeAt(object, fontSize, 0);
}

/** Whether the object's label lies wholly on its shape's solid part. */
export function labelFits(object: SearchObject, fontSize: number): boolean {
  return object.text === null || solidBox(object, labelPlacement(object, fontSize).box);
}

/** The shape's primitives in `fill`. */
function shapePrimitives(object: SearchObject, fill: string): Primitive[] {
  const box = object.bbox;
  const side = box.x2 - box.x1;
  if (side !== box.y2 - box.y1 || side % 2 === 0) throw new Error(`a search object's box must be an odd-sided square, got ${JSON.stringify(box)}`);
  switch (object.shape) {
    case 'square':
      return [rect(box.x1, box.y1, side, side, fill)];
    case 'circle':
      return [circle(box.x1 + side / 2, box.y1 + side / 2, (side - 1) / 2, fill)];
    default: {
      const o = outline(object.shape, box);
      return [polyline([...o.vertices, o.vertices[0] as Vec], fill, 2 * o.halfWidth)];
    }
  }
}

/** The object as a mark of the scene: its ink must be exactly its box (the checker compares). */
export function objectMark(object: SearchObject, index: number, fontSize: number): Mark {
  const colour = COLOURS[object.colour];
  if (!colour) throw new Error(`unknown colour '${object.colour}'`);
  if (!labelFits(object, fontSize)) throw new LayoutError(`the label "${object.text}" does not fit a ${object.bbox.x2 - object.bbox.x1} px ${object.shape} at ${fontSize} px`);
  const name = `object ${index} (${object.colour} ${object.shape}${object.text === null ? '' : ` "${object.text}"`})`;
  return {
    name,
    owners: {},
    draw(fill) {
      const out = shapePrimitives(object, fill ?? colour.fill);
      if (object.text !== null) {
        const at = labelPlacement(object, fontSize);
        out.push(text(at.x, at.y, object.text, fill ?? colour.ink, { fontSize, weight: 'bold' }));
      }
      return out;
    },
  };
}
