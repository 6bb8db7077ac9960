import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { explainReward, REWARD_CHECKS, REWARD_MODIFIERS } from '../../protocol/reward-breakdown.js';
import { DEFAULT_REWARD_CONFIG } from '../../env/rewards/config.js';
import { scoreTrajectory, totalReward } from '../../env/rewards/score.js';
import type { Trajectory } from '../../env/episodes/trajectory.js';

test('the arithmetic by hand: weights times values, the no-tool factor on a positive sum, then the total', () => {
  const weights = { accuracy: 0.8, format: 0.2, tool_bonus: 0.2, tool_use: 0, efficiency: 0 };
  const breakdown = { accuracy: 1, format: 1, tool_bonus: 0, tool_use: 0, efficiency: 0, no_tool_factor: 0.5, repetition: 0, overlong: 0, accuracy_rule: 1 };
  // 0.8·1 + 0.2·1 = 1.0, halved: 0.5.
  const explained = explainReward(breakdown, weights, 0.5)!;
  assert.deepEqual(explained.terms.map((t) => [t.name, t.contribution]), [['accuracy', 0.8], ['format', 0.2], ['tool_bonus', 0], ['tool_use', 0], ['efficiency', 0]]);
  assert.equal(explained.weightedSum, 1);
  assert.deepEqual(explained.steps.map((s) => [s.name, s.after]), [['no_tool_factor', 0.5]]);
  assert.equal(explained.reproduces, true);
  // The checks are apart from the sum, and accuracy_rule says it matches accuracy.
  assert.deepEqual(explained.checks.map((c) => [c.name, c.agreesWithAccuracy]), [['overlong', undefined], ['accuracy_rule', true]]);
  // A repetition cap at −1 on the same terms.
  const capped = explainReward({ ...breakdown, repetition: 1 }, weights, -1)!;
  assert.deepEqual(capped.steps.map((s) => [s.name, s.after]), [['no_tool_factor', 0.5], ['repetition', -1]]);
  assert.equal(capped.reproduces, true);
  // A reward the terms cannot give is flagged, not explained away.
  assert.equal(explainReward(breakdown, weights, 0.9)!.reproduces, false);
  // Without weights there is nothing to explain.
  assert.equal(explainReward(breakdown, undefined, 0.5), null);
});

test('every key the env scores is additive, a modifier or a named check', () => {
  const trajectory: Trajectory = { prompt_id: 'p', task: { question: 'q', answer: '7', kind: 'table', difficulty: 1, image: 'x' }, turns: [{ role: 'assistant', text: '<answer>7</answer>', calls: [], errors: [], answer: '7' }], answer: '7', end_reason: 'answer', tool_calls: 0, tool_errors: 0 } as unknown as Trajectory;
  const scored = scoreTrajectory(trajectory, '7', DEFAULT_REWARD_CONFIG);
  for (const key of Object.keys(scored.components)) {
    const known = key in scored.weights || (REWARD_MODIFIERS as readonly string[]).includes(key) || key in REWARD_CHECKS;
    assert.ok(known, `breakdown key '${key}' has no place in protocol/reward-breakdown.ts`);
  }
});

test('for any breakdown and weights, the explanation reproduces the env’s own total', () => {
  const value = fc.double({ min: -2, max: 2, noNaN: true });
  fc.assert(
    fc.property(
      fc.record({ accuracy: value, format: value, tool_bonus: fc.constantFrom(0, 1), tool_use: fc.constantFrom(0, 1), efficiency: value }),
      fc.record({ accuracy: value, format: value, tool_bonus: value, tool_use: value, efficiency: value }),
      fc.constantFrom(1, 0.5, 0),
      fc.constantFrom(0, 1),
      fc.double({ min: -2, max: 0, noNaN: true }),
      (additive, weights, factor, repetition, penalty) => {
        const breakdown = { ...additive, no_tool_factor: factor, repetition, accuracy_rule: additive.accuracy };
        const config = { ...DEFAULT_REWARD_CONFIG, repetition: { ...DEFAULT_REWARD_CONFIG.repetition, penalty } };
        const reward = totalReward(breakdown, weights, config);
        const explained = explainReward(breakdown, weights, reward);
        assert.ok(explained);
        assert.equal(explained.reproduces, true, JSON.stringify({ breakdown, weights, reward, explained }));
      },
    ),
    { numRuns: 300 },
  );
});
