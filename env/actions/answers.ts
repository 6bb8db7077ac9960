/**
 * Finds final answers written in prose: `<answer>…</answer>` (DeepEyes, V-Thinker),
 * `Terminate(...)` / `Terminate(ans=...)` (OpenThinkIMG), `\boxed{…}` with balanced braces,
 * and `FINAL ANSWER: …` to the end of its line (ReFocus, whose prompts end it with
 * "TERMINATE" and usually a full stop, both dropped). Each kind is read in that order and
 * hides what it consumed from the next, so `<answer>\boxed{7}</answer>` counts once.
 *
 * Linear time: every scan moves forward; a failed match resumes after what it looked at.
 */
import { splitAnswer, answerFromValue } from './answer-text.js';
import type { Findings } from './findings.js';
import { parseExpression } from './python/syntax.js';
import { blankSpans, type Span, findFrom } from './text-regions.js';
import { Code, isWordCode } from './chars.js';

const ANSWER_OPEN = '<answer>';
const ANSWER_CLOSE = '</answer>';

export function readProseAnswers(prose: string, found: Findings): void {
  let text = prose;
  for (const scan of [scanAnswerTags, scanTerminate, scanBoxed, scanFinalAnswer]) {
    const spans = scan(text, found);
    text = blankSpans(text, spans);
  }
}

function scanAnswerTags(text: string, found: Findings): Span[] {
  const spans: Span[] = [];
  let open = findFrom(text, ANSWER_OPEN);
  let close = open === -1 ? -1 : findFrom(text, ANSWER_CLOSE, open);
  while (open !== -1) {
    const contentStart = open + ANSWER_OPEN.length;
    if (close !== -1 && close < contentStart) close = findFrom(text, ANSWER_CLOSE, contentStart);
    const nextOpen = findFrom(text, ANSWER_OPEN, contentStart);
    if (close === -1) {
      found.error('E1', `<answer> is not closed: write the final answer as ${found.examples.answer}`, open);
      spans.push({ start: open, end: text.length });
      break;
    }
    if (nextOpen !== -1 && nextOpen < close) {
      // An opening tag with another one before its close: the inner pair is the answer.
      spans.push({ start: open, end: nextOpen });
      open = nextOpen;
      continue;
    }
    found.answers.push({ answer: unwrapBoxed(text.slice(contentStart, close)), offset: open, style: 'answer_tag' });
    spans.push({ start: open, end: close + ANSWER_CLOSE.length });
    open = nextOpen === -1 ? -1 : findFrom(text, ANSWER_OPEN, close + ANSWER_CLOSE.length);
  }
  return spans;
}

/** `<answer>\boxed{7}</answer>` is the answer 7. */
function unwrapBoxed(content: string): string | string[] {
  const trimmed = content.trim();
  if (trimmed.startsWith('\\boxed{') && trimmed.endsWith('}')) {
    const end = balancedEnd(trimmed, '\\boxed{'.length - 1, trimmed.length);
    if (end === trimmed.length) return splitAnswer(trimmed.slice('\\boxed{'.length, -1));
  }
  return splitAnswer(trimmed);
}

function scanTerminate(text: string, found: Findings): Span[] {
  const spans: Span[] = [];
  const word = 'Terminate(';
  let at = findFrom(text, word);
  let lineEnd = -1;
  while (at !== -1) {
    const before = at > 0 ? text.charCodeAt(at - 1) : -1;
    const open = at + word.length - 1;
    if (lineEnd < open) lineEnd = indexOrEnd(text, '\n', open);
    if (isWordCode(before)) {
      at = findFrom(text, word, at + word.length);
      continue;
    }
    const close = matchParen(text, open, lineEnd);
    if (close === -1) {
      at = findFrom(text, word, lineEnd);
      continue;
    }
    const answer = terminateAnswer(text.slice(at, close + 1), text.slice(open + 1, close));
    if (answer !== null) {
      found.answers.push({ answer, offset: at, style: 'terminate' });
      spans.push({ start: at, end: close + 1 });
    }
    at = findFrom(text, word, close + 1);
  }
  return spans;
}

/** The answer inside Terminate(...): a Python literal when it is one, else the raw text. */
function terminateAnswer(whole: string, inner: string): string | string[] | null {
  const parsed = parseExpression(whole);
  if (parsed.ok && parsed.value.kind === 'call') {
    const call = parsed.value;
    const source = call.args[0] ?? call.keywords.find((k) => k.name === 'ans' || k.name === 'answer')?.value;
    if (source?.kind === 'literal') return answerFromValue(source.value);
    if (source?.kind === 'list' && source.items.every((item) => item.kind === 'literal')) {
      return answerFromValue(source.items.map((item) => (item.kind === 'literal' ? item.value : null)));
    }
  }
  const raw = stripAnswerKeyword(inner.trim());
  return raw === '' ? null : splitAnswer(raw);
}

/** `ans = 12` → `12`: the keyword of Terminate's argument, when written as free text. */
function stripAnswerKeyword(text: string): string {
  for (const keyword of ['answer', 'ans']) {
    if (text.startsWith(keyword)) {
      const rest = text.slice(keyword.length).trimStart();
      if (rest.startsWith('=')) return rest.slice(1).trim();
    }
  }
  return text;
}

/** The matching `)` for the `(` at `open`, quote-aware, not past `limit`; -1 when none. */
function matchParen(text: string, open: number, limit: number): number {
  let depth = 0;
  let quote = 0;
  for (let i = open; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (quote !== 0) {
      if (c === Code.Backslash) i++;
      else if (c === quote) quote = 0;
      continue;
    }
    if (c === Code.Quote || c === Code.Apostrophe) quote = c;
    else if (c === Code.OpenParen) depth++;
    else if (c === Code.CloseParen && --depth === 0) return i;
  }
  // An apostrophe in free text (Terminate(Bob's)) breaks the quote-aware match; retry plainly.
  depth = 0;
  for (let i = open; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (c === Code.OpenParen) depth++;
    else if (c === Code.CloseParen && --depth === 0) return i;
  }
  return -1;
}

function scanBoxed(text: string, found: Findings): Span[] {
  const spans: Span[] = [];
  const word = '\\boxed{';
  let at = findFrom(text, word);
  while (at !== -1) {
    const open = at + word.length - 1;
    const end = balancedEnd(text, open, text.length);
    if (end === -1) break; // unbalanced to the end of the message: nothing later can close either
    found.answers.push({ answer: splitAnswer(text.slice(open + 1, end - 1)), offset: at, style: 'boxed' });
    spans.push({ start: at, end });
    at = findFrom(text, word, end);
  }
  return spans;
}

/** Index just after the `}` matching the `{` at `open` (LaTeX escapes \{ \} skipped), or -1. */
function balancedEnd(text: string, open: number, limit: number): number {
  let depth = 0;
  for (let i = open; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (c === Code.Backslash) i++;
    else if (c === Code.OpenBrace) depth++;
    else if (c === Code.CloseBrace && --depth === 0) return i + 1;
  }
  return -1;
}

function scanFinalAnswer(text: string, found: Findings): Span[] {
  const spans: Span[] = [];
  // ASCII-only lower-casing keeps every offset where it was.
  const lower = text.replace(/[A-Z]+/g, (m) => m.toLowerCase());
  const marker = 'final answer:';
  let at = findFrom(lower, marker);
  let lineEnd = -1;
  while (at !== -1) {
    if (lineEnd < at) lineEnd = indexOrEnd(text, '\n', at);
    const next = findFrom(lower, marker, at + marker.length);
    if (next !== -1 && next < lineEnd) {
      // Several markers on one line: the last one holds the answer.
      at = next;
      continue;
    }
    const value = cleanFinalAnswer(text.slice(at + marker.length, lineEnd));
    if (value !== '') {
      found.answers.push({ answer: splitAnswer(value), offset: at, style: 'final_answer' });
      spans.push({ start: at, end: lineEnd });
    }
    at = next;
  }
  return spans;
}

/**
 * `** 364263. TERMINATE` → `364263`: markdown emphasis, the TERMINATE keyword and one
 * sentence-ending full stop are not part of the answer. Without TERMINATE, a final dot is kept
 * when the last word is an abbreviation such as U.S. or e.g.
 */
function cleanFinalAnswer(raw: string): string {
  let value = trimChars(raw, ' \t\r*_').trimEnd();
  if (value.endsWith('TERMINATE')) {
    // ReFocus writes "FINAL ANSWER: <answer>. TERMINATE": that full stop is never the answer's.
    value = trimChars(value.slice(0, -'TERMINATE'.length), ' \t\r*_');
    return value.endsWith('.') ? value.slice(0, -1).trimEnd() : value;
  }
  value = trimChars(value, ' \t\r*_');
  if (value.endsWith('.')) {
    const lastWord = value.slice(value.lastIndexOf(' ') + 1);
    if (!/^(?:[A-Za-z]\.)+$/.test(lastWord)) value = value.slice(0, -1).trimEnd();
  }
  return value;
}

/** Strips the given characters from both ends (a loop, not a regex: no backtracking on long runs). */
function trimChars(text: string, chars: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && chars.includes(text[start] ?? '')) start++;
  while (end > start && chars.includes(text[end - 1] ?? '')) end--;
  return text.slice(start, end);
}

function indexOrEnd(text: string, needle: string, from: number): number {
  const i = findFrom(text, needle, from);
  return i === -1 ? text.length : i;
}
