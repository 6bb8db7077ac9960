import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EvalResult } from '../../protocol/panel-protocol.js';
import { evalLines } from '../../webview/dashboard/eval-series.js';

const at = (label: string, step: number | null, metrics: Record<string, number>): EvalResult => ({ label, step, source: 'metrics.jsonl', metrics });

test('periodic evaluations make a curve; the phase-edge evaluations are marks beside it', () => {
  const lines = evalLines([
    at('before', 0, { 'eval/acc_tools': 0.25, 'eval/acc_no_tools': 0.3 }),
    at('rl_step_20', 20, { 'eval/acc_tools': 0.5 }),
    at('rl_step_10', 10, { 'eval/acc_tools': 0.35 }),
    at('after_rl', 30, { 'eval/acc_tools': 0.6, 'eval/acc_no_tools': 0.4 }),
  ]);
  assert.deepEqual(lines, [
    { metric: 'eval/acc_tools', curve: [{ x: 10, y: 0.35, label: 'rl_step_10' }, { x: 20, y: 0.5, label: 'rl_step_20' }], marks: [{ x: 0, y: 0.25, label: 'before' }, { x: 30, y: 0.6, label: 'after_rl' }] },
    { metric: 'eval/acc_no_tools', curve: [], marks: [{ x: 0, y: 0.3, label: 'before' }, { x: 30, y: 0.4, label: 'after_rl' }] },
  ]);
});

test('one evaluation per phase is never joined into a curve; a lone periodic one is a mark; evaluations without a step are left out', () => {
  const lines = evalLines([
    at('after_sft', 336, { 'eval/acc_tools': 0.4 }),
    at('before', 0, { 'eval/acc_tools': 0.1 }),
    at('after_rl', 383, { 'eval/acc_tools': 0.7 }),
    at('rl_step_350', 350, { 'eval/acc_tools': 0.45 }),
    at('results', null, { 'eval/acc_tools': 0.9 }),
  ]);
  assert.deepEqual(lines, [
    { metric: 'eval/acc_tools', curve: [], marks: [{ x: 0, y: 0.1, label: 'before' }, { x: 336, y: 0.4, label: 'after_sft' }, { x: 350, y: 0.45, label: 'rl_step_350' }, { x: 383, y: 0.7, label: 'after_rl' }] },
  ]);
  assert.deepEqual(evalLines([at('final', null, { 'eval/acc_tools': 0.5 })]), []);
  assert.deepEqual(evalLines([at('before', 0, { 'eval/n': 16 })]), []);
});

test('a curriculum\'s perception accuracy is drawn as its own marks, after the two tool settings', () => {
  const lines = evalLines([
    at('after_perception', 300, { 'eval/acc_tools': 0.2, 'perception/acc': 0.55, 'perception/point_distance_px': 9.5 }),
    at('after_sft', 900, { 'eval/acc_tools': 0.6, 'perception/acc': 0.5 }),
  ]);
  assert.deepEqual(lines.map((l) => l.metric), ['eval/acc_tools', 'perception/acc']);
  assert.deepEqual(lines[1], { metric: 'perception/acc', curve: [], marks: [{ x: 300, y: 0.55, label: 'after_perception' }, { x: 900, y: 0.5, label: 'after_sft' }] });
});
