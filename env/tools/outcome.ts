/**
 * Building ToolOutcomes, so every tool words successes and failures the same way.
 * Failures are values, never exceptions: a tool returns `toolError(...)` for anything the model
 * can fix, and only a bug in the tool itself ends up as E5 (caught by the registry).
 */
import { actionError, type ErrorClass } from '../core/errors.js';
import type { RgbImage } from '../core/image.js';
import type { LabelMatch, ToolOutcome } from './types.js';
import type { PixelMetadata } from './metadata.js';

export function toolSuccess(image: RgbImage, summary: string, matches: LabelMatch[] = [], meta?: PixelMetadata): ToolOutcome {
  return meta === undefined ? { ok: true, image, summary, matches } : { ok: true, image, summary, matches, meta };
}

export function toolError(errorClass: ErrorClass, tool: string, message: string): ToolOutcome {
  return { ok: false, error: actionError(errorClass, message, tool) };
}

/** JSON written the way the examples in our messages read: `["Country", "Wins"]`, `{"y": 120}`. */
export function inlineJson(value: unknown, maxLength = 120): string {
  const text = render(value);
  return text.length > maxLength ? `${text.slice(0, maxLength - 3)}...` : text;
}

function render(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(render).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${render(v)}`).join(', ')}}`;
  }
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return JSON.stringify(value) ?? String(value);
}
