import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SFT_MIXTURE_MARK, sftPhaseMarks, sftPhaseStarts } from '../../env/runs/sft-phases.js';

test("the SFT phases begin where run.json's sft_schedule says, empty phases left out, the mixture after the last", () => {
  // The demo's schedule: 800 steps reading after the tool (ended early at 337 by the probe, which moved the later ends), no calls-without-images phase, 200 of tool trajectories.
  const run = { sft_schedule: { lengths: [800, 0, 200], targets: [0.9, null, 0.9], ends: [337, 337, 537], ended_early_at: [337, null, null] } };
  assert.deepEqual(sftPhaseStarts(run), [
    { sftStep: 1, stage: 'sft: answers after tool' },
    { sftStep: 338, stage: 'sft: tool trajectories' },
    { sftStep: 538, stage: SFT_MIXTURE_MARK },
  ]);
  assert.deepEqual(sftPhaseStarts({}), []);
  assert.deepEqual(sftPhaseStarts({ sft_schedule: { ends: [1, 2] } }), [], 'a schedule of another shape is not guessed at');
  assert.deepEqual(sftPhaseStarts({ sft_schedule: { ends: [0, 0, 0] } }), [{ sftStep: 1, stage: SFT_MIXTURE_MARK }]);
});

test('a phase is marked at the x of the row that is its first step, on any axis, and only once that row exists', () => {
  const starts = [{ sftStep: 1, stage: 'a' }, { sftStep: 3, stage: 'b' }, { sftStep: 9, stage: 'c' }];
  // Rows: an eval row has no sft/step (NaN); global steps 1..5 hold SFT steps 1..4, then RL.
  const sftSteps = Float64Array.from([NaN, 1, 2, 3, 4, NaN]);
  assert.deepEqual(sftPhaseMarks(starts, sftSteps, Float64Array.from([0, 1, 2, 3, 4, 5])), [{ x: 1, stage: 'a' }, { x: 3, stage: 'b' }]);
  assert.deepEqual(sftPhaseMarks(starts, sftSteps, Float64Array.from([0, 10, 20, NaN, 40, 50])), [{ x: 10, stage: 'a' }], 'a row without an x is not marked');
  assert.deepEqual(sftPhaseMarks(starts, null, Float64Array.from([1])), []);
});
