import { test } from 'node:test';
import assert from 'node:assert/strict';
import { curveUnderPointer, nearestStep } from '../../webview/dashboard/nearest-step.js';

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

test('a click picks the curve under the pointer: at one x, the line nearest along y; a line that ended before the click is not a candidate', () => {
  // Pixels: y grows downwards. Line 0 (the text arm, drawn first) low on the chart, line 1 (tools) high.
  const text = [{ x: 10, y: 200 }, { x: 20, y: 198 }, { x: 30, y: 201 }];
  const tools = [{ x: 10, y: 40 }, { x: 20, y: 42 }, { x: 30, y: 39 }];
  assert.deepEqual(curveUnderPointer([text, tools], { x: 21, y: 45 }), { line: 1, index: 1 });
  assert.deepEqual(curveUnderPointer([text, tools], { x: 21, y: 190 }), { line: 0, index: 1 });
  // A hidden line (null) is skipped even when it is nearer.
  assert.deepEqual(curveUnderPointer([text, null], { x: 21, y: 45 }), { line: 0, index: 1 });
  // A run that ended at x=10 is far along x from a click at x=30: the line that reaches it wins.
  assert.deepEqual(curveUnderPointer([[{ x: 10, y: 40 }], text], { x: 30, y: 40 }), { line: 1, index: 2 });
  assert.equal(curveUnderPointer([null, []], { x: 1, y: 1 }), null);
});
