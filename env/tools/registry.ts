/**
 * The tool registry: the one list of tools every consumer uses (env server, episodes, CLI,
 * playground), and `runToolCall`, the only way a model's call reaches a tool.
 *
 * runToolCall never throws: every failure becomes an ActionError in the E1–E5 taxonomy
 *   E1 malformed call or unknown tool · E2 missing or extra argument · E3 wrong type ·
 *   E4 unknown label or out-of-range value · E5 the tool itself failed (a bug, not the model's fault)
 * with a message written for the model that made the call.
 */
import { actionError, type ActionError } from '../core/errors.js';
import type { RgbImage } from '../core/image.js';
import { focusTools } from './focus.js';
import { closestLabel } from './labels.js';
import { horizontalLineTool, verticalLineTool } from './lines.js';
import { drawCircleTool, drawLineTool, drawSegmentTool } from './constructions.js';
import { bandFamiliesOf, type PixelMetadata } from './metadata.js';
import { markPointTool } from './point.js';
import { asOpenAIFunction, promptBlock, type OpenAIFunctionTool } from './prompt.js';
import type { ToolCall, ToolContext, ToolDefinition, ToolOutcome } from './types.js';
import { validateArguments } from './validate.js';
import { zoomTool } from './zoom.js';
import { cropTool, imageZoomInAlias } from './crop.js';
import { ocrTool } from '../grounding/ocr-tool.js';

/** Tools that work on any image: they need coordinates, not band metadata. */
const GEOMETRY_TOOLS: readonly ToolDefinition[] = [zoomTool, horizontalLineTool, verticalLineTool, markPointTool, ocrTool];

/**
 * Tools for diagrams of labelled points (task kind `geometry`): the ruler-and-compass tools, the
 * point marker and the zoom. They take point labels or coordinates, never bands.
 */
const DIAGRAM_TOOLS: readonly ToolDefinition[] = [drawLineTool, drawSegmentTool, drawCircleTool, markPointTool, zoomTool];

/**
 * Tools for visual search on natural images (task kind `search`): crop, whose box is in the
 * coordinates of the image the policy was shown and whose pixels come from the full-resolution
 * original (crop.ts).
 */
const SEARCH_TOOLS: readonly ToolDefinition[] = [cropTool];

const TOOLS: readonly ToolDefinition[] = [...focusTools(), ...GEOMETRY_TOOLS, drawLineTool, drawSegmentTool, drawCircleTool, cropTool];
/** Names accepted for a tool the lists do not offer under that name: DeepEyes' `image_zoom_in_tool` for crop. */
const ALIASES: readonly ToolDefinition[] = [imageZoomInAlias];
const BY_NAME = new Map([...TOOLS, ...ALIASES].map((tool) => [tool.name, tool]));

/** Every tool, in a fixed order: the twelve focus tools (by family, then mode), the coordinate tools, then the construction tools. */
export function listTools(): ToolDefinition[] {
  return [...TOOLS];
}

export function getTool(name: string): ToolDefinition | undefined {
  return BY_NAME.get(name);
}

/** The tools that make sense for an image: focus tools only for the band families its metadata has. */
export function availableToolNames(meta: PixelMetadata): string[] {
  const families = bandFamiliesOf(meta);
  return TOOLS.filter((tool) => GEOMETRY_TOOLS.includes(tool) || families.some((family) => tool.name.startsWith(`focus_on_${family}_with_`))).map((tool) => tool.name);
}

/**
 * The tools that apply to a task of `kind` on an image with `meta`: a visual search (`search`) gets
 * crop; a geometry diagram gets the
 * diagram tools (draw_line, draw_segment, draw_circle, mark_point, zoom_in); a chart or table the
 * focus tools its bands allow and the coordinate tools (availableToolNames). The episode offers
 * exactly these, the system prompt lists exactly these, and `reset` returns them.
 */
export function toolNamesForTask(kind: string | undefined, meta: PixelMetadata): string[] {
  if (kind === 'search') return SEARCH_TOOLS.map((tool) => tool.name);
  // Without a kind (an image opened in the playground), labelled points and no bands make a diagram.
  const diagram = kind === 'geometry' || (kind === undefined && Object.keys(meta.points ?? {}).length > 0 && bandFamiliesOf(meta).length === 0);
  return diagram ? DIAGRAM_TOOLS.map((tool) => tool.name) : availableToolNames(meta);
}

/** Tools by name; an unknown name is a programming error (the caller chose the names), so it throws. */
function resolveNames(names?: readonly string[]): ToolDefinition[] {
  if (names === undefined) return listTools();
  return names.map((name) => {
    const tool = BY_NAME.get(name);
    if (!tool) throw new Error(`unknown tool '${name}'; valid tools are: ${TOOLS.map((t) => t.name).join(', ')}`);
    return tool;
  });
}

export function toolsAsOpenAIFunctions(names?: string[]): OpenAIFunctionTool[] {
  return resolveNames(names).map(asOpenAIFunction);
}

/** The text block describing the tools for a prompt; with `meta`, the examples use that image's labels. */
export function toolsPromptBlock(names?: string[], meta?: PixelMetadata): string {
  return promptBlock(resolveNames(names), meta);
}

type Prepared = { ok: true; tool: ToolDefinition; args: Record<string, unknown> } | { ok: false; outcome: ToolOutcome };

/** Validates a call against its tool's schema, then applies it. Never throws (nor rejects). */
export async function runToolCall(image: RgbImage, call: ToolCall, meta: PixelMetadata, context?: ToolContext): Promise<ToolOutcome> {
  const prepared = prepareCall(image, call, meta);
  if (!prepared.ok) return prepared.outcome;
  try {
    return await prepared.tool.apply(image, prepared.args, meta, context);
  } catch (err) {
    return toolFailure(prepared.tool.name, err);
  }
}

function toolFailure(toolName: string | undefined, err: unknown): ToolOutcome {
  const reason = err instanceof Error ? err.message : String(err);
  return fail('E5', `${toolName ?? 'the tool'} failed inside the tool (${reason}). This is not a problem with your call; try another tool or answer from the image you have.`, toolName);
}

/**
 * The verdict on a call before any image is involved: the name (E1), the arguments object (E1)
 * and the tool's schema (E2 missing or extra, E3 type, E4 range). The env runs exactly these
 * checks before a tool runs; `vistool actions parse` runs them on a message alone. Label checks
 * against the image's bands (E4) and failures inside a tool (E5) need the image.
 */
export function checkToolCall(call: ToolCall, meta?: PixelMetadata): ActionError | null {
  const checked = checkCall(call, meta);
  return checked.ok ? null : checked.outcome.ok ? null : checked.outcome.error;
}

function checkCall(call: ToolCall, meta: PixelMetadata | undefined): Prepared {
  const stop = (outcome: ToolOutcome): Prepared => ({ ok: false, outcome });
  let toolName: string | undefined;
  try {
    if (typeof call !== 'object' || call === null || typeof call.name !== 'string' || call.name === '') {
      return stop(fail('E1', 'a tool call needs a tool name and arguments: {"name": "<tool>", "arguments": {...}}'));
    }
    const tool = BY_NAME.get(call.name);
    // The name as written: the record says which call was wrong, as E2 and E3 errors do.
    if (!tool) return stop(fail('E1', unknownToolMessage(call.name, meta), call.name));
    toolName = tool.name;
    const args = argumentsObject(call.arguments);
    if (args === null) {
      return stop(fail('E1', `${tool.name}: arguments must be a JSON object such as {"${Object.keys(tool.parameters.properties)[0] ?? 'argument'}": ...}; got ${typeof call.arguments === 'string' ? 'text that is not a JSON object' : JSON.stringify(call.arguments) ?? 'nothing'}`, tool.name));
    }
    const invalid = validateArguments(tool, args, meta);
    if (invalid) return stop({ ok: false, error: invalid });
    return { ok: true, tool, args };
  } catch (err) {
    return stop(toolFailure(toolName, err));
  }
}

/** Everything before a tool runs: the checks above, then the image. */
function prepareCall(image: RgbImage, call: ToolCall, meta: PixelMetadata): Prepared {
  const stop = (outcome: ToolOutcome): Prepared => ({ ok: false, outcome });
  const checked = checkCall(call, meta);
  if (!checked.ok) return checked;
  const { tool, args } = checked;
  try {
    const malformed = describeMalformedImage(image);
    if (malformed) return stop(fail('E5', `${tool.name} cannot run: the current image is malformed (${malformed}). This is not a problem with your call.`, tool.name));
    return { ok: true, tool, args };
  } catch (err) {
    return stop(toolFailure(tool.name, err));
  }
}

/** Why an image cannot be painted on safely (a buffer that does not match its size), or null. */
function describeMalformedImage(image: RgbImage): string | null {
  if (typeof image !== 'object' || image === null || !Buffer.isBuffer(image.data)) return 'no pixel buffer';
  const { width, height } = image;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) return `size ${width}×${height}`;
  if (image.data.length !== width * height * 3) return `${image.data.length} bytes for ${width}×${height} RGB, expected ${width * height * 3}`;
  return null;
}

function fail(errorClass: 'E1' | 'E5', message: string, tool?: string): ToolOutcome {
  return { ok: false, error: actionError(errorClass, message, tool) };
}

function unknownToolMessage(name: string, meta: PixelMetadata | undefined): string {
  const near = closestLabel(name, TOOLS.map((t) => t.name));
  const hint = near === null ? '' : ` Did you mean '${near}'?`;
  if (meta === undefined) return `unknown tool '${name}'.${hint} The tools are: ${TOOLS.map((t) => t.name).join(', ')}`;
  return `unknown tool '${name}'.${hint} Valid tools for this image are: ${availableToolNames(meta).join(', ')}`;
}

/**
 * Arguments as a plain object. OpenAI-style clients send them as a JSON string, which is parsed
 * here (JSON.parse only reads data; nothing is ever evaluated). A missing value counts as {}.
 */
function argumentsObject(value: unknown): Record<string, unknown> | null {
  let parsed = value;
  if (parsed === undefined) return {};
  if (typeof parsed === 'string') {
    try {
      parsed = JSON.parse(parsed);
    } catch {
      return null;
    }
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
}
