/**
 * Offsets into a message: blanking regions that one reader has consumed (so the next reader
 * does not see them, while every offset stays valid) and turning an offset into a line number.
 */

/** A half-open range [start, end) of UTF-16 code units. */
export interface Span {
  start: number;
  end: number;
}

/**
 * The text with every span replaced by spaces, newlines kept: same length, same line numbers,
 * so an offset found in the result points at the same place in the original.
 */
export function blankSpans(text: string, spans: readonly Span[]): string {
  if (spans.length === 0) return text;
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const parts: string[] = [];
  let at = 0;
  for (const span of sorted) {
    const start = Math.max(span.start, at);
    const end = Math.min(Math.max(span.end, start), text.length);
    parts.push(text.slice(at, start));
    const segment = text.slice(start, end);
    parts.push(segment.indexOf('\n') === -1 ? ' '.repeat(segment.length) : segment.replace(/[^\n]/g, ' '));
    at = end;
  }
  parts.push(text.slice(at));
  return parts.join('');
}

/** 1-based line numbers for offsets, by binary search over the newline positions. */
export class LineIndex {
  private readonly newlines: number[] = [];

  constructor(text: string) {
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) this.newlines.push(i);
  }

  /** Number of lines in the text. */
  get count(): number {
    return this.newlines.length + 1;
  }

  lineOf(offset: number): number {
    let lo = 0;
    let hi = this.newlines.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.newlines[mid] ?? Infinity) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  }
}

export function isBlank(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return false;
  }
  return true;
}

export function skipWhitespace(text: string, from: number, limit = text.length): number {
  let i = from;
  while (i < limit) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
    i++;
  }
  return i;
}

/**
 * Index of `needle` in `text` at or after `from`, or -1. The scanners use this rather than
 * String.prototype.indexOf / includes for multi-character needles: on Node 20 (V8 11.3) a
 * TurboFan-optimised scanning loop was measured with perf to spend seconds inside V8's
 * Boyer-Moore-Horspool string search on a 400 KB message (the search restarting near the
 * start on every iteration), which is exactly the input-dependent blow-up parsing must never
 * have. This plain scan is linear for the short tags searched here (their first character
 * does not recur inside them), and at worst O(text × needle).
 */
export function findFrom(text: string, needle: string, from = 0): number {
  const length = needle.length;
  if (length === 0) return Math.min(Math.max(from, 0), text.length);
  const first = needle.charCodeAt(0);
  const last = text.length - length;
  for (let i = from < 0 ? 0 : from; i <= last; i++) {
    if (text.charCodeAt(i) !== first) continue;
    let k = 1;
    while (k < length && text.charCodeAt(i + k) === needle.charCodeAt(k)) k++;
    if (k === length) return i;
  }
  return -1;
}

export function contains(text: string, needle: string): boolean {
  return findFrom(text, needle) !== -1;
}
