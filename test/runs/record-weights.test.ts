/**
 * Weights for a record that has none: only weights that reproduce the recorded reward are given,
 * and the run's own reward config comes before the defaults. The records are the veRL fixture's
 * (written by the bridge before it recorded weights) and ones scored here by the real reward.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inferWeights, withWeights } from '../../env/runs/record-weights.js';
import type { RolloutRecord } from '../../protocol/panel-protocol.js';

const FIXTURE = join(__dirname, '..', 'fixtures', 'verl-run');

test("the veRL fixture's records, which carry no weights, are explained by the env's default reward config", async () => {
  const records = (await readFile(join(FIXTURE, 'rollouts', 'step-000001.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as RolloutRecord);
  for (const record of records) {
    assert.equal(record.reward_weights, undefined);
    const inferred = await inferWeights(record, FIXTURE);
    assert.equal(inferred?.source, "the env server's default reward config");
    // Recomputed here: 0.8·accuracy + 0.2·format + 0.2·tool_bonus, times no_tool_factor when positive.
    const b = record.reward_breakdown ?? {};
    const sum = 0.8 * (b.accuracy ?? 0) + 0.2 * (b.format ?? 0) + 0.2 * (b.tool_bonus ?? 0);
    assert.ok(Math.abs(sum * (sum > 0 ? (b.no_tool_factor ?? 1) : 1) - (record.reward ?? NaN)) < 1e-9);
  }
  const { record, inferredWeights } = await withWeights(records[1] as RolloutRecord, FIXTURE);
  assert.deepEqual(record.reward_weights, { accuracy: 0.8, format: 0.2, tool_bonus: 0.2, tool_use: 0, efficiency: 0 });
  assert.match(inferredWeights ?? '', /default reward config/);
});

test("the run's own reward config is used first, and weights that do not reproduce the reward are never given", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-weights-'));
  await mkdir(join(dir, 'logs'));
  const record = { prompt_id: 'x', task: { question: 'q', answer: '1', image: 'ab' }, turns: [], answer: '1', end_reason: 'answer', tool_calls: 0, tool_errors: 0, reward: 1.5, reward_breakdown: { accuracy: 1, format: 1, tool_bonus: 0 } } as unknown as RolloutRecord;
  assert.equal(await inferWeights(record, dir), null, 'the defaults give 1.0, not 1.5');
  await writeFile(join(dir, 'logs', 'reward-config.json'), JSON.stringify({ weights: { accuracy: 1, format: 0.5, tool_bonus: 0 } }));
  assert.deepEqual(await inferWeights(record, dir), { weights: { accuracy: 1, format: 0.5, tool_bonus: 0 }, source: "the run's logs/reward-config.json" });
  // A record with its own weights is left as it is.
  assert.equal(await inferWeights({ ...record, reward_weights: { accuracy: 1 } }, dir), null);
});
