import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TrajectoryScorer } from '../../env/rewards/trajectory-scorer.js';
import { RewardConfigError } from '../../env/rewards/resolve-config.js';
import { startFakeJudge } from './judge-server.js';
import { callTurn, maskCall, observation, trajectory, withTool } from './trajectories.js';

const fast = { timeout_ms: 2000, max_retries: 1, backoff_initial_ms: 2, backoff_max_ms: 4 };

test('with the judge enabled, a paraphrase the rule misses earns the judge half of accuracy (mode average)', async () => {
  const server = await startFakeJudge(() => ({ reply: '<|YES|>' }));
  try {
    const scorer = new TrajectoryScorer({ judge: { enabled: true, base_url: server.url, ...fast } });
    const result = await scorer.score(withTool('the Kingdom of Belgium'), 'Belgium');
    assert.equal(result.components.accuracy_rule, 0);
    assert.equal(result.components.accuracy_judge, 1);
    assert.ok(Math.abs(result.reward - (0.8 * 0.5 + 0.2)) < 1e-9);
    assert.equal(scorer.metrics()['judge/requests'], 1);
    assert.match(server.requests[0]?.prompt ?? '', /Question: How many wins does Belgium have\?/u);
  } finally {
    await server.close();
  }
});

test('with the judge down, scoring goes on with the rule reward', async () => {
  const server = await startFakeJudge();
  const url = server.url;
  await server.close();
  const scorer = new TrajectoryScorer({ judge: { enabled: true, base_url: url, ...fast } });
  const result = await scorer.score(withTool('7'));
  assert.ok(Math.abs(result.reward - 1.2) < 1e-9, 'the gold defaults to the task answer');
  assert.equal(result.correct, true);
  assert.equal(result.components.judge_failed, 1);
  assert.equal(scorer.metrics()['judge/failures'], 1);
});

test('the judge is not asked about an episode that ended without an answer, nor when it is disabled', async () => {
  const server = await startFakeJudge();
  try {
    const scorer = new TrajectoryScorer({ judge: { enabled: true, base_url: server.url, ...fast } });
    await scorer.score(trajectory([callTurn([maskCall]), observation()]));
    assert.equal(server.requests.length, 0);
    const off = new TrajectoryScorer({ judge: { base_url: server.url } });
    assert.equal(off.judge, null);
    await off.score(withTool('7'));
    assert.equal(server.requests.length, 0);
    assert.deepEqual(off.metrics(), {});
  } finally {
    await server.close();
  }
});

test('a bad reward config fails when the scorer is built, before any episode runs', () => {
  assert.throws(() => new TrajectoryScorer({ judge: { enabled: 'yes' } }), RewardConfigError);
});

test("the env server's scorer logs each failed judgement with its reason", async () => {
  const { createScorer } = await import('../../env/server/scorer.js');
  const server = await startFakeJudge();
  const url = server.url;
  await server.close();
  const entries: Record<string, unknown>[] = [];
  const score = createScorer({ judge: { enabled: true, base_url: url, ...fast } }, (entry) => entries.push(entry));
  const task = { id: 'task-7', answer: '7' } as Parameters<typeof score>[1];
  const result = await score(withTool('7'), task);
  assert.equal(result.components.judge_failed, 1);
  assert.equal(entries.length, 1);
  assert.equal(entries[0]!.level, 'warn');
  assert.equal(entries[0]!.task, 'task-7');
  assert.match(String(entries[0]!.reason), /^judge unavailable, rule reward used: judge unreachable at .*ECONNREFUSED/u);
});
