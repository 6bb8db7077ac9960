import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatAnswer, formatToolCall } from '../../env/actions/format.js';
import { parseAction } from '../../env/actions/parse.js';
import { KNOWN_TOOL_NAMES, pythonSignature } from '../../env/actions/tool-names.js';
import type { ActionFormat, AnswerStyle, ParsedAction } from '../../env/actions/types.js';
import type { ToolCall } from '../../env/tools/types.js';
import { isPlainJson } from './plain-json.js';

const ERROR_CLASSES = new Set(['E1', 'E2', 'E3', 'E4', 'E5', 'E6']);

/** What every result must look like, whatever the input. */
function assertWellFormed(result: ParsedAction, text: string): void {
  assert.ok(Array.isArray(result.calls));
  for (const call of result.calls) {
    assert.equal(typeof call.name, 'string');
    assert.ok(typeof call.arguments === 'object' && call.arguments !== null && !Array.isArray(call.arguments));
  }
  assert.ok(result.answer === null || typeof result.answer === 'string' || (Array.isArray(result.answer) && result.answer.every((a) => typeof a === 'string')));
  assert.ok(result.errors.length <= 20, 'errors are capped');
  for (const error of result.errors) {
    assert.ok(ERROR_CLASSES.has(error.class));
    assert.ok(error.message.length > 0);
    if (error.offset !== undefined) assert.ok(error.offset >= 0 && error.offset <= text.length);
  }
  assert.equal(result.callOffsets?.length, result.calls.length);
}

const TRICKY_PIECES = [
  '<tool_call>', '</tool_call>', '<think>', '</think>', '<answer>', '</answer>', '```', '```python\n', '```json\n',
  '{', '}', '[', ']', '(', ')', '"', "'", '\\', '\n', '    ', 'FINAL ANSWER:', '\\boxed{', 'Terminate(', '"actions"', ':', ',',
  'import os', 'os.system', '__import__(', 'f"', 'lambda', '||', 'image_1', 'focus_on_columns_with_mask(', '#',
];

const validMessages = [
  '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Country", "Wins"]}}</tool_call>',
  '{"thought": "x", "actions": [{"name": "zoom_in", "arguments": {"bbox": [1, 2, 30, 40]}}]}',
  'THOUGHT 0: mask.\n```python\nimage_with_focused_columns = focus_on_columns_with_mask(image_1, ["Country", "Wins"], columns_bbox)\ndisplay(image_with_focused_columns)\n```',
  '<think>hmm</think><answer>Alice||Bob</answer>',
  'ANSWER: 3 games. FINAL ANSWER: 3. TERMINATE',
  '```json\n{"thought": "", "actions": [{"name": "Terminate", "arguments": {"ans": "7"}}]}\n```',
];

/** A valid message with random edits: pieces inserted, ranges deleted, ranges duplicated. */
const mutatedMessage = fc
  .tuple(
    fc.constantFrom(...validMessages),
    fc.array(
      fc.tuple(fc.nat(), fc.oneof(fc.constantFrom(...TRICKY_PIECES), fc.string({ maxLength: 4 })), fc.constantFrom('insert', 'delete', 'duplicate'), fc.nat(12)),
      { maxLength: 8 },
    ),
  )
  .map(([message, edits]) => {
    let text = message;
    for (const [position, piece, kind, length] of edits) {
      const at = position % (text.length + 1);
      if (kind === 'insert') text = text.slice(0, at) + piece + text.slice(at);
      else if (kind === 'delete') text = text.slice(0, at) + text.slice(at + length);
      else text = text.slice(0, at) + text.slice(at, at + length).repeat(2) + text.slice(at + length);
    }
    return text;
  });

test('arbitrary strings never make parseAction throw, and the result is always well formed', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
      assertWellFormed(parseAction(text), text);
    }),
    { numRuns: 300 },
  );
});

test('strings built from the syntax pieces of every format never make parseAction throw', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...TRICKY_PIECES), { maxLength: 60 }).map((pieces) => pieces.join('')), (text) => {
      assertWellFormed(parseAction(text), text);
    }),
    { numRuns: 300 },
  );
});

test('mutated valid messages never make parseAction throw', () => {
  fc.assert(
    fc.property(mutatedMessage, (text) => {
      assertWellFormed(parseAction(text), text);
    }),
    { numRuns: 400 },
  );
});

// ---- round trips -------------------------------------------------------------------------

const PYTHON_KEYWORDS = new Set('False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(' '));

/** JSON values as they survive a JSON round trip (no -0), so every format can carry them. */
const jsonArgument = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

/** Keyword names some tool reads as something else (image, boxes, an alias of its labels). */
const ALIASES = new Set(
  KNOWN_TOOL_NAMES.flatMap((tool) =>
    Object.entries(pythonSignature(tool)?.keywords ?? {})
      .filter(([key, target]) => target.kind !== 'argument' || target.key !== key)
      .map(([key]) => key),
  ),
);

/** Argument names that read back as themselves in Python: identifiers that are not keywords or aliases. */
const plainKeyword = fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/).filter((key) => !PYTHON_KEYWORDS.has(key) && !ALIASES.has(key));

/** A call to a known tool with the arguments a model would write, plus extra named ones. */
const knownToolCall: fc.Arbitrary<ToolCall> = fc
  .tuple(
    fc.constantFrom(...KNOWN_TOOL_NAMES),
    fc.array(fc.string({ maxLength: 12 }), { minLength: 1, maxLength: 4 }),
    fc.dictionary(plainKeyword, jsonArgument, { maxKeys: 3 }),
  )
  .map(([name, labels, extra]) => {
    const family = /^focus_on_(columns|rows|x_values|y_values)_with_/.exec(name)?.[1];
    const args: Record<string, unknown> = JSON.parse(JSON.stringify(extra)) as Record<string, unknown>;
    if (family) args[family] = labels;
    return { name, arguments: args };
  });

/** Any name (the registry judges names), any JSON object of arguments. */
const anyCall: fc.Arbitrary<ToolCall> = fc
  .tuple(
    fc.string({ minLength: 1, maxLength: 30 }).filter((n) => n.trim() !== '' && n.toLowerCase() !== 'terminate'),
    fc.dictionary(fc.string({ maxLength: 10 }), jsonArgument, { maxKeys: 4 }),
  )
  // Through JSON, so the arguments are plain objects as a parser produces them (keys such as "__proto__" stay own keys).
  .map(([name, args]) => ({ name, arguments: JSON.parse(JSON.stringify(args)) as Record<string, unknown> }));

function assertRoundTrip(call: ToolCall, format: ActionFormat): void {
  const text = formatToolCall(call, format);
  const result = parseAction(text);
  assert.deepEqual(result.errors, [], text);
  assert.deepEqual(result.calls, [call], text);
  assert.deepEqual(result.formats, [format]);
}

test('calls to the known tools round-trip through formatToolCall and parseAction in all three formats', () => {
  fc.assert(
    fc.property(knownToolCall, fc.constantFrom<ActionFormat>('hermes', 'openthinkimg', 'refocus'), (call, format) => assertRoundTrip(call, format)),
    { numRuns: 300 },
  );
});

test('any call round-trips through the hermes and OpenThinkIMG formats, whatever its name and argument strings', () => {
  fc.assert(
    fc.property(anyCall, fc.constantFrom<ActionFormat>('hermes', 'openthinkimg'), (call, format) => assertRoundTrip(call, format)),
    { numRuns: 300 },
  );
});

test('answers round-trip through formatAnswer and parseAction in every style', () => {
  const item = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ,%$-]{0,16}[A-Za-z0-9%$]$/);
  const answer = fc.oneof(item, fc.array(item, { minLength: 2, maxLength: 4 }));
  fc.assert(
    fc.property(answer, fc.constantFrom<AnswerStyle>('answer_tag', 'final_answer', 'boxed', 'terminate'), (value, style) => {
      const result = parseAction(formatAnswer(value, style));
      const expected = Array.isArray(value) ? value.map((v) => v.trim()) : value.trim();
      assert.deepEqual(result.answer, expected);
      assert.equal(result.answerStyle, style);
    }),
    { numRuns: 300 },
  );
});

test('formatToolCall refuses what a format cannot carry, instead of writing something that reads back differently', () => {
  assert.throws(() => formatToolCall({ name: 'crop_everything', arguments: {} }, 'refocus'), /not a known tool/);
  assert.throws(() => formatToolCall({ name: 'zoom_in', arguments: { 'not an identifier': 1 } }, 'refocus'), /keyword argument/);
  assert.throws(() => formatToolCall({ name: 'focus_on_columns_with_mask', arguments: { columns: ['A'], labels: ['B'] } }, 'refocus'), /read back as "columns"/);
  assert.throws(() => formatToolCall({ name: 'Terminate', arguments: { ans: '7' } }, 'hermes'), /formatAnswer/);
});

// ---- prototype names ---------------------------------------------------------------------

/** Names a lookup on a plain object finds on its prototype chain, and JavaScript builtins. */
const PROTOTYPE_NAMES = [
  'toString', 'valueOf', 'constructor', 'hasOwnProperty', '__proto__', 'isPrototypeOf', 'propertyIsEnumerable',
  'toLocaleString', '__defineGetter__', '__lookupSetter__', 'prototype', 'Object', 'Function', 'Array', 'globalThis',
  'eval', 'process', 'require', 'undefined', 'NaN', 'Infinity', 'length', 'name', 'then',
];


test('prototype and builtin names in a ReFocus-style call are never JavaScript values: the arguments stay JSON data', () => {
  const name = fc.constantFrom(...PROTOTYPE_NAMES);
  const place = fc.constantFrom(
    (n: string) => `x = zoom_in(image_1, ${n}, ${n})`,
    (n: string) => `x = focus_on_columns_with_mask(image_1, [${n}, "Wins"], columns_bbox)`,
    (n: string) => `x = focus_on_columns_with_mask(image_1, columns=${n}, columns_bbox=columns_bbox)`,
    (n: string) => `${n} = image_1\nx = zoom_in(${n}, [1, 2, 3, 4])`,
    (n: string) => `x = focus_on_columns_with_mask(image_1, {"a": ${n}}, columns_bbox)`,
    (n: string) => `x = ${n}(image_1)`,
  );
  fc.assert(
    fc.property(name, place, (n, build) => {
      const text = '```python\n' + build(n) + '\ndisplay(x)\n```';
      const result = parseAction(text);
      assertWellFormed(result, text);
      for (const call of result.calls) assert.ok(isPlainJson(call.arguments), `${text} → ${String(call.arguments)}`);
      assert.doesNotThrow(() => structuredClone(result), text);
    }),
    { numRuns: 400 },
  );
  // The repro from the issue: refused as an undefined name, not parsed as a call without arguments.
  const repro = parseAction('```python\nx = zoom_in(image_1, toString, valueOf)\n```');
  assert.deepEqual(repro.calls, []);
  assert.match(repro.errors[0]?.message ?? '', /name toString is not defined/);
});
