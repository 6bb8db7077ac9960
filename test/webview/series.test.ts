import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendRows, emptyTable, formatDuration, metricPoints, phaseChanges, seriesStats, smooth, toCsv, wallClock } from '../../webview/dashboard/series.js';
import { defaultMetrics } from '../../webview/dashboard/default-metrics.js';
import type { MetricTable } from '../../protocol/panel-protocol.js';

function table(rows: Record<string, number | null>[], times?: (number | null)[]): MetricTable {
  const t = emptyTable();
  for (const [i, row] of rows.entries()) {
    const columns: Record<string, (number | null)[]> = {};
    for (const [k, v] of Object.entries(row)) if (k !== 'step') columns[k] = [v];
    appendRows(t, { steps: [row.step ?? i], times: [times?.[i] ?? null], stages: [null], columns });
  }
  return t;
}

test('appending rows pads metrics that one side lacks with null, keeping columns aligned with steps', () => {
  const t = table([{ step: 1, a: 1 }, { step: 2, b: 5 }, { step: 3, a: 3, b: 6 }]);
  assert.deepEqual(t.steps, [1, 2, 3]);
  assert.deepEqual(t.columns.a, [1, null, 3]);
  assert.deepEqual(t.columns.b, [null, 5, 6]);
});

test('points skip rows without the metric and come out sorted by x even when steps were rewritten', () => {
  const t = table([{ step: 3, a: 30 }, { step: 1, a: 10 }, { step: 2, a: null }, { step: 4, a: 40 }]);
  assert.deepEqual(metricPoints(t, 'a', 'step'), [{ x: 1, y: 10 }, { x: 3, y: 30 }, { x: 4, y: 40 }]);
  assert.deepEqual(metricPoints(t, 'missing', 'step'), []);
});

test('wall time comes from the rows\' time field, relative to the first row', () => {
  const t = table([{ step: 1, a: 1 }, { step: 2, a: 2 }], [1000, 1012.5]);
  assert.deepEqual(wallClock(t), { seconds: [0, 12.5], source: 'time' });
  assert.deepEqual(metricPoints(t, 'a', 'time'), [{ x: 0, y: 1 }, { x: 12.5, y: 2 }]);
});

test('without a time field, wall time is the running sum of timing/step_s, as the trainer logs it', () => {
  const t = table([{ step: 1, 'timing/step_s': 10 }, { step: 2, 'timing/step_s': 12 }, { step: 3, 'timing/step_s': 11 }]);
  assert.deepEqual(wallClock(t), { seconds: [10, 22, 33], source: 'timing/step_s' });
  assert.equal(wallClock(table([{ step: 1, a: 1 }])).source, null);
});

test('EMA smoothing is debiased (starts at the first value) and weight 0 leaves points untouched', () => {
  const points = [{ x: 0, y: 10 }, { x: 1, y: 0 }, { x: 2, y: 0 }];
  const smoothed = smooth(points, 0.5);
  assert.equal(smoothed[0]?.y, 10);
  // s1 = 0.5*5 + 0.5*0 = 2.5 over debias 0.75 → 3.333...
  assert.ok(Math.abs((smoothed[1]?.y ?? 0) - 10 / 3) < 1e-12);
  assert.ok((smoothed[2]?.y ?? 99) < (smoothed[1]?.y ?? 0));
  assert.equal(smooth(points, 0), points);
});

test('stats report min, max, last and count of the raw series', () => {
  assert.deepEqual(seriesStats([{ x: 1, y: 3 }, { x: 2, y: -1 }, { x: 3, y: 2 }]), { min: -1, max: 3, last: 2, count: 3 });
  assert.equal(seriesStats([]), null);
});

test('CSV has one row per run and step, quotes awkward run names, and leaves missing metrics empty', () => {
  const a = table([{ step: 1, x: 0.5 }, { step: 2, x: 0.25, y: 3 }], [100, 110]);
  const csv = toCsv([{ name: 'run "a", v2', table: a }], ['x', 'y']);
  assert.equal(csv, 'run,step,time_s,x,y\n"run ""a"", v2",1,0,0.5,\n"run ""a"", v2",2,10,0.25,3\n');
});

test('default metrics read as the training story: reward, accuracy, tool calls and their errors, length, turns, SFT loss, actor stats, timing', () => {
  // The names the demo's trainer logged (runs/demo/tools/metrics.jsonl), components and probes included.
  const available = ['acc/mean', 'actor/kl', 'actor/pg_clipfrac', 'actor/pg_clipfrac_lower', 'actor/ppo_kl', 'env/item_errors', 'reward/accuracy',
    'reward/accuracy_rule', 'reward/efficiency', 'reward/format', 'reward/mean', 'reward/no_tool_factor', 'reward/overlong', 'reward/repetition',
    'reward/tool_bonus', 'reward/tool_use', 'sft/loss', 'sft/probe_call_acc', 'sft/step', 'tool/call_rate', 'tool/calls_mean', 'tool/error_rate',
    'response_length/mean', 'actor/entropy', 'timing/step_s', 'timing/env_fraction'];
  assert.deepEqual(defaultMetrics(available), ['reward/mean', 'acc/mean', 'tool/call_rate', 'tool/error_rate', 'response_length/mean', 'sft/loss',
    'actor/entropy', 'actor/kl', 'actor/pg_clipfrac', 'timing/env_fraction', 'timing/step_s']);
  assert.deepEqual(defaultMetrics(['sft/loss', 'timing/step_s']), ['sft/loss', 'timing/step_s']);
  assert.deepEqual(defaultMetrics(['b/x', 'a/y']), ['a/y', 'b/x']);
});

test("a veRL run's defaults lead with its score, then accuracy, tool calls, lengths, turns and timings", () => {
  // The names vistool's veRL integration writes (verl_bridge/vistool_verl/run_records.py).
  const available = ['critic/score/mean', 'critic/score/max', 'critic/advantages/mean', 'acc/mean', 'tool/call_rate',
    'response_length/mean', 'prompt_length/mean', 'num_turns/mean', 'timing_s/gen'];
  assert.deepEqual(defaultMetrics(available), ['critic/score/mean', 'acc/mean', 'tool/call_rate', 'response_length/mean', 'num_turns/mean', 'timing_s/gen']);
});

test('a run moving from SFT to RL is marked where RL starts, by step and by wall time; rows without a stage change nothing', () => {
  const t = emptyTable();
  const rows: [number, number, string | null][] = [[1, 100, 'sft'], [2, 110, 'sft'], [3, 120, null], [4, 130, 'rl'], [5, 140, 'rl']];
  for (const [step, time, stage] of rows) appendRows(t, { steps: [step], times: [time], stages: [stage], columns: { 'x/y': [step] } });
  assert.deepEqual(phaseChanges(t, 'step'), [{ x: 4, stage: 'rl' }]);
  assert.deepEqual(phaseChanges(t, 'time'), [{ x: 30, stage: 'rl' }]); // 130 s is 30 s after the first row
  const rlOnly = emptyTable();
  appendRows(rlOnly, { steps: [1, 2], times: [null, null], stages: ['rl', 'rl'], columns: {} });
  assert.deepEqual(phaseChanges(rlOnly, 'step'), []);
});

test('durations read as m:ss under an hour and h:mm:ss above', () => {
  assert.equal(formatDuration(75), '1:15');
  assert.equal(formatDuration(3725), '1:02:05');
});
