import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aliasesOf, canonicalMetric, loggedName, VERL_METRIC_ALIASES } from '../../protocol/metric-vocabulary.js';

test("veRL's names map onto the trainer's, and a run is asked under the name it logs", () => {
  assert.equal(canonicalMetric('critic/score/mean'), 'reward/mean');
  assert.equal(canonicalMetric('timing_s/gen'), 'timing/gen_s');
  assert.equal(canonicalMetric('critic/advantages/mean'), 'critic/advantages/mean', 'a name without a counterpart stays');
  assert.equal(loggedName('reward/mean', ['critic/score/mean', 'acc/mean']), 'critic/score/mean');
  assert.equal(loggedName('reward/mean', new Set(['reward/mean', 'critic/score/mean'])), 'reward/mean', 'its own name first');
  assert.equal(loggedName('reward/mean', ['acc/mean']), null);
  assert.deepEqual(aliasesOf('reward/mean'), ['critic/score/mean']);
});

test("every name mapped is one the veRL fixture or veRL's docs log, and every target one vistool's trainer logs", async () => {
  const repo = join(__dirname, '..', '..');
  const trainer = await Promise.all(['trainer/vistool_trainer/trainers/grpo.py', 'trainer/vistool_trainer/run/stages.py', 'trainer/vistool_trainer/run/stage_context.py'].map((f) => readFile(join(repo, f), 'utf8')));
  const verl = (await readFile(join(repo, 'test', 'fixtures', 'verl-run', 'metrics.jsonl'), 'utf8')) + (await readFile(join(repo, 'docs', 'VERL.md'), 'utf8'));
  for (const [alias, target] of Object.entries(VERL_METRIC_ALIASES)) {
    assert.ok(trainer.some((source) => source.includes(`"${target}"`)), `${target} is a trainer metric`);
    if (alias !== 'timing_s/update_actor') assert.ok(verl.includes(alias), `${alias} is a veRL metric (fixture or docs/VERL.md)`);
  }
});
