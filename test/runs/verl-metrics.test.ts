/**
 * metrics.jsonl as veRL's `file` logger writes it (verl/utils/tracking.py, FileLogger: one
 * `{"step": N, "data": {...}}` line per step, serialized by orjson, so compact and with no time).
 * verl_bridge/tests/test_live_run.py writes such a file with veRL's own logger; these lines are
 * that shape spelled out, so the reader's rule is checked without veRL installed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MetricsStore, metricRow } from '../../env/runs/metrics-store.js';
import { PanelBackend } from '../../env/view/panel-backend.js';
import type { MetricSeriesResult } from '../../protocol/panel-protocol.js';
import { writeRunDirectory } from './run-directory.js';

/** What FileLogger.log(data, step) writes: orjson.dumps({"step": step, "data": data}) + newline. */
const verlLine = (step: number, data: Record<string, unknown>) => JSON.stringify({ step, data });

const validation = { 'val-core/vistool/vbar/acc/mean@1': 0.25, 'val-aux/num_turns/mean': 3 };
const training = (step: number) => ({
  'critic/score/mean': step / 10,
  'actor/pg_clipfrac': 0.01 * step,
  'response_length/mean': 40 + step,
  'timing_s/step': 12.5,
  'training/global_step': step,
  'training/epoch': 0,
});

test("a veRL file-logger line is the row {step, ...data}; any other line is left as it is", () => {
  assert.deepEqual(metricRow({ step: 3, data: { 'critic/score/mean': 0.5, step: 99 } }), { 'critic/score/mean': 0.5, step: 3 });
  const vistool = { step: 3, data: { a: 1 }, 'reward/mean': 0.5 };
  assert.equal(metricRow(vistool), vistool, 'a line with other keys beside data is not veRL\'s');
  const notAnObject = { step: 3, data: [1, 2] };
  assert.equal(metricRow(notAnObject), notAnObject);
});

test("veRL's metric lines become rows with veRL's names, its step, no time and no stage", async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'vistool-verl-metrics-')), 'metrics.jsonl');
  // veRL validates before training (step 0, validation metrics only), then logs each step.
  await writeFile(path, [verlLine(0, validation), verlLine(1, training(1)), verlLine(2, { ...training(2), ...validation })].join('\n') + '\n');
  const store = new MetricsStore(path);
  assert.equal(await store.refresh(), true);
  assert.equal(store.rowCount, 3);
  assert.deepEqual(store.names, [...new Set([...Object.keys(training(1)), ...Object.keys(validation)])].sort());
  const table = store.slice(0);
  assert.deepEqual(table.steps, [0, 1, 2]);
  assert.deepEqual(table.times, [null, null, null]);
  assert.deepEqual(table.stages, [null, null, null]);
  assert.deepEqual(table.columns['critic/score/mean'], [null, 0.1, 0.2]);
  assert.deepEqual(table.columns['val-core/vistool/vbar/acc/mean@1'], [0.25, null, 0.25]);
  assert.deepEqual(store.evaluations, [], 'veRL marks no line as an evaluation');
  assert.deepEqual(store.problems, []);
  // The logger writes one line per step as it ends: a tail sees the next one.
  await appendFile(path, verlLine(3, training(3)) + '\n');
  assert.equal(await store.refresh(), true);
  assert.deepEqual(store.slice(3).columns['response_length/mean'], [43]);
});

test('the dashboard draws a veRL run by step, and by wall time from veRL\'s seconds per step', async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-verl-series-'));
  const dir = await writeRunDirectory(join(root, 'verl'), { metricRows: 0 });
  await writeFile(join(dir, 'metrics.jsonl'), [1, 2, 3].map((s) => verlLine(s, training(s))).join('\n') + '\n');
  const backend = new PanelBackend({ runs: [dir] });
  await backend.start();
  try {
    const ask = async (xAxis: 'step' | 'time') => {
      const reply = await backend.handle({ kind: 'request', id: 't', method: 'metrics/series', params: { runId: 'verl', metrics: ['critic/score/mean'], xAxis, smoothing: 0, maxPoints: 100 } });
      assert.ok(reply && reply.ok, JSON.stringify(reply));
      return reply.result as MetricSeriesResult;
    };
    const bySteps = await ask('step');
    assert.equal(bySteps.xSource, 'step');
    assert.deepEqual(bySteps.series[0]?.raw.x, [1, 2, 3]);
    assert.deepEqual(bySteps.series[0]?.raw.y, [0.1, 0.2, 0.3]);
    const byTime = await ask('time');
    // No veRL line has a time of day; each has its step's seconds, named timing_s/step (12.5 s each here).
    assert.equal(byTime.xSource, 'timing_s/step');
    assert.deepEqual(byTime.series[0]?.raw.x, [12.5, 25, 37.5]);
  } finally {
    backend.stop();
  }
});
