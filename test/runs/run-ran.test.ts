/**
 * What a run ran, as run.json records it (issue 44, 2.7): the trainer's final `state`
 * (trainer/vistool_trainer/run/train.py `_finish`: global_step, sft_step, rl_step, perception_step,
 * stage) and `time_caps_reached` (run/time_caps.py), read into RunSummary.ran for the config diff,
 * in the summary a panel gets from runs/list.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PanelBackend } from '../../env/view/panel-backend.js';
import { ranOf } from '../../env/runs/run-source.js';
import type { RunSummary } from '../../protocol/panel-protocol.js';

test("run.json's final state and time caps become RunSummary.ran; a run that has not finished has none", () => {
  const finished = { status: 'finished', state: { global_step: 662, sft_step: 650, rl_step: 12, stage: 'done' }, time_caps_reached: { rl: { step: 12, steps: 30, max_seconds: 240 } } };
  assert.deepEqual(ranOf(finished), { ran: { sft: 650, rl: 12, timeCapped: ['rl'] } });
  assert.deepEqual(ranOf({ status: 'running', pid: 1 }), {});
  assert.deepEqual(ranOf({ state: { sft_step: 'x', rl_step: -1 } }), {});
});

test('runs/list carries what ran from run.json', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-run-ran-'));
  await writeFile(join(dir, 'run.json'), JSON.stringify({ status: 'finished', state: { global_step: 40, sft_step: 10, rl_step: 30, stage: 'done' } }));
  await writeFile(join(dir, 'metrics.jsonl'), `${JSON.stringify({ step: 1, stage: 'sft', 'sft/step': 1, 'sft/loss': 1 })}\n`);
  const backend = new PanelBackend({ runs: [dir] });
  await backend.start();
  backend.stop();
  const reply = await backend.handle({ kind: 'request', id: 'r', method: 'runs/list', params: {} });
  assert.ok(reply?.ok);
  const [run] = (reply.result as { runs: RunSummary[] }).runs;
  assert.deepEqual(run?.ran, { sft: 10, rl: 30 });
});
