import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nearestStep } from '../../webview/dashboard/nearest-step.js';

test('a clicked step opens the nearest step that has a rollouts file; a tie goes to the earlier one; none without files', () => {
  const steps = [10, 20, 40];
  assert.equal(nearestStep(steps, 20), 20);
  assert.equal(nearestStep(steps, 14), 10);
  assert.equal(nearestStep(steps, 16), 20);
  assert.equal(nearestStep(steps, 15), 10);
  assert.equal(nearestStep(steps, 30), 20);
  assert.equal(nearestStep(steps, 1), 10);
  assert.equal(nearestStep(steps, 1000), 40);
  assert.equal(nearestStep([40, 10, 20], 31), 40);
  assert.equal(nearestStep([], 5), null);
});
