/**
 * Pathological messages of about 200 KB: each must parse to the stated result. These inputs
 * would take minutes under a quadratic scan; parseAction reads them in linear time (the
 * timings are measured outside the test suite, see the report of the actions work).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_ERRORS_PER_MESSAGE, MAX_MESSAGE_CHARS, MAX_NESTING_DEPTH, MAX_CALLS_PER_MESSAGE } from '../../env/actions/limits.js';
import { parseAction } from '../../env/actions/parse.js';

const SIZE = 200_000;
const fill = (piece: string, size = SIZE): string => piece.repeat(Math.ceil(size / piece.length));

test('a message over the size limit is refused whole with one E1 "message too long" error', () => {
  const text = `<answer>7</answer>${' '.repeat(MAX_MESSAGE_CHARS)}`;
  const result = parseAction(text);
  assert.deepEqual(result.calls, []);
  assert.equal(result.answer, null);
  assert.equal(result.errors.length, 1);
  assert.equal(result.errors[0]?.class, 'E1');
  assert.match(result.errors[0]?.message ?? '', /message too long/);
});

test('200 KB of <tool_call> tags: no call, errors capped with a count of the rest', () => {
  const result = parseAction(fill('<tool_call>'));
  assert.deepEqual(result.calls, []);
  assert.equal(result.errors.length, MAX_ERRORS_PER_MESSAGE);
  assert.match(result.errors[0]?.message ?? '', /not closed/);
  assert.match(result.errors[MAX_ERRORS_PER_MESSAGE - 1]?.message ?? '', /more errors/);
});

test('parsing the same 200 KB of tags again and again, as a server does once its code is optimised, gives the same result each time', () => {
  // On Node 20 an indexOf-based scanner fell into V8's Boyer-Moore-Horspool search on every
  // iteration once optimised (seconds per message); a regression shows here as a test that hangs.
  const text = fill('<tool_call>') + fill('<answer>');
  const first = parseAction(text);
  for (let i = 0; i < 8; i++) assert.deepEqual(parseAction(text), first);
  assert.equal(first.errors.length, MAX_ERRORS_PER_MESSAGE);
});

test('200 KB of unclosed <tool_call>{" openings parse to errors only', () => {
  const result = parseAction(fill('<tool_call>{"'));
  assert.deepEqual(result.calls, []);
  assert.equal(result.errors.length, MAX_ERRORS_PER_MESSAGE);
});

test('200 KB of [[[[ in a python block is refused as nested too deeply', () => {
  const result = parseAction(`\`\`\`python\nx = ${fill('[')}\n\`\`\``);
  assert.equal(result.errors.length, 1);
  assert.match(result.errors[0]?.message ?? '', new RegExp(`nested more than ${MAX_NESTING_DEPTH} levels`));
});

test('200 KB of [[[[ in actions JSON is refused as nested too deeply', () => {
  const result = parseAction(`{"thought": "", "actions": ${fill('[')}`);
  assert.equal(result.errors.length, 1);
  assert.match(result.errors[0]?.message ?? '', /nested more than/);
});

test('200 KB of { at line starts before a mention of "actions" yields one error, no call', () => {
  const result = parseAction(`${fill('{\n')}"actions"`);
  assert.deepEqual(result.calls, []);
  assert.equal(result.errors.length, 1);
});

test('200 KB of Terminate( on one line is no answer', () => {
  const result = parseAction(fill('Terminate('));
  assert.equal(result.answer, null);
  assert.deepEqual(result.errors, []);
});

test('200 KB of \\boxed{ is no answer', () => {
  assert.equal(parseAction(fill('\\boxed{')).answer, null);
});

test('200 KB of FINAL ANSWER: markers on one line is one answer, from the last marker', () => {
  const result = parseAction(`${fill('FINAL ANSWER: ')}7`);
  assert.equal(result.answer, '7');
  assert.equal(result.answerCount, 1);
});

test('a FINAL ANSWER followed by 200 KB of * and a word keeps the word', () => {
  assert.equal(parseAction(`FINAL ANSWER: ${fill('*')}x`).answer, 'x');
});

test('200 KB of <answer> openings is one E1 error', () => {
  const result = parseAction(fill('<answer>'));
  assert.equal(result.answer, null);
  assert.equal(result.errors.length, 1);
});

test('200 KB of alternating </think> and <think> tags parses to nothing', () => {
  const result = parseAction(fill('</think><think>'));
  assert.deepEqual(result.calls, []);
  assert.equal(result.answer, null);
  assert.deepEqual(result.errors, []);
});

test('200 KB of ``` fences parses without calls', () => {
  const result = parseAction(fill('```python\n'));
  assert.deepEqual(result.calls, []);
});

test('200 KB of valid hermes calls is capped at the call limit with one E1 error', () => {
  const call = '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}</tool_call>\n';
  const result = parseAction(fill(call));
  assert.equal(result.calls.length, MAX_CALLS_PER_MESSAGE);
  assert.equal(result.errors.length, 1);
  assert.match(result.errors[0]?.message ?? '', /too many tool calls/);
});

test('a 200 KB python block of valid statements is read', () => {
  const statement = 'x = focus_on_columns_with_mask(image_1, ["A"], columns_bbox)\n';
  const result = parseAction(`\`\`\`python\n${fill(statement)}\`\`\``);
  assert.equal(result.calls.length, MAX_CALLS_PER_MESSAGE);
});

test('a 200 KB string argument is kept whole', () => {
  const label = 'a'.repeat(SIZE);
  const result = parseAction(`<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["${label}"]}}</tool_call>`);
  assert.equal((result.calls[0]?.arguments['columns'] as string[])[0]?.length, SIZE);
});
