import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configDiff, flattenConfig, stepsRan } from '../../webview/dashboard/config-diff.js';

test('the config diff lists only the key paths whose values differ, with each run\'s value as JSON and null where a run lacks the key', () => {
  const a = { name: 'tools', seed: 1, rl: { group_size: 4, lr: 1e-6, clip: { low: 0.2, high: 0.28 } }, data: { train: ['a.jsonl'] }, eval: { every_steps: 0 } };
  const b = { name: 'text', seed: 1, rl: { group_size: 8, lr: 1e-6, clip: { high: 0.28, low: 0.2 } }, data: { train: ['a.jsonl', 'b.jsonl'] }, eval: { every_steps: 0 }, sft: { steps: 10 } };
  assert.deepEqual(configDiff([a, b]), [
    { key: 'name', values: ['"tools"', '"text"'] },
    { key: 'rl.group_size', values: ['4', '8'] },
    { key: 'data.train', values: ['["a.jsonl"]', '["a.jsonl","b.jsonl"]'] },
    { key: 'sft.steps', values: [null, '10'] },
  ]);
});

test('three runs: a key differs when any run differs; an explicit null differs from an absent key; equal object values in another key order are equal', () => {
  const rows = configDiff([
    { judge: null, tools: { names: ['zoom_in'] }, opts: { b: 1, a: [{ y: 2, x: 1 }] } },
    { judge: null, tools: { names: ['zoom_in'] }, opts: { a: [{ x: 1, y: 2 }], b: 1 } },
    { tools: { names: ['zoom_in'] }, opts: { a: [{ x: 1, y: 2 }], b: 2 } },
  ]);
  assert.deepEqual(rows, [
    { key: 'judge', values: ['null', 'null', null] },
    { key: 'opts.b', values: ['1', '1', '2'] },
  ]);
});

test('identical configs have no diff; keys with dots are bracketed; an empty object is a value', () => {
  assert.deepEqual(configDiff([{ a: { b: 1 } }, { a: { b: 1 } }]), []);
  assert.deepEqual([...flattenConfig({ 'x.y': 1, m: { 'k.z': 'v', e: {} } })], [['["x.y"]', '1'], ['m["k.z"]', '"v"'], ['m.e', '{}']]);
});

test('a step budget in the diff is read beside the steps the run ran: sft.steps 1500 that ran 650 (its metrics, while it runs)', () => {
  const run = { metricStats: { 'sft/step': { max: 650 }, 'rl/step': { max: 30 } } };
  assert.deepEqual(stepsRan('sft.steps', run), { steps: 650, from: 'metrics', timeCap: false });
  assert.deepEqual(stepsRan('rl.steps', run), { steps: 30, from: 'metrics', timeCap: false });
  assert.equal(stepsRan('curriculum.perception.steps', run), null);
  assert.equal(stepsRan('rl.lr', run), null);
  assert.equal(stepsRan('sft.steps', undefined), null);
});

test("a finished run's steps are run.json's record, not the metrics' counters, and a time-capped stage says so (issue 44, 2.7)", () => {
  // The metrics' counter can disagree with what ran: a resumed run's discarded rows, a stage's counter that restarts per phase.
  const run = { metricStats: { 'sft/step': { max: 200 }, 'rl/step': { max: 30 } }, ran: { sft: 650, rl: 12, timeCapped: ['rl'] } };
  assert.deepEqual(stepsRan('sft.steps', run), { steps: 650, from: 'run.json', timeCap: false });
  assert.deepEqual(stepsRan('rl.steps', run), { steps: 12, from: 'run.json', timeCap: true });
});
