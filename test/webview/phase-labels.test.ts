import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelRows } from '../../webview/dashboard/metric-chart.js';

test('stage names go on the first row where they overlap nothing; the same name at the same x is drawn once', () => {
  // Two runs' "rl" 6 px apart (wall time), a third name far to the right.
  assert.deepEqual(labelRows([{ x: 100, width: 10, text: 'rl' }, { x: 106, width: 10, text: 'rl' }, { x: 300, width: 20, text: 'sft' }]), [0, 1, 0]);
  // Given right to left, placed left to right.
  assert.deepEqual(labelRows([{ x: 106, width: 10, text: 'rl' }, { x: 100, width: 10, text: 'rl' }]), [1, 0]);
  // Both runs enter RL at one step: one name.
  assert.deepEqual(labelRows([{ x: 100, width: 10, text: 'rl' }, { x: 100, width: 10, text: 'rl' }]), [0, null]);
  // A name that ends 4 px before the next leaves it on its row.
  assert.deepEqual(labelRows([{ x: 0, width: 10, text: 'perception' }, { x: 14, width: 10, text: 'sft' }]), [0, 0]);
});
