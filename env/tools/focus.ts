/**
 * The twelve ReFocus tools: focus_on_{columns,rows,x_values,y_values}_with_{mask,draw,highlight}.
 * The model names bands by their labels; where each band lies comes from the image's metadata,
 * never from the model. Every band is inset by 2 px (ReFocus) and clamped to the image.
 *
 *   mask      every NON-selected band of the family is filled white (255,255,255); rows never
 *             include the header, so the header is never masked; nothing or everything selected
 *             leaves the image unchanged (and the summary says so).
 *   draw      a red (255,0,0) outline 5 px wide just inside each selected band.
 *   highlight (255,0,0) at alpha 50 composited over each selected band (formula in raster.ts).
 *
 * Tools here never mutate their input image and never throw for anything a model can send.
 */
import type { RgbImage } from '../core/image.js';
import { bandFamiliesOf, bandKey, familyNoun, type BandFamily, type BBox, type PixelMetadata } from './metadata.js';
import { selectLabels } from './labels.js';
import { inlineJson, toolError, toolSuccess } from './outcome.js';
import { bandRect, copyForPainting, fillRect, outlineRect, tintRects, RED, WHITE, type PixelRect } from './raster.js';
import type { LabelMatch, ToolDefinition, ToolOutcome } from './types.js';

export type FocusMode = 'mask' | 'draw' | 'highlight';

export const FOCUS_MODES: readonly FocusMode[] = ['mask', 'draw', 'highlight'];

/** Width of the red outline drawn by the *_with_draw tools (ReFocus: 5). */
export const OUTLINE_WIDTH = 5;

interface FamilyWording {
  plural: string;
  /** What the bands are, for a model deciding which tool fits the image. */
  what: string;
  /** What the argument is, for its description and for error messages ("must be ..."). */
  argument: string;
  example: string[];
}

const FAMILY_WORDING: Readonly<Record<BandFamily, FamilyWording>> = {
  columns: { plural: 'columns', what: 'columns of a table', argument: 'a list of column names, as written in the header row', example: ['Country', 'Wins'] },
  rows: { plural: 'rows', what: 'rows of a table', argument: "a list of row names, as written in each row's first cell", example: ['2019', '2020'] },
  x_values: { plural: 'x values', what: 'bars of a vertical bar chart, one band per x-axis label', argument: 'a list of x-axis labels, as written under the bars', example: ['2019', '2020'] },
  y_values: { plural: 'y values', what: 'bars of a horizontal bar chart, one band per y-axis label', argument: 'a list of y-axis labels, as written beside the bars', example: ['France', 'Spain'] },
};

export function focusToolName(family: BandFamily, mode: FocusMode): string {
  return `focus_on_${family}_with_${mode}`;
}

function describeTool(family: BandFamily, mode: FocusMode): string {
  const noun = familyNoun(family);
  const { plural, what } = FAMILY_WORDING[family];
  const effect = {
    mask:
      `Hides every ${noun} you do not list by painting it white, so only the ${plural} you name stay visible` +
      (family === 'rows' ? ' (the header row always stays)' : '') +
      '. Use it to remove distractions before reading or comparing values.',
    draw: `Draws a red box around each ${noun} you list and leaves everything else as it was. Use it to mark where to look while keeping the context.`,
    highlight: `Tints each ${noun} you list with a light, see-through red; the text stays readable and everything else is unchanged. Use it to pick out the ${plural} that matter.`,
  }[mode];
  return `${effect} Works on the ${what}; name ${plural} exactly as they appear in the image. Returns the edited image, which you can look at before answering.`;
}

function labelsOf(meta: PixelMetadata, family: BandFamily): Record<string, BBox> | undefined {
  const bands = meta[bandKey(family)];
  return bands !== undefined && Object.keys(bands).length > 0 ? bands : undefined;
}

/**
 * VTool-R1 binds `rows_bbox` to a chart's y-value bands and `columns_bbox` to its x-value bands,
 * so its models call rows and columns tools on charts. On an image with no rows (columns) but
 * y (x) values, those tools act on the bound bands, as there.
 */
const VTOOL_BINDING: Partial<Record<BandFamily, BandFamily>> = { rows: 'y_values', columns: 'x_values' };

function bandsFor(meta: PixelMetadata, family: BandFamily): { bands: Record<string, BBox>; bound: BandFamily | null } | undefined {
  const own = labelsOf(meta, family);
  if (own) return { bands: own, bound: null };
  const bound = VTOOL_BINDING[family];
  const other = bound ? labelsOf(meta, bound) : undefined;
  return other && bound ? { bands: other, bound } : undefined;
}

export function focusTool(family: BandFamily, mode: FocusMode): ToolDefinition {
  const name = focusToolName(family, mode);
  const wording = FAMILY_WORDING[family];
  const noun = familyNoun(family);
  return {
    name,
    description: describeTool(family, mode),
    parameters: {
      type: 'object',
      properties: {
        [family]: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          description: wording.argument,
        },
      },
      required: [family],
      additionalProperties: false,
    },
    exampleArguments(meta?: PixelMetadata): Record<string, unknown> {
      const own = meta ? labelsOf(meta, family) : undefined;
      return { [family]: own ? Object.keys(own).slice(0, 2) : wording.example };
    },
    async apply(image: RgbImage, args: Record<string, unknown>, meta: PixelMetadata): Promise<ToolOutcome> {
      const found = bandsFor(meta, family);
      if (!found) return missingFamily(name, family, mode, meta);
      const { bands, bound } = found;
      const labels = Object.keys(bands);
      const requested = args[family] as string[];
      const selection = selectLabels(requested, labels, noun, wording.plural);
      if (!selection.ok) return toolError('E4', name, selection.message);
      const { selected, matches } = selection;
      const note = fuzzyNote(matches) + (bound ? `; this chart has no ${wording.plural}, so its ${FAMILY_WORDING[bound].plural} were used (VTool-R1's binding)` : '');
      const rectsOf = (chosen: readonly string[]): PixelRect[] =>
        chosen.map((label) => bandRect(bands[label] as BBox, image.width, image.height)).filter((r): r is PixelRect => r !== null);

      // A new image even when nothing changes: callers own what a tool returns and may paint on it.
      const output = copyForPainting(image);
      if (selected.length === 0) {
        const example = inlineJson(labels.slice(0, 2));
        return toolSuccess(output, `no ${wording.plural} selected: image unchanged. List the ${wording.plural} to focus on, e.g. ${example}.`, matches);
      }
      if (mode === 'mask') {
        const others = labels.filter((label) => !selected.includes(label));
        if (others.length === 0) {
          return toolSuccess(output, `all ${labels.length} ${wording.plural} selected: nothing to mask, image unchanged${note}.`, matches);
        }
        for (const rect of rectsOf(others)) fillRect(output, rect, WHITE);
        const kept = family === 'rows' && !bound ? `${selected.join(', ')} (and the header)` : selected.join(', ');
        return toolSuccess(output, `kept ${selected.length === 1 ? noun : wording.plural} ${kept}; masked ${others.length} other${others.length === 1 ? '' : 's'}${note}.`, matches);
      }
      if (mode === 'draw') {
        for (const rect of rectsOf(selected)) outlineRect(output, rect, OUTLINE_WIDTH, RED);
        return toolSuccess(output, `drew a red box around ${selected.length === 1 ? noun : wording.plural} ${selected.join(', ')}${note}.`, matches);
      }
      tintRects(output, rectsOf(selected));
      return toolSuccess(output, `highlighted ${selected.length === 1 ? noun : wording.plural} ${selected.join(', ')} in red${note}.`, matches);
    },
  };
}

/** Tells the model which labels it wrote loosely, so it learns the exact spelling. */
function fuzzyNote(matches: readonly LabelMatch[]): string {
  const loose = matches.filter((m) => m.how !== 'exact');
  if (loose.length === 0) return '';
  return `; read ${loose.map((m) => `'${m.requested}' as '${m.matched}'`).join(', ')}`;
}

function missingFamily(name: string, family: BandFamily, mode: FocusMode, meta: PixelMetadata): ToolOutcome {
  const present = bandFamiliesOf(meta);
  const plural = FAMILY_WORDING[family].plural;
  if (present.length === 0) {
    return toolError('E4', name, `this image has no labelled ${plural} (or any other bands); use zoom_in, draw_horizontal_line, draw_vertical_line or mark_point instead`);
  }
  const alternatives = present.map((f) => focusToolName(f, mode)).join(' or ');
  return toolError('E4', name, `this image has no labelled ${plural}; it has ${present.map((f) => FAMILY_WORDING[f].plural).join(' and ')} — use ${alternatives} instead`);
}

export function focusTools(): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  for (const family of ['columns', 'rows', 'x_values', 'y_values'] as const) {
    for (const mode of FOCUS_MODES) tools.push(focusTool(family, mode));
  }
  return tools;
}
