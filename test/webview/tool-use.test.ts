import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countToolUse, errorLegend, toolUseWords } from '../../protocol/tool-use.js';
import { summarizeRollout } from '../../env/runs/rollout-summary.js';

// A rollout with a malformed first message (E1, no call), then an unknown tool (a failed call
// whose error is also in the turn's errors), then a call that ran, then the answer.
const turns = [
  { role: 'assistant', text: '<tool_call>{"name": ', calls: [], errors: [{ class: 'E1', message: 'not valid JSON' }], answer: null },
  { role: 'user', text: 'ERROR [E1]: ...' },
  { role: 'assistant', text: '...', calls: [{ name: 'paint', arguments: {}, ok: false, error: { class: 'E1', message: 'unknown tool' } }], errors: [{ class: 'E1', message: 'unknown tool' }], answer: null },
  { role: 'user', text: 'ERROR [E1]: ...' },
  { role: 'assistant', text: '...', calls: [{ name: 'focus_on_x_values_with_mask', arguments: { x_values: ['A'] }, ok: true }], errors: [], answer: null },
  { role: 'tool', text: 'OBSERVATION: ...', images: [] },
  { role: 'assistant', text: '<answer>low</answer>', calls: [], errors: [], answer: 'low' },
];

test('tool use is counted from the turns: calls that ran, calls that failed, errors of no call', () => {
  assert.deepEqual(countToolUse(turns), { ran: 1, failed: 1, formatErrors: 1 });
  assert.equal(toolUseWords(countToolUse(turns)), '1 call ran · 1 failed · 1 format error');
  assert.equal(toolUseWords(countToolUse(turns.slice(0, 2))), 'no tool calls · 1 format error');
  assert.equal(toolUseWords({ ran: 0, failed: 2, formatErrors: 0 }), '0 calls ran · 2 failed');
  assert.deepEqual(countToolUse('not a list'), { ran: 0, failed: 0, formatErrors: 0 });
});

test('the list\'s summary and the header count alike, whatever totals the record carries', () => {
  // A record whose totals disagree with its turns (an older writer): the turns decide, for both.
  const record = { prompt_id: 'p', task: { question: 'q', answer: 'low' }, turns, tool_calls: 0, tool_errors: 0, answer: 'low' };
  const summary = summarizeRollout(record, 0);
  assert.ok(typeof summary !== 'string');
  assert.equal(toolUseWords({ ran: summary.toolCalls, failed: summary.toolErrors, formatErrors: summary.formatErrors }), toolUseWords(countToolUse(record.turns)));
});

test('error badges explain their class', () => {
  assert.equal(errorLegend(['E1', 'E4']), 'E1: malformed call or unknown tool; E4: unknown label or out-of-range value');
  assert.equal(errorLegend(['E9']), 'E9: unknown class');
});

test("a rollout's summary says what its first call named (its first list argument), for the off-target count; nothing when it made no call", () => {
  const record = { prompt_id: 'p', task: { question: 'for "A"?', answer: 'low' }, turns, answer: 'low' };
  const summary = summarizeRollout(record, 0);
  assert.ok(typeof summary !== 'string');
  // The first call (the unknown tool, with no list argument) decides, as run/eval_summary.py's first_call_targets does.
  assert.deepEqual(summary.callTargets, []);
  const masked = summarizeRollout({ ...record, turns: turns.slice(4) }, 0);
  assert.ok(typeof masked !== 'string');
  assert.deepEqual(masked.callTargets, ['A']);
  const direct = summarizeRollout({ ...record, turns: [{ role: 'assistant', text: '<answer>low</answer>', calls: [], answer: 'low' }] }, 0);
  assert.ok(typeof direct !== 'string');
  assert.equal(direct.callTargets, undefined);
});
