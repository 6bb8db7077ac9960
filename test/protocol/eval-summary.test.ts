/**
 * The evaluation summary's numbers (protocol/eval-summary.ts) against independently worked ones:
 * Newcombe's published examples (1998, independent: 56/70 − 48/80 → [0.0524, 0.3339] and
 * 9/10 − 3/10 → [0.1705, 0.8090]; paired: the table 36, 12, 2, 0 → [0.0569, 0.3404]) and the
 * others from the papers' formulas written out in Python (closed-form Wilson bounds, not this
 * module): see the numbers' comments.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerGrid, gridAnswer, independentDifference, inGridCell, NO_ANSWER, pairedChanges, pairedDifference, seedBand, summarizeArm } from '../../protocol/eval-summary.js';
import type { RolloutSummary } from '../../protocol/panel/rollouts.js';

const near = (actual: number, expected: number, tolerance = 1e-4) => assert.ok(Math.abs(actual - expected) < tolerance, `${actual} is not ${expected}`);

test("independent difference: Newcombe's hybrid score interval reproduces the paper's examples", () => {
  const a = independentDifference({ correct: 56, n: 70 }, { correct: 48, n: 80 });
  near(a.diff, 0.2);
  near(a.ci95[0], 0.0524);
  near(a.ci95[1], 0.3339);
  assert.equal(a.method, 'newcombe-hybrid');
  const b = independentDifference({ correct: 9, n: 10 }, { correct: 3, n: 10 });
  near(b.ci95[0], 0.1705);
  near(b.ci95[1], 0.809);
  // Python, written out: 173/300 − 100/300 → (0.164352246297241, 0.3180023719362009).
  const c = independentDifference({ correct: 173, n: 300 }, { correct: 100, n: 300 });
  near(c.ci95[0], 0.164352246297241, 1e-12);
  near(c.ci95[1], 0.3180023719362009, 1e-12);
});

test("paired difference: Newcombe's paired method 10 reproduces the paper's example and a demo-sized table", () => {
  const a = pairedDifference({ both: 36, onlyFirst: 12, onlySecond: 2, neither: 0 });
  near(a.diff, 0.2);
  near(a.ci95[0], 0.0569);
  near(a.ci95[1], 0.3404);
  assert.equal(a.method, 'newcombe-paired');
  // An independent Python computation of method 10 from its definition (phi continuity-corrected).
  const b = pairedDifference({ both: 150, onlyFirst: 23, onlySecond: 40, neither: 87 });
  near(b.diff, -17 / 300, 1e-12);
  near(b.ci95[0], -0.10799639137976139, 1e-12);
  near(b.ci95[1], -0.004773558886495256, 1e-12);
  // Concordant pairs only: narrow, not zero-wide (uncorrected phi would be 1 and the interval [0, 0]).
  const c = pairedDifference({ both: 150, onlyFirst: 0, onlySecond: 0, neither: 150 });
  near(c.ci95[0], -0.006491782298810898, 1e-12);
  near(c.ci95[1], 0.006491782298810898, 1e-12);
  const cavo = pairedDifference({ both: 59, onlyFirst: 6, onlySecond: 16, neither: 80 });
  near(cavo.ci95[0], -0.11862119563870992, 1e-12);
  near(cavo.ci95[1], -0.004625113933050061, 1e-12);
});

const rollout = (promptId: string, gold: string, answer: string | null, arm: 'tools' | 'no_tools', toolCalls = 0): RolloutSummary => ({
  line: 0,
  promptId,
  group: arm === 'tools' ? 0 : 1,
  kept: null,
  question: '',
  gold,
  answer,
  correct: answer !== null && gridAnswer(answer) === gridAnswer(gold),
  reward: null,
  advantage: null,
  toolCalls,
  toolErrors: 0,
  formatErrors: 0,
  errorClasses: [],
  toolNames: [],
  turns: 1,
  endReason: null,
  arm,
});

test('the answer grid normalises as the scorer does, orders levels low → high, and counts no answer apart', () => {
  const grid = answerGrid([
    rollout('1', 'High', 'high.', 'tools'),
    rollout('2', 'high', 'Medium', 'tools'),
    rollout('3', 'low', 'the low', 'tools'),
    rollout('4', 'medium', null, 'tools'),
  ]);
  assert.deepEqual(grid, {
    gold: ['low', 'medium', 'high'],
    answers: ['low', 'medium', 'high', NO_ANSWER],
    counts: [
      [1, 0, 0, 0],
      [0, 0, 0, 1],
      [0, 1, 1, 0],
    ],
  });
  assert.ok(inGridCell(rollout('2', 'high', 'Medium', 'tools'), 'high', 'medium'));
  assert.ok(!inGridCell(rollout('1', 'High', 'high', 'tools'), 'high', 'medium'));
});

test('free-form gold answers make no grid', () => {
  assert.equal(answerGrid(Array.from({ length: 20 }, (_, i) => rollout(String(i), `answer ${i}`, 'x', 'tools'))), null);
});

test('an arm summary counts each task once: accuracy, Wilson interval, call rate', () => {
  const rollouts = [rollout('1', 'low', 'low', 'tools', 1), rollout('1', 'low', 'high', 'no_tools'), rollout('2', 'high', 'low', 'tools'), rollout('3', 'medium', 'medium', 'tools', 2)];
  const tools = summarizeArm(rollouts, 'tools');
  assert.ok(tools);
  assert.equal(tools.n, 3);
  assert.equal(tools.correct, 2);
  near(tools.callRate, 2 / 3);
  // Wilson 2/3 at z = 1.96 (Python, written out): (0.20765960080204773, 0.9385080552796038).
  near(tools.ci95[0], 0.20765960080204773, 1e-12);
  near(tools.ci95[1], 0.9385080552796038, 1e-12);
  assert.equal(summarizeArm(rollouts, 'no_tools')?.correct, 0);
});

test('paired changes: each earlier evaluation against the last, per arm, on the shared tasks', () => {
  const sft = [rollout('1', 'low', 'high', 'tools'), rollout('2', 'high', 'high', 'tools'), rollout('3', 'low', 'low', 'tools')];
  const rl = [rollout('1', 'low', 'low', 'tools'), rollout('2', 'high', 'low', 'tools'), rollout('3', 'low', 'low', 'tools'), rollout('4', 'low', 'low', 'tools')];
  const [change, ...rest] = pairedChanges([
    { key: 'eval-after_sft', rollouts: sft },
    { key: 'eval-after_rl', rollouts: rl },
  ]);
  assert.equal(rest.length, 0);
  assert.ok(change);
  assert.deepEqual([change.shared, change.bothRight, change.fixed, change.broken, change.bothWrong], [3, 1, 1, 1, 0]);
  assert.equal(change.difference.diff, 0);
});

test('seeds grouped: mean and a t interval of the mean', () => {
  // Python: mean 0.6, sd 0.1, t(0.975, 2) 4.303 → 0.6 ± 0.248434.
  const band = seedBand([0.5, 0.6, 0.7]);
  near(band.mean, 0.6, 1e-12);
  near(band.ci95?.[0] ?? NaN, 0.6 - (4.303 * 0.1) / Math.sqrt(3), 1e-9);
  assert.equal(seedBand([0.5]).ci95, null);
});

test('off-target calls: a first call that names another label than the question quotes, with the accuracy on and off target', () => {
  const asked = (promptId: string, label: string, named: string[] | undefined, right: boolean): RolloutSummary => ({
    ...rollout(promptId, 'high', right ? 'high' : 'low', 'tools', named ? 1 : 0),
    question: `Is the units sold low (under 250), medium or high (over 750) for "${label}"?`,
    ...(named ? { callTargets: named } : {}),
  });
  const tools = summarizeArm([asked('1', 'D', ['D'], true), asked('2', 'D', ['B'], false), asked('3', 'A', ['A'], false), asked('4', 'C', ['C', 'E'], true), asked('5', 'F', undefined, true)], 'tools');
  // Tasks 2 and 4 named another label (4 named two); task 5 made no call and is not judged.
  assert.deepEqual([tools?.offTarget?.calls, tools?.offTarget?.offTarget, tools?.offTarget?.off.correct, tools?.offTarget?.on.correct, tools?.offTarget?.on.n], [4, 2, 1, 1, 2]);
  assert.equal(summarizeArm([rollout('1', 'low', 'low', 'tools', 1)], 'tools')?.offTarget, null);
});

test("off-target calls: where every episode with a call was scanned, the env's off_target_call finding decides, not the question's label", () => {
  const scanned = (promptId: string, calls: number, findings: RolloutSummary['findings'], right: boolean): RolloutSummary => ({
    ...rollout(promptId, 'high', right ? 'high' : 'low', 'tools', calls),
    question: 'Is it low, medium or high for "D"?',
    callTargets: ['D'], // the old rule would call every one of these on target
    findings,
  });
  const tools = summarizeArm([
    scanned('1', 1, ['off_target_call'], false),
    scanned('2', 1, ['off_target_call', 'repeated_call'], true),
    scanned('3', 1, [], true),
    scanned('4', 2, ['degenerate_edit'], false),
    scanned('5', 0, [], true), // no call: not judged
  ], 'tools');
  // Judged: tasks 1-4; off: 1 and 2 (one right); on: 3 and 4 (one right).
  assert.deepEqual([tools?.offTarget?.rule, tools?.offTarget?.calls, tools?.offTarget?.offTarget, tools?.offTarget?.off.correct, tools?.offTarget?.on.correct, tools?.offTarget?.on.n],
    ['scanner', 4, 2, 1, 1, 2]);
  // One called episode without findings (a record from before the scanners): the question-label rule for all.
  const mixed = summarizeArm([scanned('1', 1, ['off_target_call'], false), { ...scanned('2', 1, undefined, true), findings: undefined }], 'tools');
  assert.deepEqual([mixed?.offTarget?.rule, mixed?.offTarget?.offTarget], ['question-label', 0]);
});
