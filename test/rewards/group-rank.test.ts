import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveRewardConfig } from '../../env/rewards/resolve-config.js';
import { scoreGroup, scoreTrajectory } from '../../env/rewards/score.js';
import { rankGroup } from '../../env/rewards/tool-use.js';
import { direct, withTool } from './trajectories.js';

const close = (actual: number, expected: number): void => assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} vs ${expected}`);

// One group of the same prompt: direct-correct, tool-correct, tool-wrong, direct-wrong.
const group = () => [direct('7'), withTool('7'), withTool('9'), direct('9')];

test('rankGroup orders direct-correct 1 > tool-correct 0.8 > tool-wrong 0.5 > direct-wrong 0', () => {
  const scored = group().map((t) => ({ ...t, correct: scoreTrajectory(t, '7').correct }));
  assert.deepEqual(rankGroup(scored), [1, 0.8, 0.5, 0]);
});

test('rankGroup refuses trajectories that were not scored, and says how to fix it', () => {
  assert.throws(() => rankGroup(group()), /no 'correct' field; score each trajectory with scoreTrajectory/u);
});

test('group ranking replaces accuracy by the rank and drops the tool shaping: 0.8 × rank + 0.2 × format', () => {
  const cfg = resolveRewardConfig({ tool: { group_ranking: true } });
  const results = scoreGroup(group(), '7', cfg);
  results.forEach((r, i) => close(r.reward, 0.8 * ([1, 0.8, 0.5, 0][i] as number) + 0.2));
  assert.deepEqual(results.map((r) => r.components.group_rank), [1, 0.8, 0.5, 0]);
  assert.equal(results[1]?.weights.tool_bonus, 0);
  assert.deepEqual(results.map((r) => r.correct), [true, true, false, false]);
});

test('without group ranking scoreGroup scores each trajectory on its own: 0.8, 1.2, 0.2, 0.16', () => {
  const results = scoreGroup(group(), '7');
  [0.8, 1.2, 0.2, 0.16].forEach((expected, i) => close(results[i]?.reward ?? NaN, expected));
});
