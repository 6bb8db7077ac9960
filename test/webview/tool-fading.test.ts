import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { detectToolFading, rollingMedian } from '../../protocol/tool-fading.js';

const steps = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
/** A deterministic wiggle of ±amplitude, so series are not perfectly straight. */
const wiggle = (i: number, amplitude: number) => Math.sin(i * 2.3) * amplitude;

test('call rate falling while reward rises is a collapse, reported from its peak with the reward beside it', () => {
  const s = steps(30);
  const callRate = s.map((i) => 0.9 - 0.02 * i + wiggle(i, 0.02));
  const reward = s.map((i) => 0.3 + 0.01 * i + wiggle(i, 0.01));
  const verdict = detectToolFading(s, callRate, reward);
  assert.ok(verdict);
  assert.equal(verdict.fading, true, verdict.reason);
  assert.deepEqual(verdict.currentSteps, [21, 30]);
  // The peak is the first window's median, computed here from the raw values.
  const firstWindow = callRate.slice(0, 10).sort((a, b) => a - b);
  assert.ok(Math.abs(verdict.callRatePeak - (firstWindow[4]! + firstWindow[5]!) / 2) < 1e-12);
  assert.deepEqual(verdict.peakSteps, [1, 10]);
  assert.match(verdict.reason, /tool\/call_rate fell from 0\.\d\d \(median of steps 1–10\) to 0\.\d\d \(median of steps 21–30\), while reward\/mean rose/);
});

test('the collapses the old 20-row alarm missed are reported', () => {
  // 0.89 → 0.05 while reward dips slightly (what this project's default no-tool factor does).
  const s = steps(60);
  const dipping = detectToolFading(s, s.map((i) => (i < 25 ? 0.89 : 0.05) + wiggle(i, 0.01)), s.map((i) => (i < 25 ? 0.62 : 0.58) + wiggle(i, 0.01)));
  assert.equal(dipping?.fading, true, dipping?.reason);
  assert.match(dipping!.reason, /fell from 0\.89 .* to 0\.05 .* reward\/mean fell from 0\.62 to 0\.58/);
  // It fell more than 20 steps ago and stays at 0.05: still reported, from the real peak.
  const long = steps(120);
  const old = detectToolFading(long, long.map((i) => (i < 30 ? 0.89 : 0.05)), long.map(() => 0.5));
  assert.equal(old?.fading, true);
  assert.equal(old?.callRatePeak, 0.89);
  assert.equal(old?.callRateNow, 0.05);
});

test('a healthy call rate, a rising one and a small drift are not collapses', () => {
  const s = steps(60);
  for (const callRate of [s.map((i) => 0.75 + wiggle(i, 0.05)), s.map((i) => Math.min(1, 0.2 + 0.02 * i)), s.map((i) => 0.8 - 0.003 * i)]) {
    const verdict = detectToolFading(s, callRate, s.map(() => 0.5));
    assert.equal(verdict?.fading, false, verdict?.reason);
  }
});

test('one collapsed row in a noisy, otherwise flat call rate is not a collapse', () => {
  const s = steps(40);
  const callRate = s.map((i) => (i === 40 ? 0.0 : i % 2 === 0 ? 0.85 : 0.65));
  const verdict = detectToolFading(s, callRate, s.map(() => 0.5));
  assert.equal(verdict?.fading, false, verdict?.reason);
});

test('with fewer than two windows of rows there is no verdict; rows without a call rate do not count', () => {
  const s = steps(19);
  assert.equal(detectToolFading(s, s.map(() => 0.5), s.map(() => 0.5)), null);
  const t = steps(38); // 19 rows have a call rate
  assert.equal(detectToolFading(t, t.map((i) => (i % 2 ? null : 0.5)), t.map(() => 0.5)), null);
  // Reward is optional: the verdict still comes, without the reward words.
  const u = steps(30);
  const verdict = detectToolFading(u, u.map((i) => (i < 10 ? 0.9 : 0.1)), u.map(() => null));
  assert.equal(verdict?.fading, true);
  assert.equal(verdict?.rewardNow, null);
  assert.doesNotMatch(verdict!.reason, /reward/);
});

test('the rolling median is order-free within a window and bounded by the window\'s values', () => {
  fc.assert(
    fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 5, maxLength: 40 }), fc.integer({ min: 1, max: 5 }), (values, window) => {
      const levels = rollingMedian(values, window);
      if (levels.length !== values.length - window + 1) return false;
      return levels.every((level, i) => {
        const part = values.slice(i, i + window);
        return level >= Math.min(...part) && level <= Math.max(...part)
          && Math.abs(level - rollingMedian([...part].reverse(), window)[0]!) < 1e-12;
      });
    }),
  );
});
