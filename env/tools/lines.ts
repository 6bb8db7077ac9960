/**
 * draw_horizontal_line / draw_vertical_line: a dashed red guide line across the whole image, to
 * compare bar heights against a level or line values up with an axis (OpenThinkIMG's tools).
 *
 * The line is 2 px wide: rows y and y+1 (columns x and x+1 for a vertical line), clipped at the
 * image border. The dash pattern is fixed: 10 px drawn, 6 px gap, repeating from the image's left
 * (top) edge, i.e. a pixel at position p along the line is red when p mod 16 < 10.
 * Coordinates are rounded to the nearest pixel; outside [0, size−1] they are an E4 error.
 */
import type { RgbImage } from '../core/image.js';
import type { PixelMetadata } from './metadata.js';
import { toolError, toolSuccess } from './outcome.js';
import { copyForPainting, setPixel, RED } from './raster.js';
import type { ToolDefinition, ToolOutcome } from './types.js';

export const LINE_WIDTH = 2;
export const DASH_ON = 10;
export const DASH_OFF = 6;

/** Whether position p along a dashed line is drawn. */
export function isDash(p: number): boolean {
  return p % (DASH_ON + DASH_OFF) < DASH_ON;
}

function lineTool(axis: 'horizontal' | 'vertical'): ToolDefinition {
  const name = `draw_${axis}_line`;
  const coordinate = axis === 'horizontal' ? 'y' : 'x';
  const across = axis === 'horizontal' ? 'from the top' : 'from the left';
  return {
    name,
    description:
      axis === 'horizontal'
        ? 'Draws a dashed red horizontal line across the whole image at height y (pixels from the top). Use it to compare bar heights or points against one level, e.g. to see which bars reach a value.'
        : 'Draws a dashed red vertical line down the whole image at x (pixels from the left). Use it to line up points, bars or labels with a position on the x axis.',
    parameters: {
      type: 'object',
      properties: { [coordinate]: { type: 'number', description: `a number: where the line goes, in pixels ${across} of the current image` } },
      required: [coordinate],
      additionalProperties: false,
    },
    exampleArguments(meta?: PixelMetadata): Record<string, unknown> {
      const f = meta?.figure_bbox;
      if (!f) return { [coordinate]: 100 };
      return { [coordinate]: Math.round(axis === 'horizontal' ? (f.y1 + f.y2) / 2 : (f.x1 + f.x2) / 2) };
    },
    async apply(image: RgbImage, args: Record<string, unknown>): Promise<ToolOutcome> {
      const raw = args[coordinate] as number;
      const size = axis === 'horizontal' ? image.height : image.width;
      const at = Math.round(raw);
      if (!Number.isFinite(raw) || at < 0 || at > size - 1) {
        return toolError('E4', name, `${coordinate}=${raw} is outside the image: ${coordinate} must be between 0 and ${size - 1} (pixels ${across} of the current ${image.width}×${image.height} image)`);
      }
      const output = copyForPainting(image);
      const length = axis === 'horizontal' ? image.width : image.height;
      for (let offset = 0; offset < LINE_WIDTH; offset++) {
        for (let p = 0; p < length; p++) {
          if (!isDash(p)) continue;
          if (axis === 'horizontal') setPixel(output, p, at + offset, RED);
          else setPixel(output, at + offset, p, RED);
        }
      }
      return toolSuccess(output, `drew a dashed red ${axis} line at ${coordinate}=${at}.`);
    },
  };
}

export const horizontalLineTool = lineTool('horizontal');
export const verticalLineTool = lineTool('vertical');
