/**
 * Reads hermes tool calls, `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, the
 * format of Qwen's chat template and of DeepEyes/veRL. Several per message. The JSON inside is
 * read string-aware, so a "</tool_call>" inside an argument does not end the call early; a
 * ```json fence around it is tolerated. An unclosed tag is an E1 error and its call is not run.
 *
 * Linear time: each call's JSON is read only up to the next `<tool_call>`, and the next
 * closing tag is searched for once and reused until passed.
 */
import { readCallObject } from './call-object.js';
import type { Findings } from './findings.js';
import { readJsonValue } from './json-span.js';
import { skipWhitespace, findFrom } from './text-regions.js';
import { Code, isAsciiLetterCode } from './chars.js';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';
const FENCE = '```';

export function readHermesCalls(text: string, found: Findings): void {
  let open = findFrom(text, OPEN);
  if (open === -1) return;
  found.formats.add('hermes');
  let close = findFrom(text, CLOSE, open);
  while (open !== -1) {
    const bodyStart = open + OPEN.length;
    const nextOpen = findFrom(text, OPEN, bodyStart);
    const regionEnd = nextOpen === -1 ? text.length : nextOpen;
    if (close !== -1 && close < bodyStart) close = findFrom(text, CLOSE, bodyStart);
    const closeInRegion = close !== -1 && close < regionEnd ? close : -1;
    const consumedEnd = readOne(text, open, bodyStart, regionEnd, closeInRegion, found);
    found.consume(open, consumedEnd);
    open = nextOpen;
  }
}

/** Reads the call that starts at `open`; returns where the consumed region ends. */
function readOne(text: string, open: number, bodyStart: number, regionEnd: number, closeAt: number, found: Findings): number {
  let i = skipWhitespace(text, bodyStart, regionEnd);
  const fenced = text.startsWith(FENCE, i);
  if (fenced) {
    i += FENCE.length;
    while (i < regionEnd && isAsciiLetterCode(text.charCodeAt(i))) i++;
    i = skipWhitespace(text, i, regionEnd);
  }
  const first = text.charCodeAt(i);
  if (first !== Code.OpenBrace && first !== Code.OpenBracket) {
    if (closeAt === -1) return unclosed(found, open, regionEnd);
    const what = i >= closeAt ? 'empty' : 'not a JSON object';
    found.error('E1', `the body of <tool_call> is ${what}: put one JSON object inside, like ${found.examples.hermes}`, open);
    return closeAt + CLOSE.length;
  }
  const read = readJsonValue(text, i, regionEnd);
  if (!read.ok) {
    if (closeAt === -1) return unclosed(found, open, regionEnd);
    found.error('E1', `the tool call is not valid JSON: ${read.message}. Write it like ${found.examples.hermes}`, read.offset);
    return closeAt + CLOSE.length;
  }
  let j = skipWhitespace(text, read.end, regionEnd);
  if (fenced && text.startsWith(FENCE, j)) j = skipWhitespace(text, j + FENCE.length, regionEnd);
  if (!text.startsWith(CLOSE, j)) {
    // The first closing tag may have been inside a JSON string; look again after the object.
    if (closeAt !== -1 && closeAt < j) {
      const later = findFrom(text, CLOSE, j);
      closeAt = later !== -1 && later < regionEnd ? later : -1;
    }
    if (closeAt === -1) return unclosed(found, open, regionEnd);
    found.error('E1', `unexpected text after the JSON object inside <tool_call>: write exactly one JSON object per call, like ${found.examples.hermes}`, j);
    return closeAt + CLOSE.length;
  }
  const reading = readCallObject(read.value, found.examples.hermes);
  if (reading.kind === 'call') found.calls.push({ call: reading.call, offset: open });
  else if (reading.kind === 'answer') found.answers.push({ answer: reading.answer, offset: open, style: 'terminate' });
  else found.error(reading.class, reading.message, open, reading.tool);
  return j + CLOSE.length;
}

/** Reports an unclosed tag; returns where its consumed region ends. */
function unclosed(found: Findings, open: number, regionEnd: number): number {
  found.error('E1', `<tool_call> is not closed: end each call with </tool_call>, like ${found.examples.hermes}`, open);
  return regionEnd;
}
