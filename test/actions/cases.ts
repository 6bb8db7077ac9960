/**
 * Table-driven cases for parseAction: a message, and what must come out of it. Shared by the
 * spec files in this folder; each case's name states the behaviour.
 */
import assert from 'node:assert/strict';
import type { ErrorClass } from '../../env/core/errors.js';
import { parseAction } from '../../env/actions/parse.js';
import type { ActionFormat, AnswerStyle, ParsedAction, ParseOptions } from '../../env/actions/types.js';
import type { ToolCall } from '../../env/tools/types.js';

export interface ExpectedError {
  class: ErrorClass;
  /** Substrings the message must contain. */
  says?: string[];
  line?: number;
}

export interface ParseCase {
  name: string;
  text: string;
  options?: ParseOptions;
  calls?: ToolCall[];
  answer?: string | string[] | null;
  errors?: ExpectedError[];
  formats?: ActionFormat[];
  answerStyle?: AnswerStyle | null;
  answerCount?: number;
  ignoredInThink?: number;
  imageVariables?: string[];
}

/** Checks every field a case states; calls, answer and errors default to "none". */
export function checkCase(c: ParseCase): ParsedAction {
  const result = parseAction(c.text, c.options);
  assert.deepEqual(result.calls, c.calls ?? [], 'calls');
  assert.deepEqual(result.answer, c.answer ?? null, 'answer');
  const expected = c.errors ?? [];
  assert.equal(result.errors.length, expected.length, `errors: ${JSON.stringify(result.errors, null, 1)}`);
  expected.forEach((e, i) => {
    const actual = result.errors[i];
    assert.ok(actual);
    assert.equal(actual.class, e.class, `error ${i} class: ${actual.message}`);
    for (const s of e.says ?? []) assert.ok(actual.message.includes(s), `error ${i} should say "${s}": ${actual.message}`);
    if (e.line !== undefined) assert.equal(actual.line, e.line, `error ${i} line`);
    assert.equal(typeof actual.offset, 'number', `error ${i} has an offset`);
  });
  if (c.formats) assert.deepEqual(result.formats, c.formats, 'formats');
  if (c.answerStyle !== undefined) assert.equal(result.answerStyle, c.answerStyle, 'answerStyle');
  if (c.answerCount !== undefined) assert.equal(result.answerCount, c.answerCount, 'answerCount');
  if (c.ignoredInThink !== undefined) assert.equal(result.ignoredInThink, c.ignoredInThink, 'ignoredInThink');
  if (c.imageVariables) assert.deepEqual(result.imageVariables, c.imageVariables, 'imageVariables');
  assert.equal(result.callOffsets?.length, result.calls.length, 'one offset per call');
  return result;
}

export const mask = (columns: string[]): ToolCall => ({ name: 'focus_on_columns_with_mask', arguments: { columns } });
