import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chartSpecs } from '../../webview/dashboard/chart-groups.js';

test('per-tool calls, per-tool failures and the error classes are one chart each, where their first member stands; other metrics one chart per metric', () => {
  const specs = chartSpecs(['reward/mean', 'tool/call_rate', 'tools/mask/calls', 'tools/mask/failed', 'tools/zoom_in/calls', 'tools/zoom_in/failed',
    'errors/E1', 'errors/E2', 'errors/E6', 'sft/loss', 'errors/other']);
  assert.deepEqual(specs, [
    { key: 'reward/mean', members: ['reward/mean'], labels: null },
    { key: 'tool/call_rate', members: ['tool/call_rate'], labels: null },
    { key: 'tools/*/calls', members: ['tools/mask/calls', 'tools/zoom_in/calls'], labels: ['mask', 'zoom_in'] },
    { key: 'tools/*/failed', members: ['tools/mask/failed', 'tools/zoom_in/failed'], labels: ['mask', 'zoom_in'] },
    { key: 'errors/E1–E6', members: ['errors/E1', 'errors/E2', 'errors/E6'], labels: ['E1', 'E2', 'E6'] },
    { key: 'sft/loss', members: ['sft/loss'], labels: null },
    { key: 'errors/other', members: ['errors/other'], labels: null },
  ]);
  // One chosen member still makes its group's chart; the order of the chosen metrics decides where.
  assert.deepEqual(chartSpecs(['errors/E4', 'acc/mean', 'errors/E1']), [
    { key: 'errors/E1–E6', members: ['errors/E4', 'errors/E1'], labels: ['E4', 'E1'] },
    { key: 'acc/mean', members: ['acc/mean'], labels: null },
  ]);
});

test('the reward components, the kept and dropped groups and the SFT probe rates are a chart each; reward/mean keeps its own', () => {
  const specs = chartSpecs(['reward/mean', 'reward/accuracy', 'reward/tool_bonus', 'acc/mean', 'sampling/kept_groups', 'sampling/dropped_groups', 'sampling/gen_batches',
    'sft/loss', 'sft/probe_call_acc', 'sft/probe_direct_answer_acc', 'sft/probe_tasks']);
  assert.deepEqual(specs, [
    { key: 'reward/mean', members: ['reward/mean'], labels: null },
    { key: 'reward components', members: ['reward/accuracy', 'reward/tool_bonus'], labels: ['accuracy', 'tool_bonus'] },
    { key: 'acc/mean', members: ['acc/mean'], labels: null },
    { key: 'sampling/*_groups', members: ['sampling/kept_groups', 'sampling/dropped_groups'], labels: ['kept', 'dropped'] },
    { key: 'sampling/gen_batches', members: ['sampling/gen_batches'], labels: null },
    { key: 'sft/loss', members: ['sft/loss'], labels: null },
    { key: 'sft/probe_*', members: ['sft/probe_call_acc', 'sft/probe_direct_answer_acc'], labels: ['call', 'direct_answer'] },
    { key: 'sft/probe_tasks', members: ['sft/probe_tasks'], labels: null },
  ]);
});
