import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunOverview } from '../../extension/runs/run-catalog.js';
import { noRunMessage, runDescription, runTooltip, statusBarText } from '../../extension/runs/run-labels.js';
import { isResumable, runStateFrom } from '../../extension/runs/run-state.js';

const base: RunOverview = {
  dir: '/runs/micro', name: 'micro', configName: null, state: 'running', status: 'running', pid: 42, step: 12, stage: 'rl', sftLoss: 0.5, reward: 0.534, accuracy: 0.5,
  toolCallRate: 0.4, error: null, startedAt: 1, updatedAt: 2, problems: [], group: null, report: null,
};

test('an RL run is described by state, stage step, reward and tool-call rate', () => {
  assert.equal(runDescription({ ...base, stageStep: 12 }), 'running · rl step 12 · reward 0.53 · tools 40%');
  assert.equal(statusBarText({ ...base, stageStep: 12 }), '$(sync~spin) micro · rl step 12 · reward 0.53 · tools 40%');
  // Without the stage's own count, the global step is not named after the stage.
  assert.equal(runDescription(base), 'running · step 12 · reward 0.53 · tools 40%');
});

test('the RL step is counted from the start of RL: 30 RL steps after 650 SFT steps read "rl step 30", not "rl step 680"', () => {
  const run = { ...base, step: 680, stageStep: 30 };
  assert.equal(runDescription(run), 'running · rl step 30 · reward 0.53 · tools 40%');
  assert.equal(statusBarText(run), '$(sync~spin) micro · rl step 30 · reward 0.53 · tools 40%');
  assert.match(runTooltip(run), /^step 680 \(rl step 30\)$/m);
});

test('an SFT run shows its loss instead of a reward', () => {
  const sft = { ...base, stage: 'sft' as const, stageStep: 12, reward: null, toolCallRate: null, sftLoss: 1.23456 };
  assert.equal(runDescription(sft), 'running · sft step 12 · loss 1.235');
  assert.equal(statusBarText(sft), '$(sync~spin) micro · sft step 12 · loss 1.235');
});

test('a run without metrics is described by its state alone', () => {
  assert.equal(runDescription({ ...base, state: 'unknown', step: null, stage: null, reward: null, toolCallRate: null }), 'unknown');
});

test('the tooltip of a run whose trainer vanished says why it is stopped and that it can be resumed', () => {
  const tooltip = runTooltip({ ...base, state: 'stopped', status: 'running' });
  assert.match(tooltip, /run\.json says running/);
  assert.match(tooltip, /Resume continues from the newest checkpoint/);
});

test('run.json status and pid liveness give the state shown', () => {
  assert.equal(runStateFrom('running', true), 'running');
  assert.equal(runStateFrom('running', null), 'running');
  assert.equal(runStateFrom('running', false), 'stopped');
  assert.equal(runStateFrom('finished', false), 'finished');
  assert.equal(runStateFrom('interrupted', false), 'interrupted');
  assert.equal(runStateFrom(null, true), 'starting');
  assert.equal(runStateFrom(null, null), 'unknown');
  assert.equal(runStateFrom('banana', true), 'unknown');
  assert.deepEqual(['running', 'finished', 'failed', 'stopped', 'interrupted', 'paused'].map((s) => isResumable(runStateFrom(s, false))), [true, false, true, true, true, true]);
});

test('the pid shows while the trainer runs, not after it has exited', () => {
  assert.match(runTooltip(base), /^pid 42$/m);
  assert.doesNotMatch(runTooltip({ ...base, state: 'finished', status: 'finished' }), /pid/);
  assert.doesNotMatch(runTooltip({ ...base, state: 'stopped', status: 'running' }), /pid/);
});

test('"no run to resume" says why: where it looked, or what each run is and what the command needs', () => {
  assert.equal(noRunMessage('resume', [], ['/ws/runs']), 'vistool: no run to resume: none under /ws/runs (a run is a folder with run.json, config.json or metrics.jsonl; the vistool.runsFolder setting names where to look).');
  assert.equal(noRunMessage('resume', [], []), 'vistool: no run to resume: no workspace folder is open.');
  const runs = [{ ...base, name: 'micro-cpu', state: 'finished' as const }, { ...base, name: 'demo', state: 'running' as const }];
  assert.equal(noRunMessage('resume', runs, ['/ws/runs'], 'Resume needs a run that stopped, was interrupted, paused or failed.'), 'vistool: no run to resume: micro-cpu is finished, demo is running. Resume needs a run that stopped, was interrupted, paused or failed.');
  const many = Array.from({ length: 6 }, (_, i) => ({ ...base, name: `r${i}`, state: 'finished' as const }));
  assert.match(noRunMessage('stop', many, ['/ws/runs']), /r3 is finished and 2 more\.$/);
});
