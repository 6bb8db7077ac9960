import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EvalResult } from '../../protocol/panel-protocol.js';
import { accuracyInterval, evalLines } from '../../webview/dashboard/eval-series.js';
import { wilsonInterval } from '../../protocol/intervals.js';

/** An evaluation without eval/n: no interval. */
const none = { n: null, low: null, high: null };
const at = (label: string, step: number | null, metrics: Record<string, number>): EvalResult => ({ label, step, source: 'metrics.jsonl', metrics });

test('periodic evaluations make a curve; the phase-edge evaluations are marks beside it', () => {
  const lines = evalLines([
    at('before', 0, { 'eval/acc_tools': 0.25, 'eval/acc_no_tools': 0.3 }),
    at('rl_step_20', 20, { 'eval/acc_tools': 0.5 }),
    at('rl_step_10', 10, { 'eval/acc_tools': 0.35 }),
    at('after_rl', 30, { 'eval/acc_tools': 0.6, 'eval/acc_no_tools': 0.4 }),
  ]);
  assert.deepEqual(lines, [
    { metric: 'eval/acc_tools', curve: [{ x: 10, y: 0.35, label: 'rl_step_10', ...none }, { x: 20, y: 0.5, label: 'rl_step_20', ...none }], marks: [{ x: 0, y: 0.25, label: 'before', ...none }, { x: 30, y: 0.6, label: 'after_rl', ...none }] },
    { metric: 'eval/acc_no_tools', curve: [], marks: [{ x: 0, y: 0.3, label: 'before', ...none }, { x: 30, y: 0.4, label: 'after_rl', ...none }] },
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
    { metric: 'eval/acc_tools', curve: [], marks: [{ x: 0, y: 0.1, label: 'before', ...none }, { x: 336, y: 0.4, label: 'after_sft', ...none }, { x: 350, y: 0.45, label: 'rl_step_350', ...none }, { x: 383, y: 0.7, label: 'after_rl', ...none }] },
  ]);
  assert.deepEqual(evalLines([at('final', null, { 'eval/acc_tools': 0.5 })]), []);
  assert.deepEqual(evalLines([at('before', 0, { 'eval/n': 16 })]), []);
});

test('each point carries its 95 % Wilson interval from the task count and the trainer\'s correct count', () => {
  const [tools] = evalLines([at('after_rl', 1360, { 'eval/acc_tools': 1, 'eval/n': 300, 'eval/correct_tools': 300 }), at('after_sft', 1300, { 'eval/acc_tools': 0.317, 'eval/n': 300 })]);
  const [sft, rl] = tools?.marks ?? [];
  // README and docs/DEMO.md: 100.0 % [98.7, 100] on the demo's 300 held-out tasks.
  assert.equal(rl?.n, 300);
  assert.equal(rl?.high, 1);
  assert.equal(Number(((rl?.low ?? 0) * 100).toFixed(1)), 98.7);
  // 0.317 × 300 = 95 correct: the interval of 95/300 (p = 0.3167, about ±5 points).
  assert.deepEqual([sft?.low, sft?.high], wilsonInterval(95, 300));
  assert.ok(Math.abs((sft?.low ?? 0) - 0.2668) < 5e-4 && Math.abs((sft?.high ?? 0) - 0.3713) < 5e-4, `${sft?.low} ${sft?.high}`);
  // No task count: no interval; a correct count that cannot be right is not trusted.
  assert.deepEqual(accuracyInterval({ 'eval/acc_tools': 0.5 }, 0.5, 'eval/correct_tools'), none);
  assert.deepEqual(accuracyInterval({ 'eval/n': 10, 'eval/correct_tools': 40 }, 0.5, 'eval/correct_tools'), { n: 10, low: wilsonInterval(5, 10)[0], high: wilsonInterval(5, 10)[1] });
});

test('the Wilson interval is the textbook one: inside [0, 1], exact at 0 and n, and refuses impossible counts', () => {
  // Wilson (1927) for 8 of 10 at z = 1.96: [0.4902, 0.9433] (Newcombe 1998, table I, method 3).
  const [low, high] = wilsonInterval(8, 10);
  assert.ok(Math.abs(low - 0.4902) < 1e-4 && Math.abs(high - 0.9433) < 1e-4, `${low} ${high}`);
  assert.deepEqual(wilsonInterval(0, 0), [0, 1]);
  assert.equal(wilsonInterval(0, 20)[0], 0);
  assert.equal(wilsonInterval(20, 20)[1], 1);
  assert.throws(() => wilsonInterval(3, 2), RangeError);
  assert.throws(() => wilsonInterval(1.5, 2), RangeError);
});

test('a curriculum\'s perception accuracy is drawn as its own marks, after the two tool settings', () => {
  const lines = evalLines([
    at('after_perception', 300, { 'eval/acc_tools': 0.2, 'perception/acc': 0.55, 'perception/point_distance_px': 9.5 }),
    at('after_sft', 900, { 'eval/acc_tools': 0.6, 'perception/acc': 0.5 }),
  ]);
  assert.deepEqual(lines.map((l) => l.metric), ['eval/acc_tools', 'perception/acc']);
  assert.deepEqual(lines[1], { metric: 'perception/acc', curve: [], marks: [{ x: 300, y: 0.55, label: 'after_perception', ...none }, { x: 900, y: 0.5, label: 'after_sft', ...none }] });
  // The perception interval counts the perception tasks (perception/n), not the evaluation's eval/n.
  const [, counted] = evalLines([at('after_sft', 900, { 'eval/n': 300, 'eval/acc_tools': 0.6, 'perception/acc': 0.5, 'perception/n': 40 })]);
  assert.deepEqual(counted?.marks[0], { x: 900, y: 0.5, label: 'after_sft', n: 40, low: wilsonInterval(20, 40)[0], high: wilsonInterval(20, 40)[1] });
});
