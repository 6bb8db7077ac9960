import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { detectToolFading, kendallTau } from '../../webview/dashboard/tool-fading.js';

const steps = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
/** A deterministic wiggle of ±amplitude, so series are not perfectly straight. */
const wiggle = (i: number, amplitude: number) => Math.sin(i * 2.3) * amplitude;

test('call rate falling steadily while reward rises is reported as tool use fading, with the numbers', () => {
  const s = steps(30);
  const callRate = s.map((i) => 0.9 - 0.02 * i + wiggle(i, 0.02));
  const reward = s.map((i) => 0.3 + 0.01 * i + wiggle(i, 0.01));
  const verdict = detectToolFading(s, callRate, reward);
  assert.ok(verdict);
  assert.equal(verdict.fading, true, verdict.reason);
  assert.equal(verdict.fromStep, 11);
  assert.equal(verdict.toStep, 30);
  assert.ok(verdict.callRateFrom - verdict.callRateTo > 0.3);
  assert.match(verdict.reason, /tool\/call_rate fell from 0\.\d\d to 0\.\d\d over steps 11–30/);
});

test('a falling call rate with falling reward is a failing run, not tool collapse', () => {
  const s = steps(25);
  const verdict = detectToolFading(s, s.map((i) => 0.9 - 0.02 * i), s.map((i) => 0.8 - 0.01 * i));
  assert.equal(verdict?.fading, false);
  assert.match(verdict?.reason ?? '', /reward is not rising/);
});

test('a small drift in call rate does not warn, however steady', () => {
  const s = steps(20);
  const verdict = detectToolFading(s, s.map((i) => 0.8 - 0.002 * i), s.map((i) => 0.3 + 0.01 * i));
  assert.equal(verdict?.fading, false);
  assert.match(verdict?.reason ?? '', /less than 0.15/);
});

test('one collapse in a noisy, otherwise flat call rate is not "steady"', () => {
  const s = steps(20);
  const callRate = s.map((i) => (i === 20 ? 0.0 : i % 2 === 0 ? 0.85 : 0.65));
  const verdict = detectToolFading(s, callRate, s.map((i) => 0.3 + 0.01 * i), { window: 20, minDrop: 0.05, maxTau: -0.5 });
  assert.equal(verdict?.fading, false);
  assert.match(verdict?.reason ?? '', /not falling steadily/);
});

test('with fewer rows than the window there is no verdict; rows missing either metric do not count', () => {
  const s = steps(19);
  assert.equal(detectToolFading(s, s.map(() => 0.5), s.map(() => 0.5)), null);
  const t = steps(38); // 19 rows have both metrics
  assert.equal(detectToolFading(t, t.map((i) => (i % 2 ? null : 0.5)), t.map(() => 0.5)), null);
});

test('Kendall τ is +1 for increasing, −1 for decreasing and symmetric under reversal', () => {
  assert.equal(kendallTau([1, 2, 3, 4], [1, 2, 3, 9]), 1);
  assert.equal(kendallTau([1, 2, 3, 4], [9, 3, 2, 1]), -1);
  fc.assert(
    fc.property(fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 2, maxLength: 30 }), (ys) => {
      const xs = ys.map((_, i) => i);
      const tau = kendallTau(xs, ys);
      return tau >= -1 && tau <= 1 && Math.abs(tau + kendallTau(xs, [...ys].reverse())) < 1e-12;
    }),
  );
});
