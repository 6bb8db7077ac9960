/**
 * Evaluations kept task by task (the trainer's rollouts/eval-<label>.jsonl, a vistool eval folder's
 * rollouts), compared side by side and followed through a run, on a demo-like folder whose every
 * rollout was played through the real engine. Expected counts come from the script of outcomes
 * (demo-folder.ts), not from the code under test.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PanelBackend } from '../../env/view/panel-backend.js';
import type { EvalComparison, EvalSetInfo, RunEvalSummary, TaskTimeline } from '../../protocol/panel-protocol.js';
import { compareEvaluations, outcomeOf } from '../../protocol/eval-compare.js';
import { EVALS, HELD_OUT, NO_TOOLS_RIGHT, OUTCOMES, ROLLOUT_STEPS, writeDemoFolder } from './demo-folder.js';

let root: string;
let backend: PanelBackend;
let id = 0;

async function ask<T>(method: string, params: unknown): Promise<T> {
  const reply = await backend.handle({ kind: 'request', id: `t${id++}`, method, params });
  if (!reply || !reply.ok) throw new Error(reply && !reply.ok ? reply.error.message : 'no reply');
  return reply.result as T;
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-eval-sets-'));
  const { tools, text } = await writeDemoFolder(join(root, 'demo'));
  backend = new PanelBackend({ runs: [tools, text] });
  await backend.start();
  backend.stop();
});

test("a run's kept evaluations are listed by step, each with its label and the step the trainer evaluated", async () => {
  const { sets } = await ask<{ sets: EvalSetInfo[] }>('evals/list', { runId: 'tools' });
  assert.deepEqual(sets.map((s) => [s.key, s.label, s.step, s.file]), EVALS.map((e) => [`eval-${e.label}`, e.label, e.step, `rollouts/eval-${e.label}.jsonl`]));
  // The viewer's step list is not changed by them.
  const { steps } = await ask<{ steps: { step: number }[] }>('rollouts/steps', { runId: 'tools' });
  assert.deepEqual(steps.map((s) => s.step), ROLLOUT_STEPS);
});

test('two checkpoints of one run side by side: what B fixed, broke, and what both got wrong or right, task by task', async () => {
  const c = await ask<EvalComparison>('evals/compare', { a: { runId: 'tools', key: 'eval-after_sft', arm: 'tools' }, b: { runId: 'tools', key: 'eval-after_rl', arm: 'tools' } });
  const expected = HELD_OUT.map((_, i) => {
    const [a, b] = [OUTCOMES.after_sft[i], OUTCOMES.after_rl[i]];
    return a && b ? 'both_right' : a ? 'broken' : b ? 'fixed' : 'both_wrong';
  });
  assert.deepEqual(c.tasks.map((t) => t.promptId), HELD_OUT);
  assert.deepEqual(c.tasks.map((t) => t.outcome), expected);
  assert.deepEqual(c.counts, { fixed: 1, broken: 1, both_wrong: 1, both_right: 2, only_a: 0, only_b: 0 });
  assert.equal(c.shared, 5);
  // Each side names its rollout's line, which evals/record reads back: the rollout of that task in that arm.
  const fixed = c.tasks.find((t) => t.outcome === 'fixed');
  assert.ok(fixed?.a && fixed.b);
  const record = (await ask<{ record: { prompt_id: string; arm: string; correct: boolean } }>('evals/record', { runId: 'tools', key: 'eval-after_rl', line: fixed.b.line })).record;
  assert.deepEqual([record.prompt_id, record.arm, record.correct], [fixed.promptId, 'tools', true]);
  assert.equal(c.a.label, 'after_sft');
  assert.equal(c.b.step, EVALS[2].step);
});

test('two runs side by side, each in its own arm: the tools arm against the text arm on the same held-out tasks', async () => {
  const c = await ask<EvalComparison>('evals/compare', { a: { runId: 'text', key: 'eval-after_rl', arm: 'no_tools' }, b: { runId: 'tools', key: 'eval-after_rl', arm: 'tools' } });
  const expected = { fixed: 0, broken: 0, both_wrong: 0, both_right: 0, only_a: 0, only_b: 0 };
  HELD_OUT.forEach((_, i) => {
    const [a, b] = [NO_TOOLS_RIGHT[i], OUTCOMES.after_rl[i]];
    expected[a && b ? 'both_right' : a ? 'broken' : b ? 'fixed' : 'both_wrong'] += 1;
  });
  assert.deepEqual(c.counts, expected);
  // The text run has no tools arm: asked for it, every task is B's alone.
  const none = await ask<EvalComparison>('evals/compare', { a: { runId: 'text', key: 'eval-after_rl', arm: 'tools' }, b: { runId: 'tools', key: 'eval-after_rl', arm: 'tools' } });
  assert.deepEqual([none.counts.only_b, none.shared], [HELD_OUT.length, 0]);
  await assert.rejects(ask('evals/compare', { a: { runId: 'text', key: 'eval-nope', arm: 'tools' }, b: { runId: 'tools', key: 'eval-after_rl', arm: 'tools' } }), /no evaluation 'eval-nope'/);
});

test('the outcome rule, with a side missing or unscored', () => {
  const side = (correct: boolean | null) => ({ line: 0, correct, answer: null, reward: null, toolCalls: 0, toolErrors: 0, formatErrors: 0, errorClasses: [] });
  assert.equal(outcomeOf(null, side(true)), 'only_b');
  assert.equal(outcomeOf(side(true), null), 'only_a');
  assert.equal(outcomeOf(side(null), side(null)), 'both_wrong');
  assert.equal(outcomeOf(side(false), side(true)), 'fixed');
  const summary = (promptId: string, group: number, correct: boolean) => ({ line: 0, promptId, group, kept: null, question: '', gold: null, answer: null, correct, reward: null, advantage: null, toolCalls: 0, toolErrors: 0, formatErrors: 0, errorClasses: [], toolNames: [], turns: 1, endReason: null });
  // A task seen twice in one arm counts once, its last line; the other arm's lines are not read.
  const result = compareEvaluations([summary('x', 0, false), summary('x', 0, true), summary('x', 1, false)], 'tools', [summary('x', 0, true)], 'tools');
  assert.deepEqual(result.counts.both_right, 1);
});

test('a held-out task over time is its evaluations, one per checkpoint and arm, in step order', async () => {
  const timeline = await ask<TaskTimeline>('rollouts/timeline', { runId: 'tools', promptId: HELD_OUT[0] });
  assert.deepEqual(timeline.entries.map((e) => [e.kind, e.label, e.arm, e.step, e.correct]), EVALS.flatMap((e) => [['eval', e.label, 'tools', e.step, OUTCOMES[e.label][0]], ['eval', e.label, 'no_tools', e.step, NO_TOOLS_RIGHT[0]]]));
  assert.equal(timeline.question, 'How many wins does Merckx have?');
  assert.equal(timeline.gold, '34');
});

test('a training task over time is every training rollout of it, step by step, and what each answered', async () => {
  const timeline = await ask<TaskTimeline>('rollouts/timeline', { runId: 'tools', promptId: 'fixture-table' });
  // The independent count: lines of the step files that name the prompt.
  const expected: [number, number][] = [];
  for (const step of ROLLOUT_STEPS) {
    const lines = (await readFile(join(root, 'demo', 'tools', 'rollouts', `step-${String(step).padStart(6, '0')}.jsonl`), 'utf8')).trim().split('\n');
    lines.forEach((l, line) => JSON.parse(l).prompt_id === 'fixture-table' && expected.push([step, line]));
  }
  assert.deepEqual(timeline.entries.map((e) => [e.step, e.line]), expected);
  assert.ok(timeline.entries.every((e) => e.kind === 'step'));
  assert.ok(timeline.entries.some((e) => e.toolCalls > 0 && e.toolNames.includes('focus_on_columns_with_mask')));
  const nobody = await ask<TaskTimeline>('rollouts/timeline', { runId: 'tools', promptId: 'no-such-task' });
  assert.deepEqual(nobody.entries, []);
  assert.equal(nobody.scanned.files, ROLLOUT_STEPS.length + EVALS.length);
});

test('a vistool eval folder is one kept evaluation, under its run.json label', async () => {
  const dir = join(root, 'evals', 'micro-200');
  await mkdir(join(dir, 'rollouts'), { recursive: true });
  const source = (await readFile(join(root, 'demo', 'tools', 'rollouts', 'eval-after_rl.jsonl'), 'utf8')).replace(/"label":"after_rl"/g, '"label":"micro-200"');
  await writeFile(join(dir, 'rollouts', 'step-000000.jsonl'), source);
  await writeFile(join(dir, 'run.json'), JSON.stringify({ kind: 'eval', status: 'finished', label: 'micro-200' }));
  await writeFile(join(dir, 'results.json'), JSON.stringify({ evaluations: { 'micro-200': { step: 200, metrics: { 'eval/acc_tools': 0.6 } } } }));
  const other = new PanelBackend({ runs: [dir] });
  await other.start();
  other.stop();
  const reply = await other.handle({ kind: 'request', id: 'x', method: 'evals/list', params: { runId: 'micro-200' } });
  assert.ok(reply?.ok);
  assert.deepEqual((reply.result as { sets: EvalSetInfo[] }).sets.map((s) => [s.key, s.label, s.step]), [['eval', 'micro-200', 200]]);
});

test("a checkpoint evaluated afterwards (not in the run's metrics) is listed at the step its records say", async () => {
  const dir = join(root, 'demo', 'tools');
  const source = (await readFile(join(dir, 'rollouts', 'eval-after_rl.jsonl'), 'utf8')).replace(/"step":14/g, '"step":13').replace(/"label":"after_rl"/g, '"label":"checkpoint_step_000013"');
  await writeFile(join(dir, 'rollouts', 'eval-checkpoint_step_000013.jsonl'), source);
  const { sets } = await ask<{ sets: EvalSetInfo[] }>('evals/list', { runId: 'tools' });
  assert.deepEqual(sets.map((s) => [s.label, s.step]), [['after_sft', 10], ['rl_step_2', 12], ['checkpoint_step_000013', 13], ['after_rl', 14]]);
});


test("evals/summary: each kept evaluation's accuracy per arm, its answer grid, and each earlier one against the last on the same tasks", async () => {
  const summary = await ask<RunEvalSummary>('evals/summary', { runId: 'tools' });
  // (An earlier test added a checkpoint evaluated afterwards; the trainer's evaluations are there in step order.)
  assert.deepEqual(summary.sets.map((s) => s.key).filter((k) => EVALS.some((e) => `eval-${e.label}` === k)), EVALS.map((e) => `eval-${e.label}`));
  const last = summary.sets[summary.sets.length - 1];
  const tools = last?.arms.tools;
  assert.ok(tools);
  const right = OUTCOMES.after_rl.filter(Boolean).length;
  assert.deepEqual([tools.n, tools.correct], [HELD_OUT.length, right]);
  // Every task is in exactly one cell of the grid.
  assert.equal(tools.grid?.counts.flat().reduce((s, c) => s + c, 0), HELD_OUT.length);
  const change = summary.changes.find((c) => c.from === 'eval-after_sft' && c.arm === 'tools');
  assert.ok(change);
  assert.deepEqual([change.fixed, change.broken, change.bothRight, change.bothWrong], [1, 1, 2, 1]);
  assert.equal(change.difference.method, 'newcombe-paired');
  await assert.rejects(ask('evals/summary', { runId: 'nope' }), /nope/);
});
