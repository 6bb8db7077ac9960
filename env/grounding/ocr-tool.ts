/**
 * `ocr`: the agent's text-reading tool (as in OpenThinkIMG and VISTA-Gym): the text inside a box
 * of the current image (or the whole image), each piece with its box in the image's pixels, so
 * the model can quote exact labels and aim other tools at them. The image comes back unchanged.
 *
 * OCR runs two neural networks, which it awaits like any tool's `apply`. It never reads model text
 * beyond its validated arguments and never executes anything.
 */
import type { RgbImage } from '../core/image.js';
import { releasePixels } from '../core/pixel-pool.js';
import type { BBox, PixelMetadata } from '../tools/metadata.js';
import { inlineJson, toolError, toolSuccess } from '../tools/outcome.js';
import { clipRegion } from '../tools/region.js';
import { cropImage } from '../tools/resize.js';
import type { ToolDefinition } from '../tools/types.js';
import type { OcrOptions } from './ocr.js';

export const OCR_TOOL_NAME = 'ocr';
/** Pieces of text listed in one observation; the rest are counted, so the model can ask for a smaller box. */
export const OCR_MAX_ITEMS = 80;
/** Boxes smaller than this on a side are widened around their centre (a word needs some room). */
const MIN_SIDE = 16;

export interface OcrItem {
  text: string;
  box: BBox;
  confidence: number;
}

export function createOcrTool(options: OcrOptions = {}): ToolDefinition {
  return {
    name: OCR_TOOL_NAME,
    description:
      'Reads the text in a box of the current image (or in the whole image when no box is given) and lists each piece of text ' +
      'with its box [x1, y1, x2, y2] in pixels of the current image, top to bottom, left to right. Use it to get exact labels ' +
      'before a focus tool, or to read small print. The image is not changed.',
    parameters: {
      type: 'object',
      properties: {
        bbox: {
          type: 'array',
          items: { type: 'number' },
          minItems: 4,
          maxItems: 4,
          description: 'optional, four numbers [x1, y1, x2, y2]: the box to read, in pixels of the current image (left, top, right, bottom); default: the whole image',
        },
      },
      required: [],
      additionalProperties: false,
    },
    exampleArguments(meta?: PixelMetadata) {
      const box = meta?.figure_bbox;
      return box ? { bbox: [box.x1, box.y1, box.x2, box.y2] } : {};
    },
    async apply(image, args) {
      const region = regionOf(image, args.bbox);
      if (typeof region === 'string') return toolError('E4', OCR_TOOL_NAME, region);
      const crop = region.x1 === 0 && region.y1 === 0 && region.x2 === image.width && region.y2 === image.height ? image : cropImage(image, region.x1, region.y1, region.x2, region.y2);
      // Loaded on first use: listing tools must not start onnxruntime.
      const { readText } = await import('./ocr.js');
      const result = await readText(crop, options);
      if (crop !== image) releasePixels(crop); // read by the recogniser only, which is done with it
      const items: OcrItem[] = result.segments.map((s) => ({
        text: s.text,
        box: { x1: s.box.x1 + region.x1, y1: s.box.y1 + region.y1, x2: s.box.x2 + region.x1, y2: s.box.y2 + region.y1 },
        confidence: s.confidence,
      }));
      return toolSuccess(image, describeOcr(items, region, image));
    },
  };
}

export const ocrTool = createOcrTool();

/** The region to read, clipped to the image and widened to MIN_SIDE, or why it cannot be read. */
export function regionOf(image: RgbImage, bbox: unknown): BBox | string {
  if (bbox === undefined) return { x1: 0, y1: 0, x2: image.width, y2: image.height };
  const [x1, y1, x2, y2] = bbox as number[];
  const shown = inlineJson(bbox);
  if (![x1, y1, x2, y2].every((v) => typeof v === 'number' && Number.isFinite(v))) return `bbox must be four finite numbers [x1, y1, x2, y2]; got ${shown}`;
  const region = clipRegion(image.width, image.height, bbox as number[], MIN_SIDE);
  if (typeof region === 'string') return region;
  return { x1: region.left, y1: region.top, x2: region.right, y2: region.bottom };
}

/** The observation: one line saying what was read where, then one line per piece of text. */
export function describeOcr(items: readonly OcrItem[], region: BBox, image: RgbImage): string {
  const whole = region.x1 === 0 && region.y1 === 0 && region.x2 === image.width && region.y2 === image.height;
  const where = whole ? 'the whole image' : `[${region.x1}, ${region.y1}, ${region.x2}, ${region.y2}]`;
  if (items.length === 0) return `read no text in ${where}.`;
  const shown = items.slice(0, OCR_MAX_ITEMS).map((i) => `${JSON.stringify(i.text)} [${i.box.x1}, ${i.box.y1}, ${i.box.x2}, ${i.box.y2}]${i.confidence < 0.7 ? ' (unsure)' : ''}`);
  const more = items.length > OCR_MAX_ITEMS ? `\n... and ${items.length - OCR_MAX_ITEMS} more; read a smaller box to see them.` : '';
  return `read ${items.length} piece${items.length === 1 ? '' : 's'} of text in ${where} (text [x1, y1, x2, y2]):\n${shown.join('\n')}${more}`;
}
