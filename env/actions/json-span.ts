/**
 * Reads one JSON object or array that starts at a known offset inside a longer message, and
 * says where it ended, so text after it can be judged. A single string-aware scan finds the
 * end and the nesting depth (capped); only then does JSON.parse see the slice. Never looks
 * past `limit`, which callers use to keep the total work linear.
 */
import { MAX_NESTING_DEPTH } from './limits.js';
import { skipWhitespace } from './text-regions.js';

export type JsonRead =
  | { ok: true; value: unknown; end: number }
  | { ok: false; message: string; offset: number };

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const QUOTE = 34;
const BACKSLASH = 92;

export function readJsonValue(text: string, start: number, limit: number = text.length): JsonRead {
  const first = text.charCodeAt(start);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    return { ok: false, message: 'expected a JSON object starting with {', offset: start };
  }
  let depth = 0;
  let inString = false;
  for (let i = start; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth > MAX_NESTING_DEPTH) {
        return { ok: false, message: `JSON nested more than ${MAX_NESTING_DEPTH} levels deep`, offset: i };
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return parseSlice(text, start, i + 1);
    }
  }
  const missing = inString ? 'a closing " for a string' : first === OPEN_BRACE ? 'a closing }' : 'a closing ]';
  return { ok: false, message: `JSON is not complete: missing ${missing}`, offset: start };
}

function parseSlice(text: string, start: number, end: number): JsonRead {
  try {
    return { ok: true, value: JSON.parse(text.slice(start, end)), end };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { ok: false, message: `invalid JSON (${reason})`, offset: start };
  }
}

/** Parses a whole string as JSON with the same depth cap (for `"arguments": "{...}"`). */
export function parseJsonText(text: string): JsonRead {
  const i = skipWhitespace(text, 0);
  const read = readJsonValue(text, i);
  if (!read.ok) return read;
  const rest = skipWhitespace(text, read.end);
  if (rest < text.length) return { ok: false, message: 'unexpected text after the JSON value', offset: rest };
  return read;
}

/** Sets an own property even for keys like "__proto__", which plain assignment would not. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
