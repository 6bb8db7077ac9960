import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDurationTicks, formatLogTicks, formatTicks } from '../../webview/dashboard/axis-ticks.js';

test('an axis of steps past ten thousand reads in one notation: 20k … 100k, never 80000 beside 1.00e+5', () => {
  assert.deepEqual(formatTicks([0, 20_000, 40_000, 60_000, 80_000, 100_000]), ['0', '20k', '40k', '60k', '80k', '100k']);
  assert.deepEqual(formatTicks([95_000, 97_500, 100_000]), ['95.0k', '97.5k', '100.0k']);
  assert.deepEqual(formatTicks([0, 500_000, 1_000_000, 1_500_000]), ['0', '0.5M', '1.0M', '1.5M']);
  assert.deepEqual(formatTicks([1200, 1400, 1600]), ['1200', '1400', '1600']);
});

test('every tick of an axis gets as many decimals as the most exact one needs', () => {
  assert.deepEqual(formatTicks([0.25, 0.5, 0.75, 1]), ['0.25', '0.50', '0.75', '1.00']);
  // Floating-point dust (0.6000000000000001) does not ask for sixteen decimals.
  assert.deepEqual(formatTicks([0, 0.2, 0.4, 0.6000000000000001]), ['0', '0.2', '0.4', '0.6']);
  assert.deepEqual(formatTicks([-1, 0, 1]), ['-1', '0', '1']);
});

test('tiny values share one exponent style, zero stays 0', () => {
  assert.deepEqual(formatTicks([0, 0.0002, 0.0004, 0.0006]), ['0', '2e-4', '4e-4', '6e-4']);
  assert.deepEqual(formatTicks([0.00025, 0.0005]), ['2.5e-4', '5.0e-4']);
});

test('durations take h:mm:ss on every tick once the axis passes an hour, m:ss on every tick below', () => {
  assert.deepEqual(formatDurationTicks([0, 1800, 3600, 5400]), ['0:00:00', '0:30:00', '1:00:00', '1:30:00']);
  assert.deepEqual(formatDurationTicks([0, 600, 1200]), ['0:00', '10:00', '20:00']);
});

test('a log axis labels the powers of ten only, plainly from 0.001 to 10k and as 1e±k beyond', () => {
  assert.deepEqual(formatLogTicks([0.001, 0.002, 0.005, 0.01, 0.1, 1, 2, 10, 100, 1000, 10_000]), ['0.001', '', '', '0.01', '0.1', '1', '', '10', '100', '1000', '10k']);
  assert.deepEqual(formatLogTicks([1e-5, 1e-4, 3e-4, 1e5, 1e6]), ['1e-5', '1e-4', '', '1e+5', '1e+6']);
  // Chart.js's own tick values carry floating-point dust; a non-positive value is never labelled.
  assert.deepEqual(formatLogTicks([0.30000000000000004 / 3, 0, -1]), ['0.1', '', '']);
});
