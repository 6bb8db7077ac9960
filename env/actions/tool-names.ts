/**
 * The tool names the action parser knows, and how a ReFocus-style Python call of each maps onto
 * structured arguments. Only the Python reader needs this (a JSON call already names its
 * arguments); JSON and hermes calls with other names pass through for the registry to judge.
 *
 * Kept here as a constant rather than read from env/tools/registry.ts so that parsing stays a
 * pure text function with no image library behind it; test/actions checks the two agree once
 * the registry exists.
 */
import { BAND_FAMILIES, type BandFamily } from '../tools/metadata.js';

export type FocusStyle = 'mask' | 'draw' | 'highlight';

const FOCUS_STYLES: readonly FocusStyle[] = ['mask', 'draw', 'highlight'];

/** Where a Python argument goes: the image, the (ignored) metadata boxes, or an argument key. */
export type ParameterTarget = { kind: 'image' } | { kind: 'boxes' } | { kind: 'argument'; key: string };

export interface PythonSignature {
  /** Positional parameters in order, the image first. */
  positional: ParameterTarget[];
  /** Keyword names the model may use, and where each goes. Other keywords pass through by name. */
  keywords: Readonly<Record<string, ParameterTarget>>;
  /** The parameter list as written in a prompt, for error messages. */
  display: string;
}

const IMAGE: ParameterTarget = { kind: 'image' };
const BOXES: ParameterTarget = { kind: 'boxes' };
const arg = (key: string): ParameterTarget => ({ kind: 'argument', key });

function focusSignature(family: BandFamily): PythonSignature {
  const labels = arg(family);
  const keywords: Record<string, ParameterTarget> = {
    image: IMAGE,
    img: IMAGE,
    [family]: labels,
    labels: labels,
    labels_to_focus_on: labels,
    [`${family}_to_focus_on`]: labels,
    // ReFocus's own docstrings call the focus list `columns_to_mask`.
    [`${family}_to_mask`]: labels,
    all_bboxes: BOXES,
    bboxes: BOXES,
    all_bounding_boxes: BOXES,
    [`${family}_bbox`]: BOXES,
    [`all_${family}_bounding_boxes`]: BOXES,
  };
  return { positional: [IMAGE, labels, BOXES], keywords, display: `(image, ${family}_to_focus_on, all_${family}_bounding_boxes)` };
}

function plainSignature(params: string[]): PythonSignature {
  const keywords: Record<string, ParameterTarget> = { image: IMAGE, img: IMAGE };
  for (const p of params) keywords[p] = arg(p);
  return { positional: [IMAGE, ...params.map(arg)], keywords, display: `(image, ${params.join(', ')})` };
}

function buildSignatures(): Map<string, PythonSignature> {
  const table = new Map<string, PythonSignature>();
  for (const family of BAND_FAMILIES) {
    for (const style of FOCUS_STYLES) table.set(`focus_on_${family}_with_${style}`, focusSignature(family));
  }
  table.set('zoom_in', plainSignature(['bbox', 'factor']));
  table.set('draw_horizontal_line', plainSignature(['y']));
  table.set('draw_vertical_line', plainSignature(['x']));
  table.set('mark_point', { ...plainSignature(['x', 'y']), keywords: { ...plainSignature(['x', 'y']).keywords, point: arg('point') } });
  table.set('ocr', plainSignature(['bbox']));
  table.set('draw_line', plainSignature(['through']));
  table.set('draw_segment', plainSignature(['endpoints']));
  table.set('draw_circle', plainSignature(['center', 'through', 'radius']));
  table.set('crop', plainSignature(['bbox']));
  return table;
}

const SIGNATURES = buildSignatures();

/** The 21 tool names: the 12 ReFocus focus tools, zoom_in, the two guide lines, mark_point, ocr, the constructions (draw_line, draw_segment, draw_circle), then crop. */
export const KNOWN_TOOL_NAMES: readonly string[] = [...SIGNATURES.keys()];

export function pythonSignature(name: string): PythonSignature | undefined {
  return SIGNATURES.get(name);
}

/** The band family a focus tool works on (`focus_on_x_values_with_draw` → `x_values`), or null. */
export function focusFamily(name: string): BandFamily | null {
  for (const family of BAND_FAMILIES) {
    if (name.startsWith(`focus_on_${family}_with_`)) return family;
  }
  return null;
}

/** The OpenThinkIMG answer action; in every format a call of this name is the final answer. */
export function isTerminateName(name: string): boolean {
  return name.toLowerCase() === 'terminate';
}
