/**
 * A geometry diagram as a Scene: the question's points and distractor points (each a dot), the
 * distractor constructions among the distractor points (segments, circles, polygons), and one
 * letter beside each point. Everything but the letters is one mark, "diagram", and each letter is
 * a mark of its own, so the checker's label map (label-map.ts) sees any letter whose ink touches
 * other ink as a conflict: a legible letter is one that touches nothing.
 *
 * Letters go where they are clear of all ink by LABEL_CLEARANCE px and nearer their own point
 * than any other by a clear margin, so no letter can be read as another point's. Points keep a
 * minimum distance from each other and from every construction they are not on.
 */
import type { BBox, PointXY } from '../../tools/metadata.js';
import { LayoutError } from '../layout-error.js';
import { placeText, type PlacedText } from '../place-text.js';
import type { Rng } from '../prng.js';
import type { Layer, Scene } from '../scene.js';
import { circle, polyline, type Primitive } from '../svg.js';
import { distance, distanceToSegment } from './plane.js';
import { DOT_RADIUS, LABEL_CLEARANCE, STROKE_WIDTH } from './profiles.js';
import type { Area } from './questions.js';

export interface DiagramCircle {
  center: string;
  /** Radius in px, about the centre point's pixel centre. */
  radius: number;
}

/** What a diagram shows, by point label: the record keeps it in `meta`. */
export interface Diagram {
  points: Record<string, PointXY>;
  segments: [string, string][];
  circles: DiagramCircle[];
  polygons: string[][];
}

export interface DiagramColours {
  ink: string;
  dots: string;
  text: string;
}

/** Letters that cannot be misread (no I, no O). */
export const POINT_LETTERS = 'ABCDEFGHJKLMNPQRSTUVWXYZ'.split('');

/** Polygon sides, by label: consecutive corners and the last back to the first. */
export function polygonSides(polygon: readonly string[]): [string, string][] {
  return polygon.map((label, i) => [label, polygon[(i + 1) % polygon.length] as string]);
}

/** Every straight piece of ink in the diagram, by label pair. */
function drawnSegments(diagram: Diagram): [string, string][] {
  return [...diagram.segments, ...diagram.polygons.flatMap(polygonSides)];
}

/** Distractor points: `count` more points, each at least `separation` from every point placed. */
export function addPoints(rng: Rng, area: Area, placed: PointXY[], count: number, separation: number): PointXY[] {
  const out: PointXY[] = [];
  for (let tries = 0; out.length < count && tries < 60 * count; tries++) {
    const p = { x: rng.int(area.x1, area.x2 - 1), y: rng.int(area.y1, area.y2 - 1) };
    if ([...placed, ...out].every((q) => distance(p, q) >= separation)) out.push(p);
  }
  if (out.length < count) throw new LayoutError(`no room for ${count} more points ${separation} px apart`);
  return out;
}

/** Whether `p` keeps `gap` px from every segment and circle of the diagram that it is not on. */
function clearOfConstructions(diagram: Diagram, label: string, gap: number): boolean {
  const p = diagram.points[label] as PointXY;
  for (const [u, v] of drawnSegments(diagram)) {
    if (u === label || v === label) continue;
    if (distanceToSegment(diagram.points[u] as PointXY, diagram.points[v] as PointXY, p) < gap) return false;
  }
  for (const c of diagram.circles) {
    if (c.center === label) continue;
    if (Math.abs(distance(diagram.points[c.center] as PointXY, p) - c.radius) < gap) return false;
  }
  return true;
}

/**
 * Adds `count` distractor constructions among `free` (labels of points the question does not
 * name): segments, circles and polygons, each kept `gap` px from every other point and inside
 * `area`. Gives up on a construction that does not fit after a few tries (fewer are drawn).
 */
export function addDistractors(rng: Rng, diagram: Diagram, free: readonly string[], count: number, area: Area, gap: number): void {
  const everyLabel = Object.keys(diagram.points);
  if (free.length === 0) return;
  for (let made = 0, tries = 0; made < count && tries < 12 * count; tries++) {
    const kind = free.length >= 3 && rng.chance(0.3) ? 'polygon' : free.length >= 2 && rng.chance(0.6) ? 'segment' : 'circle';
    const trial: Diagram = { ...diagram, segments: [...diagram.segments], circles: [...diagram.circles], polygons: [...diagram.polygons] };
    if (kind === 'segment') {
      const [u, v] = rng.sample(free, 2) as [string, string];
      if (diagram.segments.some(([p, q]) => (p === u && q === v) || (p === v && q === u))) continue;
      trial.segments.push([u, v]);
    } else if (kind === 'polygon') {
      const corners = rng.sample(free, free.length >= 4 && rng.chance(0.5) ? 4 : 3);
      // Corners in angular order about their centroid, so the outline does not cross itself.
      const cx = corners.reduce((s, l) => s + (diagram.points[l] as PointXY).x, 0) / corners.length;
      const cy = corners.reduce((s, l) => s + (diagram.points[l] as PointXY).y, 0) / corners.length;
      corners.sort((l, m) => Math.atan2((diagram.points[l] as PointXY).y - cy, (diagram.points[l] as PointXY).x - cx) - Math.atan2((diagram.points[m] as PointXY).y - cy, (diagram.points[m] as PointXY).x - cx));
      trial.polygons.push(corners);
    } else {
      const center = rng.pick(free);
      const c = diagram.points[center] as PointXY;
      const radius = Math.round(18 + rng.next() * 0.18 * Math.min(area.x2 - area.x1, area.y2 - area.y1));
      if (c.x - radius < area.x1 - 8 || c.y - radius < area.y1 - 8 || c.x + radius >= area.x2 + 8 || c.y + radius >= area.y2 + 8) continue;
      trial.circles.push({ center, radius });
    }
    if (!everyLabel.every((label) => clearOfConstructions(trial, label, gap))) continue;
    diagram.segments = trial.segments;
    diagram.circles = trial.circles;
    diagram.polygons = trial.polygons;
    made++;
  }
}

/** The least distance from a box to a segment (0 when they meet). */
function boxToSegment(box: BBox, p: PointXY, q: PointXY): number {
  const inBox = (x: number, y: number) => x >= box.x1 && x <= box.x2 && y >= box.y1 && y <= box.y2;
  if (inBox(p.x, p.y) || inBox(q.x, q.y)) return 0;
  const corners: PointXY[] = [{ x: box.x1, y: box.y1 }, { x: box.x2, y: box.y1 }, { x: box.x2, y: box.y2 }, { x: box.x1, y: box.y2 }];
  const edges = corners.map((c, i) => [c, corners[(i + 1) % 4] as PointXY] as const);
  if (edges.some(([u, v]) => properCross(u, v, p, q))) return 0;
  const toBox = (r: PointXY) => Math.hypot(Math.max(box.x1 - r.x, 0, r.x - box.x2), Math.max(box.y1 - r.y, 0, r.y - box.y2));
  return Math.min(toBox(p), toBox(q), ...corners.map((c) => distanceToSegment(p, q, c)));
}

function properCross(a: PointXY, b: PointXY, c: PointXY, d: PointXY): boolean {
  const o = (p: PointXY, q: PointXY, r: PointXY) => Math.sign((q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x));
  return o(a, b, c) * o(a, b, d) < 0 && o(c, d, a) * o(c, d, b) < 0;
}

/** Least and greatest distance from a point to a box (least 0 when inside). */
function boxDistances(box: BBox, c: PointXY): { least: number; most: number } {
  const least = Math.hypot(Math.max(box.x1 - c.x, 0, c.x - box.x2), Math.max(box.y1 - c.y, 0, c.y - box.y2));
  const most = Math.max(...[[box.x1, box.y1], [box.x2, box.y1], [box.x1, box.y2], [box.x2, box.y2]].map(([x, y]) => Math.hypot((x as number) - c.x, (y as number) - c.y)));
  return { least, most };
}

function boxesApart(a: BBox, b: BBox, gap: number): boolean {
  return a.x2 + gap <= b.x1 || b.x2 + gap <= a.x1 || a.y2 + gap <= b.y1 || b.y2 + gap <= a.y1;
}

/** The 16 directions a letter may sit in, from east round. */
const DIRECTIONS = Array.from({ length: 16 }, (_, k) => ({ x: Math.cos((k * Math.PI) / 8), y: Math.sin((k * Math.PI) / 8) }));

/**
 * A letter for each point, clear of every ink and of the canvas edge, nearer its own point than
 * any other by at least `ownership` px. Throws LayoutError when a point has no such place.
 */
export function placeLabels(rng: Rng, diagram: Diagram, fontSize: number, width: number, height: number): Map<string, PlacedText> {
  const placed = new Map<string, PlacedText>();
  const pieces = drawnSegments(diagram).map(([u, v]) => [diagram.points[u] as PointXY, diagram.points[v] as PointXY] as const);
  const halfStroke = STROKE_WIDTH / 2 + 1;
  const ownership = Math.max(6, fontSize * 0.5);
  for (const [label, p] of Object.entries(diagram.points)) {
    let chosen: PlacedText | null = null;
    const order = rng.shuffle(DIRECTIONS);
    const probe = placeText(label, { fontSize, weight: 'bold' }, { x: 0, y: 0, h: 'center', v: 'middle' });
    const halfW = (probe.box.x2 - probe.box.x1) / 2;
    const halfH = (probe.box.y2 - probe.box.y1) / 2;
    for (const [dir, further] of [...order.map((d) => [d, 0] as const), ...order.map((d) => [d, 4] as const)]) {
      // Far enough along the direction that the box clears the dot.
      const reach = further + DOT_RADIUS + LABEL_CLEARANCE + 1 + Math.min(halfW / Math.max(Math.abs(dir.x), 1e-9), halfH / Math.max(Math.abs(dir.y), 1e-9));
      const cx = p.x + 0.5 + dir.x * reach;
      const cy = p.y + 0.5 + dir.y * reach;
      const text = placeText(label, { fontSize, weight: 'bold' }, { x: cx, y: cy, h: 'center', v: 'middle' });
      const box = text.box;
      if (box.x1 < LABEL_CLEARANCE + 1 || box.y1 < LABEL_CLEARANCE + 1 || box.x2 > width - LABEL_CLEARANCE - 1 || box.y2 > height - LABEL_CLEARANCE - 1) continue;
      const centre = { x: cx, y: cy };
      const own = distance(centre, { x: p.x + 0.5, y: p.y + 0.5 });
      const clearOfDots = Object.entries(diagram.points).every(([other, q]) => {
        const dots = boxDistances(box, { x: q.x + 0.5, y: q.y + 0.5 }).least >= DOT_RADIUS + 1 + LABEL_CLEARANCE;
        return dots && (other === label || distance(centre, { x: q.x + 0.5, y: q.y + 0.5 }) >= own + ownership);
      });
      if (!clearOfDots) continue;
      const clearOfLines = pieces.every(([u, v]) => boxToSegment(box, { x: u.x + 0.5, y: u.y + 0.5 }, { x: v.x + 0.5, y: v.y + 0.5 }) >= halfStroke + LABEL_CLEARANCE);
      if (!clearOfLines) continue;
      const clearOfCircles = diagram.circles.every((c) => {
        const centreOf = diagram.points[c.center] as PointXY;
        const { least, most } = boxDistances(box, { x: centreOf.x + 0.5, y: centreOf.y + 0.5 });
        return c.radius + halfStroke + LABEL_CLEARANCE <= least || c.radius - halfStroke - LABEL_CLEARANCE >= most;
      });
      if (!clearOfCircles) continue;
      if (![...placed.values()].every((other) => boxesApart(other.box, box, LABEL_CLEARANCE))) continue;
      chosen = text;
      break;
    }
    if (!chosen) throw new LayoutError(`no clear place for the letter of point ${label}`);
    placed.set(label, chosen);
  }
  return placed;
}

/** A circle outline as a closed polyline (the painter fills circles; outlines are strokes). */
function circleOutline(c: PointXY, radius: number): [number, number][] {
  const steps = Math.max(24, Math.ceil((2 * Math.PI * radius) / 6));
  return Array.from({ length: steps + 1 }, (_, k) => [c.x + 0.5 + radius * Math.cos((2 * Math.PI * k) / steps), c.y + 0.5 + radius * Math.sin((2 * Math.PI * k) / steps)] as [number, number]);
}

/**
 * A straight stroke as a polyline of short collinear pieces. The painter covers each pixel by its
 * distance to the nearest piece, which for pieces end to end on one line is the distance to the
 * whole stroke, so the ink is the same; but it scans each piece's own box, and a long diagonal's
 * single box is most of the canvas (at difficulty 5 that scan was most of a task's painting).
 */
function finely(points: readonly (readonly [number, number])[], piece = 16): [number, number][] {
  const out: [number, number][] = [[points[0]![0], points[0]![1]]];
  for (let i = 1; i < points.length; i++) {
    const [ax, ay] = points[i - 1]!;
    const [bx, by] = points[i]!;
    const steps = Math.max(1, Math.ceil(Math.hypot(bx - ax, by - ay) / piece));
    for (let k = 1; k <= steps; k++) out.push(k === steps ? [bx, by] : [ax + ((bx - ax) * k) / steps, ay + ((by - ay) * k) / steps]);
  }
  return out;
}

/** The scene: the diagram's ink as one mark, then each letter as its own mark. */
export function diagramScene(diagram: Diagram, labels: Map<string, PlacedText>, width: number, height: number, colours: DiagramColours): Scene {
  const at = (label: string): [number, number] => {
    const p = diagram.points[label] as PointXY;
    return [p.x + 0.5, p.y + 0.5];
  };
  const ink = (fill: string | null): Primitive[] => [
    ...diagram.segments.map(([u, v]) => polyline(finely([at(u), at(v)]), fill ?? colours.ink, STROKE_WIDTH)),
    ...diagram.polygons.map((corners) => polyline(finely([...corners, corners[0] as string].map(at)), fill ?? colours.ink, STROKE_WIDTH)),
    ...diagram.circles.map((c) => polyline(circleOutline(diagram.points[c.center] as PointXY, c.radius), fill ?? colours.ink, STROKE_WIDTH)),
    ...Object.keys(diagram.points).map((label) => circle(...at(label), DOT_RADIUS, fill ?? colours.dots)),
  ];
  const layers: Layer[] = [{ name: 'diagram', owners: {}, draw: ink }];
  for (const [label, text] of labels) layers.push({ name: `letter of point ${label}`, owners: {}, draw: (fill) => [text.draw(fill ?? colours.text)] });
  return {
    width,
    height,
    background: '#ffffff',
    layers,
    meta: {
      unit: 'pixels',
      source: 'generator',
      figure_bbox: { x1: 0, y1: 0, x2: width, y2: height },
      points: diagram.points,
      segments: diagram.segments,
      circles: diagram.circles,
      polygons: diagram.polygons,
    },
  };
}
