/**
 * mark_point: a small red ring around one pixel, to keep track of a data point or a cell.
 *
 * Shape (fixed): every pixel whose squared distance from (x, y) is between 9 and 25 inclusive —
 * a ring of radius 3 to 5 px that leaves the point itself visible — clipped at the image border.
 * Coordinates are rounded to the nearest pixel; a point off the image is an E4 error. On a
 * diagram with labelled points, `point: "C"` marks point C (resolved through the metadata's
 * `points`, point-refs.ts); an unknown label is an E4 error listing the points there are.
 */
import type { RgbImage } from '../core/image.js';
import type { PixelMetadata } from './metadata.js';
import { toolError, toolSuccess } from './outcome.js';
import { examplePoints, matchesOf, pointRefSchema, resolvePointRef } from './point-refs.js';
import { copyForPainting, setPixel, RED } from './raster.js';
import type { ToolDefinition, ToolOutcome } from './types.js';

export const MARKER_INNER_RADIUS = 3;
export const MARKER_OUTER_RADIUS = 5;

/** Whether the pixel at offset (dx, dy) from the marked point is part of the ring. */
export function isMarkerPixel(dx: number, dy: number): boolean {
  const d2 = dx * dx + dy * dy;
  return d2 >= MARKER_INNER_RADIUS ** 2 && d2 <= MARKER_OUTER_RADIUS ** 2;
}

const NAME = 'mark_point';

export const markPointTool: ToolDefinition = {
  name: NAME,
  description:
    'Draws a small red ring around the point (x, y), in pixels from the top-left corner of the current image; the point itself stays visible. On a diagram with labelled points, give point: "C" instead of x and y. Use it to keep track of a data point, a bar top, a cell or a point of a diagram while you reason.',
  parameters: {
    type: 'object',
    properties: {
      x: { type: 'number', description: 'a number: pixels from the left edge of the current image' },
      y: { type: 'number', description: 'a number: pixels from the top edge of the current image' },
      point: pointRefSchema('a point label in the diagram, such as "C" (instead of x and y)'),
    },
    required: [],
    additionalProperties: false,
  },
  exampleArguments(meta?: PixelMetadata): Record<string, unknown> {
    const labelled = examplePoints(meta);
    if (labelled) return { point: labelled[0] };
    const f = meta?.figure_bbox;
    return f ? { x: Math.round((f.x1 + f.x2) / 2), y: Math.round((f.y1 + f.y2) / 2) } : { x: 120, y: 80 };
  },
  async apply(image: RgbImage, args: Record<string, unknown>, meta: PixelMetadata): Promise<ToolOutcome> {
    const byPoint = args.point !== undefined;
    const hasX = args.x !== undefined;
    const hasY = args.y !== undefined;
    if (byPoint && (hasX || hasY)) return toolError('E2', NAME, 'give either point (a label such as "C") or x and y, not both');
    if (!byPoint && !(hasX && hasY)) return toolError('E2', NAME, `mark_point needs x and y (pixels from the top-left corner)${hasX || hasY ? ` — '${hasX ? 'y' : 'x'}' is missing` : ''}, or point (a label such as "C")`);
    let x: number;
    let y: number;
    let name: string | null = null;
    let matches: ReturnType<typeof matchesOf> = [];
    if (byPoint) {
      const resolved = resolvePointRef(args.point, meta, image.width, image.height, 'point');
      if (!resolved.ok) return toolError(resolved.errorClass, NAME, resolved.message);
      ({ x, y } = resolved.point);
      name = resolved.point.match ? resolved.point.name : null;
      matches = matchesOf([resolved.point]);
    } else {
      const rawX = args.x as number;
      const rawY = args.y as number;
      x = Math.round(rawX);
      y = Math.round(rawY);
      if (!Number.isFinite(rawX) || !Number.isFinite(rawY) || x < 0 || y < 0 || x > image.width - 1 || y > image.height - 1) {
        return toolError('E4', NAME, `point (${rawX}, ${rawY}) is outside the image: x must be between 0 and ${image.width - 1} and y between 0 and ${image.height - 1} (pixels from the top-left corner)`);
      }
    }
    const output = copyForPainting(image);
    for (let dy = -MARKER_OUTER_RADIUS; dy <= MARKER_OUTER_RADIUS; dy++) {
      for (let dx = -MARKER_OUTER_RADIUS; dx <= MARKER_OUTER_RADIUS; dx++) {
        if (isMarkerPixel(dx, dy)) setPixel(output, x + dx, y + dy, RED);
      }
    }
    // A labelled point's coordinates stay out of the summary (constructions.ts says why).
    return toolSuccess(output, name === null ? `marked the point (${x}, ${y}) with a red ring.` : `marked point ${name} with a red ring.`, matches);
  },
};
