/**
 * The dashboard's issue-43 data shaping, without a browser: the tool-effect chart's lines (the
 * effect with the interval the evaluation reports, beside the call rate and calls on target, by the
 * evaluation chart's honesty rule), the findings table's counts at a run's latest step and
 * evaluation, the chart groups and the defaults. Expected values are written out from the inputs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EvalResult, MetricTable } from '../../protocol/panel-protocol.js';
import { effectInterval, toolEffectLines } from '../../webview/dashboard/tool-effect-series.js';
import { latestEvalCounts, latestStepCounts, logsScans } from '../../webview/dashboard/scan-counts.js';
import { chartSpecs } from '../../webview/dashboard/chart-groups.js';
import { defaultMetrics } from '../../webview/dashboard/default-metrics.js';

const evaluation = (label: string, step: number | null, metrics: Record<string, number>): EvalResult => ({ label, step, source: 'metrics.jsonl', metrics });

test("the effect's interval is the one the evaluation reports, and none when an end is missing or does not hold the effect", () => {
  assert.deepEqual(effectInterval({ 'eval/n': 40, 'eval/tool_effect_lo': -0.05, 'eval/tool_effect_hi': 0.3 }, 0.125), { n: 40, low: -0.05, high: 0.3 });
  assert.deepEqual(effectInterval({ 'eval/n': 40, 'eval/tool_effect_lo': -0.05 }, 0.125), { n: 40, low: null, high: null });
  assert.deepEqual(effectInterval({ 'eval/tool_effect_lo': 0.2, 'eval/tool_effect_hi': 0.3 }, 0.1), { n: null, low: null, high: null });
});

test('periodic evaluations are joined, the phase edge is a mark, and the rates come only where an effect does', () => {
  const evaluations = [
    evaluation('before', 0, { 'eval/acc_tools': 0.2, 'eval/tool_call_rate': 1 }),
    evaluation('rl_step_2', 2, { 'eval/n': 8, 'eval/tool_effect': 0, 'eval/tool_effect_lo': -0.25, 'eval/tool_effect_hi': 0.25, 'eval/tool_call_rate': 1, 'eval/call_on_target_rate': 0.25 }),
    evaluation('rl_step_3', 3, { 'eval/n': 8, 'eval/tool_effect': 0.25, 'eval/tool_effect_lo': -0.1, 'eval/tool_effect_hi': 0.55, 'eval/tool_call_rate': 0.875, 'eval/call_on_target_rate': 0.5 }),
    evaluation('after_rl', 4, { 'eval/n': 8, 'eval/tool_effect': 0.5, 'eval/tool_effect_lo': 0.1, 'eval/tool_effect_hi': 0.75, 'eval/tool_call_rate': 0.75, 'eval/call_on_target_rate': 1 }),
  ];
  const lines = toolEffectLines(evaluations);
  assert.deepEqual(lines.map((l) => l.metric), ['eval/tool_effect', 'eval/tool_call_rate', 'eval/call_on_target_rate']);
  const [effect, calls] = lines;
  assert.deepEqual(effect?.curve.map((p) => [p.x, p.y, p.low, p.high]), [[2, 0, -0.25, 0.25], [3, 0.25, -0.1, 0.55]]);
  assert.deepEqual(effect?.marks.map((p) => [p.x, p.y, p.label]), [[4, 0.5, 'after_rl']]);
  // The call rate of `before` has no effect beside it, but the line is the run's call rate at its evaluations.
  assert.deepEqual(calls?.marks.map((p) => [p.x, p.y]), [[0, 1], [4, 0.75]]);
  assert.ok(calls?.curve.every((p) => p.low === null));
  assert.deepEqual(toolEffectLines([evaluation('after_rl', 4, { 'eval/acc_tools': 0.5, 'eval/tool_call_rate': 1 })]), []);
});

test("the findings table reads the latest row that has the scanners' counts, and the latest evaluation by step", () => {
  const table: MetricTable = {
    steps: [1, 2, 3],
    times: [null, null, null],
    stages: ['rl', 'rl', 'sft'],
    columns: { 'scan/off_target_call': [4, 2, null], 'scan/repeated_call': [0, 1, null], 'reward/mean': [0.1, 0.2, 0.3] },
  };
  assert.deepEqual(latestStepCounts(table), { step: 2, counts: { off_target_call: 2, repeated_call: 1 } });
  assert.equal(latestStepCounts({ ...table, columns: { 'reward/mean': [1, 2, 3] } }), null);
  const evaluations = [evaluation('after_rl', 9, { 'scan/format_collapse': 3 }), evaluation('rl_step_4', 4, { 'scan/format_collapse': 5 }), evaluation('after_rl_text', 10, { 'eval/acc_no_tools': 0.5 })];
  assert.deepEqual(latestEvalCounts(evaluations), { label: 'after_rl', step: 9, counts: { format_collapse: 3 } });
  assert.ok(logsScans(['reward/mean', 'scan/repeated_call'], []));
  assert.ok(logsScans([], evaluations));
  assert.ok(!logsScans(['reward/mean'], [evaluation('x', 1, { 'eval/n': 3 })]));
});

test('the calls by target and the scanners are chart groups; the on-target rate is a default beside the call rate', () => {
  const specs = chartSpecs(['tools/calls_on_target', 'tools/calls_partly_on_target', 'tools/calls_off_target', 'tools/calls_target_unknown', 'tools/call_on_target_rate', 'scan/off_target_call', 'scan/repeated_call']);
  assert.deepEqual(specs.map((s) => [s.key, s.labels]), [
    ['tools/calls_*_target', ['on_target', 'partly_on_target', 'off_target', 'target_unknown']],
    ['tools/call_on_target_rate', null],
    ['scan/*', ['off_target_call', 'repeated_call']],
  ]);
  assert.deepEqual(defaultMetrics(['reward/mean', 'tool/call_rate', 'tool/error_rate', 'tools/call_on_target_rate', 'acc/mean']), ['reward/mean', 'acc/mean', 'tool/call_rate', 'tools/call_on_target_rate', 'tool/error_rate']);
});
