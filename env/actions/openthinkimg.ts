/**
 * Reads OpenThinkIMG actions: `{"thought": ..., "actions": [{"name": ..., "arguments": {...}}]}`,
 * as the whole message, inside a ```json fence, or as a JSON object standing on its own in the
 * prose, possibly with text after it. A lone call object `{"name": ..., "arguments": ...}` in
 * a ```json fence is read too. An action named Terminate is the final answer.
 *
 * Linear time: a bare object is tried only at a few candidate openings (the first `{` and `{`
 * that start a line), each read at most once.
 */
import { readCallObject } from './call-object.js';
import type { Findings } from './findings.js';
import { isPlainObject, readJsonValue } from './json-span.js';
import { Code } from './chars.js';
import { skipWhitespace, findFrom, contains } from './text-regions.js';

/** Candidate openings tried for bare JSON; enough for any real message, small enough to stay linear. */
const MAX_BARE_CANDIDATES = 8;

/**
 * Interprets one parsed JSON value as OpenThinkIMG actions. Returns false when the value is
 * not an action object at all (plain data), so the caller can leave it as prose.
 */
export function readActionValue(value: unknown, offset: number, found: Findings): boolean {
  if (!isPlainObject(value)) return false;
  if ('actions' in value) {
    found.formats.add('openthinkimg');
    const actions = value['actions'];
    if (!Array.isArray(actions)) {
      found.error('E3', `"actions" must be a list of calls, like ${found.examples.openthinkimg}`, offset);
      return true;
    }
    for (const action of actions) readAction(action, offset, found);
    return true;
  }
  if ('name' in value && ('arguments' in value || 'parameters' in value)) {
    found.formats.add('openthinkimg');
    readAction(value, offset, found);
    return true;
  }
  return false;
}

function readAction(action: unknown, offset: number, found: Findings): void {
  const reading = readCallObject(action, found.examples.openthinkimg);
  if (reading.kind === 'call') found.calls.push({ call: reading.call, offset });
  else if (reading.kind === 'answer') found.answers.push({ answer: reading.answer, offset, style: 'terminate' });
  else found.error(reading.class, reading.message, offset, reading.tool);
}

/** Reads a ```json fence's content (or an unlabelled fence that starts with `{`). */
export function readJsonFence(text: string, contentStart: number, contentEnd: number, found: Findings): boolean {
  const i = skipWhitespace(text, contentStart, contentEnd);
  if (text.charCodeAt(i) !== Code.OpenBrace) return false;
  const read = readJsonValue(text, i, contentEnd);
  if (!read.ok) {
    if (!looksLikeActions(text, i, contentEnd)) return false;
    found.formats.add('openthinkimg');
    found.error('E1', `the JSON block is not valid: ${read.message}. Write it like ${found.examples.openthinkimg}`, read.offset);
    return true;
  }
  return readActionValue(read.value, i, found);
}

/**
 * Looks for action objects standing in the prose (the text left after tags and fences were
 * read). Only runs when the prose mentions "actions" or is itself one JSON object.
 */
export function readBareActions(prose: string, found: Findings): void {
  const actionsKey = findFrom(prose, '"actions"');
  const first = prose.indexOf('{');
  if (first === -1) return;
  const wholeMessage = prose.slice(0, first).trim() === '';
  if (actionsKey === -1 && !(wholeMessage && contains(prose, '"name"'))) return;

  let tried = 0;
  let reported = false;
  let at = first;
  while (at !== -1 && tried < MAX_BARE_CANDIDATES) {
    tried++;
    const read = readJsonValue(prose, at, prose.length);
    let next: number;
    if (read.ok) {
      if (readActionValue(read.value, at, found)) found.consume(at, read.end);
      next = read.end;
    } else {
      if (!reported && actionsKey > at) {
        found.formats.add('openthinkimg');
        found.error('E1', `the actions JSON is not valid: ${read.message}. Write it like ${found.examples.openthinkimg}`, read.offset);
        reported = true;
      }
      next = at + 1;
    }
    at = nextLineBrace(prose, next);
  }
}

/** The next `{` at or after `from` that is the first non-blank character of its line. */
function nextLineBrace(text: string, from: number): number {
  let nl = from === 0 ? -1 : text.lastIndexOf('\n', from - 1);
  for (;;) {
    let i = nl + 1;
    while (i < text.length && (text.charCodeAt(i) === Code.Space || text.charCodeAt(i) === Code.Tab)) i++;
    if (i >= from && text.charCodeAt(i) === Code.OpenBrace) return i;
    nl = text.indexOf('\n', Math.max(i, from));
    if (nl === -1) return -1;
  }
}

function looksLikeActions(text: string, start: number, end: number): boolean {
  const slice = text.slice(start, end);
  return contains(slice, '"actions"') || contains(slice, '"name"');
}
