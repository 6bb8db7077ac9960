/**
 * Finds the reasoning regions of a message: `<think>…</think>`.
 *
 * Rule (the project's choice): text inside <think> is reasoning, not action. Tool calls there
 * are counted but never executed, and answers there are not final answers — the DeepEyes/veRL
 * rule for answers, extended to calls because a model that "thinks about" a call has not yet
 * made it. Two edge cases:
 * - a `</think>` with no `<think>` before it, as the first think tag of the message, closes
 *   reasoning that began at the start (chat templates such as Qwen3's put the opening tag in
 *   the prompt, so the completion holds only the closing one);
 * - a `<think>` never closed runs to the end of the message; the caller tells the model when
 *   that hid a call or an answer.
 */
import type { Span } from './text-regions.js';
import { findFrom } from './text-regions.js';

const OPEN = '<think>';
const CLOSE = '</think>';

export interface ThinkRegions {
  /** The regions, tags included, in order. */
  spans: Span[];
  /** Offset of a `<think>` that was never closed, or null. */
  unclosedAt: number | null;
}

export function findThinkRegions(text: string): ThinkRegions {
  const spans: Span[] = [];
  let at = 0;
  let first = true;
  // Cached next positions of each tag, searched again only once passed: keeps the scan linear
  // even for a message of 100k stray tags.
  let open = findFrom(text, OPEN);
  let close = findFrom(text, CLOSE);
  const nextOpen = (): number => (open !== -1 && open < at ? (open = findFrom(text, OPEN, at)) : open);
  const nextClose = (): number => (close !== -1 && close < at ? (close = findFrom(text, CLOSE, at)) : close);
  for (;;) {
    const o = nextOpen();
    const c = nextClose();
    if (c !== -1 && (o === -1 || c < o)) {
      // A closing tag with no opening one: reasoning from the start if it is the first tag,
      // otherwise a stray tag that only needs hiding.
      spans.push({ start: first ? 0 : c, end: c + CLOSE.length });
      at = c + CLOSE.length;
      first = false;
      continue;
    }
    if (o === -1) return { spans, unclosedAt: null };
    at = o + OPEN.length;
    const end = nextClose();
    if (end === -1) {
      spans.push({ start: o, end: text.length });
      return { spans, unclosedAt: o };
    }
    spans.push({ start: o, end: end + CLOSE.length });
    at = end + CLOSE.length;
    first = false;
  }
}
