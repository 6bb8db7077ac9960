import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, toCsv, wallClock } from '../../webview/dashboard/series.js';
import { debiasedEma, stageChanges } from '../../protocol/metric-math.js';
import { defaultMetrics, varies } from '../../webview/dashboard/default-metrics.js';
import type { MetricTable } from '../../protocol/panel-protocol.js';

/** A metric table from rows, a column per metric any row has (null where a row lacks it). */
function table(rows: Record<string, number | null>[], times?: (number | null)[]): MetricTable {
  const names = [...new Set(rows.flatMap((row) => Object.keys(row).filter((k) => k !== 'step')))];
  return {
    steps: rows.map((row, i) => row.step ?? i),
    times: rows.map((_, i) => times?.[i] ?? null),
    stages: rows.map(() => null),
    columns: Object.fromEntries(names.map((name) => [name, rows.map((row) => row[name] ?? null)])),
  };
}

test('wall time comes from the rows\' time field, relative to the first row', () => {
  const t = table([{ step: 1, a: 1 }, { step: 2, a: 2 }], [1000, 1012.5]);
  assert.deepEqual(wallClock(t), { seconds: [0, 12.5], source: 'time' });
});

test('without a time field, wall time is the running sum of timing/step_s, as the trainer logs it', () => {
  const t = table([{ step: 1, 'timing/step_s': 10 }, { step: 2, 'timing/step_s': 12 }, { step: 3, 'timing/step_s': 11 }]);
  assert.deepEqual(wallClock(t), { seconds: [10, 22, 33], source: 'timing/step_s' });
  assert.equal(wallClock(table([{ step: 1, a: 1 }])).source, null);
  // veRL's file logger writes no time of day, only each step's seconds under its own name.
  const verl = table([{ step: 1, 'timing_s/step': 4 }, { step: 2, 'timing_s/step': 6 }]);
  assert.deepEqual(wallClock(verl), { seconds: [4, 10], source: 'timing_s/step' });
  // With both names, vistool's comes first.
  const both = table([{ step: 1, 'timing/step_s': 1, 'timing_s/step': 4 }, { step: 2, 'timing/step_s': 2, 'timing_s/step': 6 }]);
  assert.deepEqual(wallClock(both), { seconds: [1, 3], source: 'timing/step_s' });
});

test('EMA smoothing is debiased (starts at the first value)', () => {
  const smoothed = debiasedEma([10, 0, 0], 0.5);
  assert.equal(smoothed[0], 10);
  // s1 = 0.5*5 + 0.5*0 = 2.5 over debias 0.75 → 3.333...
  assert.ok(Math.abs((smoothed[1] ?? 0) - 10 / 3) < 1e-12);
  assert.ok((smoothed[2] ?? 99) < (smoothed[1] ?? 0));
});

test('CSV has one row per run and step, quotes awkward run names, and leaves missing metrics empty', () => {
  const a = table([{ step: 1, x: 0.5 }, { step: 2, x: 0.25, y: 3 }], [100, 110]);
  const csv = toCsv([{ name: 'run "a", v2', table: a }], ['x', 'y']);
  assert.equal(csv, 'run,step,time_s,x,y\n"run ""a"", v2",1,0,0.5,\n"run ""a"", v2",2,10,0.25,3\n');
});

test('default metrics read as the training story: reward and its components, accuracy, tool calls and their errors, length, SFT loss and probe, actor stats, timing', () => {
  // The names the demo's trainer logged (runs/demo/tools/metrics.jsonl), components and probes included.
  const available = ['acc/mean', 'actor/kl', 'actor/pg_clipfrac', 'actor/pg_clipfrac_lower', 'actor/ppo_kl', 'env/item_errors', 'reward/accuracy',
    'reward/accuracy_rule', 'reward/efficiency', 'reward/format', 'reward/mean', 'reward/no_tool_factor', 'reward/overlong', 'reward/repetition',
    'reward/tool_bonus', 'reward/tool_use', 'sft/loss', 'sft/probe_call_acc', 'sft/step', 'tool/call_rate', 'tool/calls_mean', 'tool/error_rate',
    'response_length/mean', 'actor/entropy', 'timing/step_s', 'timing/env_fraction', 'sampling/kept_groups', 'sampling/dropped_groups', 'sampling/gen_batches'];
  // Without stats (an older host): every listed metric the run logs.
  assert.deepEqual(defaultMetrics(available), ['reward/mean', 'reward/accuracy', 'reward/accuracy_rule', 'reward/efficiency', 'reward/format',
    'reward/no_tool_factor', 'reward/overlong', 'reward/repetition', 'reward/tool_bonus', 'reward/tool_use', 'acc/mean', 'tool/call_rate', 'tool/error_rate',
    'sampling/kept_groups', 'sampling/dropped_groups', 'response_length/mean', 'sft/loss', 'sft/probe_call_acc',
    'actor/entropy', 'actor/kl', 'actor/pg_clipfrac', 'timing/env_fraction', 'timing/step_s']);
  assert.deepEqual(defaultMetrics(['sft/loss', 'timing/step_s']), ['sft/loss', 'timing/step_s']);
  assert.deepEqual(defaultMetrics(['b/x', 'a/y']), ['a/y', 'b/x']);
});

test('defaults follow what the runs vary: a flat metric or one with two points stays in the picker; the reward and accuracy always show', () => {
  const moving = { count: 60, min: 0, max: 1 };
  const flat = (value: number, count = 60) => ({ count, min: value, max: value });
  const available = ['reward/mean', 'acc/mean', 'reward/accuracy', 'reward/format', 'reward/tool_bonus', 'reward/repetition', 'actor/kl', 'actor/entropy',
    'tools/zoom_in/failed', 'tools/zoom_in/calls', 'sampling/kept_groups', 'sampling/dropped_groups', 'sft/probe_call_acc', 'tool/call_rate'];
  const tools = { rows: 60, stats: { 'reward/mean': flat(0.5), 'acc/mean': flat(0.5), 'reward/accuracy': moving, 'reward/format': flat(1), 'reward/tool_bonus': moving,
    'reward/repetition': flat(0), 'actor/kl': flat(0), 'actor/entropy': moving, 'tools/zoom_in/failed': { count: 2, min: 0, max: 3 },
    'tools/zoom_in/calls': moving, 'sampling/kept_groups': moving, 'sampling/dropped_groups': moving, 'sft/probe_call_acc': { count: 8, min: 0.1, max: 0.9 }, 'tool/call_rate': moving } };
  assert.deepEqual(defaultMetrics(available, [tools]), ['reward/mean', 'reward/accuracy', 'reward/tool_bonus', 'acc/mean', 'tool/call_rate', 'tools/zoom_in/calls',
    'sampling/kept_groups', 'sampling/dropped_groups', 'sft/probe_call_acc', 'actor/entropy']);
  // A metric flat in one run and moving in another is shown (runs are compared on it); a text arm's call rate of 0 alone is not.
  const text = { rows: 60, stats: { 'reward/mean': moving, 'acc/mean': moving, 'tool/call_rate': flat(0), 'reward/format': moving } };
  assert.ok(defaultMetrics(available, [tools, text]).includes('reward/format'));
  assert.ok(!defaultMetrics(['reward/mean', 'tool/call_rate'], [text]).includes('tool/call_rate'));
  // A run of one or two rows cannot say what moves: what it logs is shown (a veRL smoke of one step).
  assert.deepEqual(defaultMetrics(['reward/mean', 'actor/entropy', 'actor/kl'], [{ rows: 1, stats: { 'reward/mean': flat(0.4, 1), 'actor/entropy': flat(1, 1), 'actor/kl': flat(0, 1) } }]), ['reward/mean', 'actor/entropy', 'actor/kl']);
  assert.equal(varies('actor/kl', [{ rows: 60 }]), true, 'a run without stats cannot say: the metric is shown');
});

test('the per-tool and per-error-class counts join the defaults as one group after the call and error rates', () => {
  // Names as trainer/vistool_trainer/rollouts/tool_metrics.py writes them, shuffled.
  const available = ['errors/E3', 'tools/zoom_in/failed', 'reward/mean', 'errors/E1', 'tools/focus_on_columns_with_mask/calls', 'errors/E6', 'tool/error_rate',
    'errors/E2', 'tools/zoom_in/calls', 'errors/E5', 'tools/focus_on_columns_with_mask/failed', 'errors/E4', 'tool/call_rate', 'acc/mean', 'sft/loss', 'errors/other'];
  assert.deepEqual(defaultMetrics(available), ['reward/mean', 'acc/mean', 'tool/call_rate', 'tool/error_rate',
    'tools/focus_on_columns_with_mask/calls', 'tools/focus_on_columns_with_mask/failed', 'tools/zoom_in/calls', 'tools/zoom_in/failed',
    'errors/E1', 'errors/E2', 'errors/E3', 'errors/E4', 'errors/E5', 'errors/E6', 'sft/loss']);
  // A run without them is unchanged.
  assert.deepEqual(defaultMetrics(['reward/mean', 'sft/loss']), ['reward/mean', 'sft/loss']);
});

test("a veRL run's defaults lead with its score, then accuracy, tool calls, lengths, turns and timings", () => {
  // The names vistool's veRL integration writes (verl_bridge/vistool_verl/run_records.py).
  const available = ['critic/score/mean', 'critic/score/max', 'critic/advantages/mean', 'acc/mean', 'tool/call_rate',
    'response_length/mean', 'prompt_length/mean', 'num_turns/mean', 'timing_s/gen'];
  assert.deepEqual(defaultMetrics(available), ['critic/score/mean', 'acc/mean', 'tool/call_rate', 'response_length/mean', 'num_turns/mean', 'timing_s/gen']);
});

test('a run moving from SFT to RL is marked where RL starts, by step and by wall time; rows without a stage change nothing', () => {
  const stages = ['sft', 'sft', null, 'rl', 'rl'];
  assert.deepEqual(stageChanges(stages, [1, 2, 3, 4, 5]), [{ x: 4, stage: 'rl' }]);
  const t = table([1, 2, 3, 4, 5].map((step) => ({ step, 'x/y': step })), [100, 110, 120, 130, 140]);
  assert.deepEqual(stageChanges(stages, wallClock(t).seconds), [{ x: 30, stage: 'rl' }]); // 130 s is 30 s after the first row
  assert.deepEqual(stageChanges(['rl', 'rl'], [1, 2]), []);
});

test('durations read as m:ss under an hour and h:mm:ss above', () => {
  assert.equal(formatDuration(75), '1:15');
  assert.equal(formatDuration(3725), '1:02:05');
});
