/**
 * Ruler-and-compass tools for geometry diagrams (V-Thinker's "draw an auxiliary line"):
 * draw_line (the whole line through two points), draw_segment (between two points) and
 * draw_circle (a centre and a point on it, or a radius). Points are labels resolved through the
 * image's metadata `points`, or pixel coordinates [x, y] on any image (point-refs.ts).
 *
 * Exact pixels (every pixel's centre (x + ½, y + ½) against the construction through the points'
 * pixel centres; no anti-aliasing, so the pixels are a pure function of the arguments):
 *   line     red where the distance from the pixel centre to the line is < 1 px (2 px wide);
 *   segment  red where the distance to the segment (ends included) is < 1 px;
 *   circle   red where |distance to the centre − r| < 1 px (a ring 2 px wide); r is the distance
 *            between the centre's and the through point's pixel centres, or `radius`.
 * With integer points the line and segment tests are integer arithmetic (no rounding anywhere).
 * Summaries name points as the model named them and never print a labelled point's coordinates:
 * the construction is for the eyes, and coordinates would let a policy compute the answer instead.
 */
import type { RgbImage } from '../core/image.js';
import type { PixelMetadata, PointXY } from './metadata.js';
import { toolError, toolSuccess } from './outcome.js';
import { examplePoints, matchesOf, pointPairSchema, pointRefSchema, resolvePointRef, type ResolvedPoint } from './point-refs.js';
import { copyForPainting, RED } from './raster.js';
import type { ToolDefinition, ToolOutcome } from './types.js';

/** Whether pixel (x, y) is on the line through a and b (a ≠ b): distance from its centre < 1 px. */
export function onLine(a: PointXY, b: PointXY, x: number, y: number): boolean {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const cross = dx * (y - a.y) - dy * (x - a.x);
  return cross * cross < dx * dx + dy * dy;
}

/** Whether pixel (x, y) is on the segment from a to b: distance from its centre to the segment < 1 px. */
export function onSegment(a: PointXY, b: PointXY, x: number, y: number): boolean {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len2 = dx * dx + dy * dy;
  const along = dx * (x - a.x) + dy * (y - a.y);
  if (along <= 0 || len2 === 0) return (x - a.x) ** 2 + (y - a.y) ** 2 < 1;
  if (along >= len2) return (x - b.x) ** 2 + (y - b.y) ** 2 < 1;
  const cross = dx * (y - a.y) - dy * (x - a.x);
  return cross * cross < len2;
}

/** Whether pixel (x, y) is on the circle of radius r about c: |distance − r| < 1 px. */
export function onCircle(c: PointXY, r: number, x: number, y: number): boolean {
  const d2 = (x - c.x) ** 2 + (y - c.y) ** 2;
  const outer = r + 1;
  if (d2 >= outer * outer) return false;
  return r <= 1 || d2 > (r - 1) * (r - 1);
}

/** Paints red every pixel of the box [x1, x2) × [y1, y2), clipped to the image, that `test` accepts. */
function paintWhere(target: RgbImage, x1: number, y1: number, x2: number, y2: number, test: (x: number, y: number) => boolean): number {
  const left = Math.max(0, Math.floor(x1));
  const top = Math.max(0, Math.floor(y1));
  const right = Math.min(target.width, Math.ceil(x2));
  const bottom = Math.min(target.height, Math.ceil(y2));
  const data = target.data;
  let painted = 0;
  for (let y = top; y < bottom; y++) {
    for (let x = left; x < right; x++) {
      if (!test(x, y)) continue;
      const i = (y * target.width + x) * 3;
      data[i] = RED[0];
      data[i + 1] = RED[1];
      data[i + 2] = RED[2];
      painted++;
    }
  }
  return painted;
}

/**
 * Pixels near the line through a and b, walked along its longer axis from `from` to `to`
 * (inclusive, clipped to the image): in each column (row) only the few pixels within 1.5 px of
 * the line can pass `test`, which decides.
 */
function paintAlong(target: RgbImage, a: PointXY, b: PointXY, from: number, to: number, test: (x: number, y: number) => boolean): void {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  if (Math.abs(dx) >= Math.abs(dy)) {
    for (let x = Math.max(0, from); x <= Math.min(target.width - 1, to); x++) {
      const y0 = a.y + (dy * (x - a.x)) / dx;
      paintWhere(target, x, Math.floor(y0) - 2, x + 1, Math.ceil(y0) + 3, test);
    }
  } else {
    for (let y = Math.max(0, from); y <= Math.min(target.height - 1, to); y++) {
      const x0 = a.x + (dx * (y - a.y)) / dy;
      paintWhere(target, Math.floor(x0) - 2, y, Math.ceil(x0) + 3, y + 1, test);
    }
  }
}

function paintLine(target: RgbImage, a: PointXY, b: PointXY): void {
  paintAlong(target, a, b, 0, Math.max(target.width, target.height), (x, y) => onLine(a, b, x, y));
}

/** The segment: the line's walk over its own extent, one pixel beyond each end (the ends' round caps). */
function paintSegment(target: RgbImage, a: PointXY, b: PointXY): void {
  const along = Math.abs(b.x - a.x) >= Math.abs(b.y - a.y) ? [a.x, b.x] : [a.y, b.y];
  paintAlong(target, a, b, Math.min(...along) - 1, Math.max(...along) + 1, (x, y) => onSegment(a, b, x, y));
}

function resolvePair(tool: string, argument: string, value: unknown, meta: PixelMetadata, image: RgbImage): ResolvedPoint[] | ToolOutcome {
  const refs = value as unknown[];
  const points: ResolvedPoint[] = [];
  for (const [i, ref] of refs.entries()) {
    const resolved = resolvePointRef(ref, meta, image.width, image.height, `${argument}[${i}]`);
    if (!resolved.ok) return toolError(resolved.errorClass, tool, resolved.message);
    points.push(resolved.point);
  }
  const [p, q] = points as [ResolvedPoint, ResolvedPoint];
  if (p.x === q.x && p.y === q.y) {
    return toolError('E4', tool, `${argument}: ${p.name} and ${q.name} are the same pixel; give two different points`);
  }
  return points;
}

function pairExample(meta: PixelMetadata | undefined): unknown[] {
  return examplePoints(meta) ?? [[40, 60], [200, 120]];
}

export const drawLineTool: ToolDefinition = {
  name: 'draw_line',
  description:
    'Draws the whole straight line through two points in red, across the image (2 px wide). Name the points by their labels in the diagram, e.g. ["A", "B"], or give pixel coordinates [x, y]. Use it to see which side of a line a point lies on, or whether the line passes above or below a point.',
  parameters: {
    type: 'object',
    properties: { through: pointPairSchema('two points the line passes through: labels such as ["A", "B"], or [[x1, y1], [x2, y2]] in pixels') },
    required: ['through'],
    additionalProperties: false,
  },
  exampleArguments: (meta) => ({ through: pairExample(meta) }),
  async apply(image, args, meta): Promise<ToolOutcome> {
    const pair = resolvePair('draw_line', 'through', args.through, meta, image);
    if (!Array.isArray(pair)) return pair;
    const [a, b] = pair as [ResolvedPoint, ResolvedPoint];
    const output = copyForPainting(image);
    paintLine(output, a, b);
    return toolSuccess(output, `drew a red line through ${a.name} and ${b.name}.`, matchesOf(pair));
  },
};

export const drawSegmentTool: ToolDefinition = {
  name: 'draw_segment',
  description:
    'Draws the straight segment between two points in red (2 px wide). Name the points by their labels, e.g. ["A", "B"], or give pixel coordinates [x, y]. Use it to join points that are not joined in the diagram, e.g. to draw a triangle or to see whether two segments cross.',
  parameters: {
    type: 'object',
    properties: { endpoints: pointPairSchema('the two ends of the segment: labels such as ["A", "B"], or [[x1, y1], [x2, y2]] in pixels') },
    required: ['endpoints'],
    additionalProperties: false,
  },
  exampleArguments: (meta) => ({ endpoints: pairExample(meta) }),
  async apply(image, args, meta): Promise<ToolOutcome> {
    const pair = resolvePair('draw_segment', 'endpoints', args.endpoints, meta, image);
    if (!Array.isArray(pair)) return pair;
    const [a, b] = pair as [ResolvedPoint, ResolvedPoint];
    const output = copyForPainting(image);
    paintSegment(output, a, b);
    return toolSuccess(output, `drew a red segment from ${a.name} to ${b.name}.`, matchesOf(pair));
  },
};

export const drawCircleTool: ToolDefinition = {
  name: 'draw_circle',
  description:
    'Draws a red circle (2 px wide) about a centre, through a given point or with a given radius in pixels. Name points by their labels, e.g. center "O" and through "A", or give pixel coordinates [x, y]. Use it to compare distances: a point inside the circle through A is nearer the centre than A.',
  parameters: {
    type: 'object',
    properties: {
      center: pointRefSchema('the centre: a point label such as "O", or pixel coordinates [x, y]'),
      through: pointRefSchema('a point on the circle: a label such as "A", or pixel coordinates [x, y] (give this or radius)'),
      radius: { type: 'number', minimum: 1, maximum: 4096, description: 'the radius in pixels (give this or through)' },
    },
    required: ['center'],
    additionalProperties: false,
  },
  exampleArguments: (meta) => {
    const pair = examplePoints(meta);
    return pair ? { center: pair[0], through: pair[1] } : { center: [120, 80], radius: 40 };
  },
  async apply(image, args, meta): Promise<ToolOutcome> {
    const hasThrough = args.through !== undefined;
    const hasRadius = args.radius !== undefined;
    if (hasThrough === hasRadius) {
      return toolError('E2', 'draw_circle', hasThrough ? 'give either through or radius, not both' : 'draw_circle needs through (a point on the circle, e.g. "A") or radius (pixels)');
    }
    const center = resolvePointRef(args.center, meta, image.width, image.height, 'center');
    if (!center.ok) return toolError(center.errorClass, 'draw_circle', center.message);
    const c = center.point;
    let r: number;
    let how: string;
    const used: ResolvedPoint[] = [c];
    if (hasThrough) {
      const through = resolvePointRef(args.through, meta, image.width, image.height, 'through');
      if (!through.ok) return toolError(through.errorClass, 'draw_circle', through.message);
      const t = through.point;
      if (t.x === c.x && t.y === c.y) return toolError('E4', 'draw_circle', `through: ${t.name} is the centre itself; give a point on the circle`);
      r = Math.hypot(t.x - c.x, t.y - c.y);
      how = `through ${t.name}`;
      used.push(t);
    } else {
      r = args.radius as number;
      how = `of radius ${Math.round(r * 10) / 10} px`;
    }
    const output = copyForPainting(image);
    paintWhere(output, c.x - r - 1, c.y - r - 1, c.x + r + 2, c.y + r + 2, (x, y) => onCircle(c, r, x, y));
    return toolSuccess(output, `drew a red circle about ${c.name} ${how}.`, matchesOf(used));
  },
};
