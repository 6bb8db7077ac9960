import { test } from 'node:test';
import assert from 'node:assert/strict';
import { viewOf, withView } from '../../webview/viewer/view-link.js';

const base = { runId: 'tools', step: 12, line: 3, compareLine: null, turn: 2, mode: 'steps' as const, a: null, b: null, outcome: 'all', task: null };

test('a link carries run, step, rollout, its group and turn, keeps the token, and reads back the same view', () => {
  const query = withView(new URLSearchParams('token=abc&theme=dark&line=99'), base, 'fixture-table');
  assert.equal(query.toString(), 'token=abc&theme=dark&run=tools&step=12&line=3&group=fixture-table&turn=2');
  assert.deepEqual(viewOf(query), { runId: 'tools', mode: 'steps', step: 12, line: 3, compareLine: null, turn: 2 });
  const compared = withView(new URLSearchParams(), { ...base, compareLine: 5, turn: 0 }, null);
  assert.equal(compared.get('cmp'), '5');
  assert.equal(compared.get('turn'), null);
});

test('the evaluations view: both sides, the outcome shown and the task; odd characters survive', () => {
  const view = { ...base, mode: 'evals' as const, a: { runId: 'run~1', key: 'eval-after_sft', arm: 'tools' as const }, b: { runId: 'text', key: 'eval', arm: 'no_tools' as const }, outcome: 'fixed', task: 'test/ä 1' };
  const back = viewOf(new URLSearchParams(withView(new URLSearchParams(), view, null).toString()));
  assert.deepEqual(back, { runId: 'tools', mode: 'evals', a: view.a, b: view.b, outcome: 'fixed', task: 'test/ä 1', cell: null });
});

test("a grid cell of the evaluation summary: side A's gold and given answer, odd characters and the separator surviving", () => {
  const side = { runId: 'tools', key: 'eval-after_rl', arm: 'tools' as const };
  const view = { ...base, mode: 'evals' as const, a: side, b: side, outcome: 'all', task: null, cell: { gold: 'high|ä', answer: '(no answer)' } };
  const query = withView(new URLSearchParams(), view, null);
  assert.equal(viewOf(new URLSearchParams(query.toString()))?.cell?.gold, 'high|ä');
  assert.deepEqual(viewOf(new URLSearchParams(query.toString()))?.cell, view.cell);
  assert.equal(viewOf(new URLSearchParams('mode=evals&cell=onlyone'))?.cell, null);
});

test('what a link cannot mean is left out', () => {
  assert.equal(viewOf(new URLSearchParams('token=abc')), null);
  assert.deepEqual(viewOf(new URLSearchParams('run=x&step=-1&line=1e3&turn=abc')), { runId: 'x', mode: 'steps', step: null, line: null, compareLine: null, turn: 0 });
  assert.deepEqual(viewOf(new URLSearchParams('mode=evals&a=x|k|neither'))?.a, null);
});

test("the list's finding filter travels in a link (the dashboard's findings table opens one); a name the viewer does not know is left out", () => {
  const query = withView(new URLSearchParams(), { ...base, finding: 'off_target_call' }, null);
  assert.equal(query.get('finding'), 'off_target_call');
  assert.equal(viewOf(query)?.finding, 'off_target_call');
  assert.equal(viewOf(new URLSearchParams('run=x&finding=none'))?.finding, 'none');
  assert.equal(viewOf(new URLSearchParams('run=x&finding=%3Cscript%3E'))?.finding, undefined);
  // No filter, no key.
  assert.equal(withView(new URLSearchParams('finding=repeated_call'), { ...base, finding: null }, null).get('finding'), null);
});

test("the evaluations view's finding filter travels too", () => {
  const side = { runId: 'tools', key: 'eval-after_rl', arm: 'tools' as const };
  const query = withView(new URLSearchParams(), { ...base, mode: 'evals' as const, a: side, b: side, outcome: 'all', task: null, finding: 'repeated_call' }, null);
  assert.equal(viewOf(new URLSearchParams(query.toString()))?.finding, 'repeated_call');
  assert.equal(viewOf(new URLSearchParams('mode=evals&finding=nonsense'))?.finding, undefined);
});
