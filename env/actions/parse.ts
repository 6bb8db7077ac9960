/**
 * parseAction: one model message in, the tool calls, the final answer and the errors out.
 * Formats: hermes <tool_call> JSON, OpenThinkIMG {"thought", "actions"} JSON (bare or in a
 * ```json fence), ReFocus / VTool-R1 ```python blocks (read by a restricted parser, never run),
 * and answers as <answer>, FINAL ANSWER:, \boxed{} or Terminate.
 *
 * Never executes model output, never throws on any input, and runs in time linear in the
 * message (which is capped at MAX_MESSAGE_CHARS).
 *
 * Readers run in a fixed order, each hiding what it consumed from the next (offsets kept):
 * <think> regions, <tool_call> tags, code fences, bare JSON, then answers in the prose that is
 * left. Results are put back in written order.
 */
import type { ToolCall } from '../tools/types.js';
import { findFences, type Fence } from './fences.js';
import { Findings, type FoundError } from './findings.js';
import { readHermesCalls } from './hermes.js';
import { MAX_CALLS_PER_MESSAGE, MAX_ERRORS_PER_MESSAGE, MAX_MESSAGE_CHARS } from './limits.js';
import { readBareActions, readJsonFence } from './openthinkimg.js';
import { readPythonBlock } from './python/refocus.js';
import { readProseAnswers } from './answers.js';
import { blankSpans, LineIndex, skipWhitespace } from './text-regions.js';
import { Code, isWordCode } from './chars.js';
import { findThinkRegions } from './think.js';
import { KNOWN_TOOL_NAMES } from './tool-names.js';
import type { ParsedAction, ParseError, ParseOptions } from './types.js';

const PYTHON_LANGS = new Set(['python', 'py', 'python3', 'ipython']);
const JSON_LANGS = new Set(['json', 'json5', 'jsonc']);

export function parseAction(text: string, options: ParseOptions = {}): ParsedAction {
  if (text.length > MAX_MESSAGE_CHARS) {
    return {
      ...emptyResult(),
      errors: [{ class: 'E1', message: `message too long: ${text.length} characters, the limit is ${MAX_MESSAGE_CHARS}. Send one short tool call or answer per message`, offset: 0, line: 1 }],
    };
  }
  const think = findThinkRegions(text);
  const visible = blankSpans(text, think.spans);

  const found = read(visible, options);

  // Reasoning is read too, only to count (and never run) the calls written there.
  let ignoredInThink = 0;
  if (think.spans.length > 0) {
    const inside = blankSpans(text, complement(think.spans, text.length));
    const reasoning = read(inside, options);
    ignoredInThink = reasoning.calls.length;
    const hiddenAnswers = reasoning.answers.length;
    if (think.unclosedAt !== null && found.calls.length === 0 && found.answers.length === 0 && ignoredInThink + hiddenAnswers > 0) {
      const what = ignoredInThink > 0 ? 'the tool call after it was not run' : 'the answer after it was not read';
      found.error('E1', `<think> was never closed, so ${what}: write </think> before your tool call or answer`, think.unclosedAt);
    }
  }
  return assemble(text, found, ignoredInThink);
}

/** Runs every reader over `text` (in which regions not to read are already blanked). */
function read(text: string, options: ParseOptions): Findings {
  const found = new Findings(options.examples);
  let rest = text;
  let blanked = 0;
  // Each reader sees the text with everything consumed so far blanked; only new spans are applied.
  const hideConsumed = (): void => {
    rest = blankSpans(rest, found.consumed.slice(blanked));
    blanked = found.consumed.length;
  };
  readHermesCalls(rest, found);
  hideConsumed();
  readFences(rest, found, options);
  hideConsumed();
  readBareActions(rest, found);
  hideConsumed();
  readProseAnswers(rest, found);
  return found;
}

function readFences(text: string, found: Findings, options: ParseOptions): void {
  const imageVariables = new Set(options.imageVariables ?? []);
  for (const fence of findFences(text)) {
    const kind = fenceKind(text, fence);
    if (kind === null) continue;
    found.consume(fence.start, fence.end);
    if (!fence.closed) {
      found.formats.add(kind === 'python' ? 'refocus' : 'openthinkimg');
      found.error('E1', `the \`\`\`${fence.lang} code block is not closed: end it with \`\`\` on its own line`, fence.start);
      continue;
    }
    if (kind === 'json') {
      if (!readJsonFence(text, fence.contentStart, fence.contentEnd, found)) found.consumed.pop();
      continue;
    }
    found.formats.add('refocus');
    const reading = readPythonBlock(text.slice(fence.contentStart, fence.contentEnd), imageVariables, found.examples);
    if (!reading.ok) {
      found.error(reading.class, reading.message, fence.contentStart + reading.offset, reading.tool);
      continue;
    }
    for (const { call, offset } of reading.result.calls) found.calls.push({ call, offset: fence.contentStart + offset, sortAt: fence.start });
    for (const { answer, offset } of reading.result.answers) found.answers.push({ answer, offset: fence.contentStart + offset, style: 'terminate' });
    for (const name of reading.result.imageVariables) {
      imageVariables.add(name);
      found.imageVariables.add(name);
    }
  }
}

/**
 * Which reader a fence is for: ```python → python, ```json → json; an unlabelled fence is
 * json when it starts with `{`, python when it calls a known tool; anything else is prose.
 */
function fenceKind(text: string, fence: Fence): 'python' | 'json' | null {
  if (PYTHON_LANGS.has(fence.lang)) return 'python';
  if (JSON_LANGS.has(fence.lang)) return 'json';
  if (fence.lang !== '') return null;
  const start = skipWhitespace(text, fence.contentStart, fence.contentEnd);
  if (text.charCodeAt(start) === Code.OpenBrace) return 'json';
  return callsKnownFunction(text, fence.contentStart, fence.contentEnd) ? 'python' : null;
}

const CALLABLE_NAMES = new Set([...KNOWN_TOOL_NAMES, 'Terminate']);

/** Whether text[start, end) has `name(` for a tool name or Terminate: one pass over its words. */
function callsKnownFunction(text: string, start: number, end: number): boolean {
  let i = start;
  while (i < end) {
    if (!isWordCode(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const wordStart = i;
    // `\_` inside a name is a Markdown-escaped underscore (see python/tokens.ts).
    while (i < end && (isWordCode(text.charCodeAt(i)) || (text.charCodeAt(i) === Code.Backslash && text.charCodeAt(i + 1) === Code.Underscore))) {
      i += text.charCodeAt(i) === Code.Backslash ? 2 : 1;
    }
    if (text.charCodeAt(i) === Code.OpenParen && CALLABLE_NAMES.has(text.slice(wordStart, i).replaceAll('\\_', '_'))) return true;
  }
  return false;
}

function assemble(text: string, found: Findings, ignoredInThink: number): ParsedAction {
  const lines = new LineIndex(text);
  // Array.prototype.sort is stable, so calls that sort at the same place keep their order.
  const calls = [...found.calls].sort((a, b) => (a.sortAt ?? a.offset) - (b.sortAt ?? b.offset));
  const errors: FoundError[] = [...found.errors].sort((a, b) => (a.offset ?? 0) - (b.offset ?? 0));
  if (calls.length > MAX_CALLS_PER_MESSAGE) {
    const dropped = calls.splice(MAX_CALLS_PER_MESSAGE);
    errors.push({ class: 'E1', message: `too many tool calls in one message: ${calls.length + dropped.length} written, only the first ${MAX_CALLS_PER_MESSAGE} are read. Make one or a few calls, look at the result, then continue`, offset: dropped[0]?.offset ?? 0 });
  }
  const answers = [...found.answers].sort((a, b) => a.offset - b.offset);
  const last = answers[answers.length - 1];
  return {
    calls: calls.map((c): ToolCall => c.call),
    answer: last ? last.answer : null,
    errors: capErrors(errors).map((e) => located(e, lines)),
    formats: (['hermes', 'openthinkimg', 'refocus'] as const).filter((f) => found.formats.has(f)),
    callOffsets: calls.map((c) => c.offset),
    answerStyle: last ? last.style : null,
    answerCount: answers.length,
    ignoredInThink,
    imageVariables: [...found.imageVariables],
  };
}

function capErrors(errors: FoundError[]): FoundError[] {
  if (errors.length <= MAX_ERRORS_PER_MESSAGE) return errors;
  const kept = errors.slice(0, MAX_ERRORS_PER_MESSAGE - 1);
  const rest = errors.length - kept.length;
  kept.push({ class: 'E1', message: `${rest} more errors like the ones above were not listed: fix those first`, offset: errors[kept.length]?.offset ?? 0 });
  return kept;
}

/** Adds offset and line; in a message of several lines the message itself names the line. */
function located(error: FoundError, lines: LineIndex): ParseError {
  const line = error.offset === undefined ? undefined : lines.lineOf(error.offset);
  const message = line !== undefined && lines.count > 1 ? `line ${line}: ${error.message}` : error.message;
  const result: ParseError = { class: error.class, message };
  if (error.tool !== undefined) result.tool = error.tool;
  if (error.offset !== undefined) {
    result.offset = error.offset;
    result.line = line;
  }
  return result;
}

/** The gaps between sorted, non-overlapping spans. */
function complement(spans: readonly { start: number; end: number }[], length: number): { start: number; end: number }[] {
  const gaps: { start: number; end: number }[] = [];
  let at = 0;
  for (const span of spans) {
    if (span.start > at) gaps.push({ start: at, end: span.start });
    at = Math.max(at, span.end);
  }
  if (at < length) gaps.push({ start: at, end: length });
  return gaps;
}

function emptyResult(): ParsedAction {
  return { calls: [], answer: null, errors: [], formats: [], callOffsets: [], answerStyle: null, answerCount: 0, ignoredInThink: 0, imageVariables: [] };
}
