import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { scoreAnswer } from '../../env/rewards/answer.js';
import { DEFAULT_REWARD_CONFIG } from '../../env/rewards/config.js';

// Years are graded exactly by default; these properties are about relaxed accuracy itself.
const relaxed = { ...DEFAULT_REWARD_CONFIG.answer, exact_years: false };

/** Ways a model writes the same number. */
const formats: ((x: number) => string)[] = [
  (x) => String(x),
  (x) => x.toLocaleString('en-US', { maximumSignificantDigits: 12 }),
  (x) => x.toExponential(10),
  (x) => `${x} kg`,
  (x) => (x < 0 ? `-$${Math.abs(x)}` : `$${x}`),
  (x) => `about ${x}`,
  (x) => `${x}%`,
  (x) => `${(x / 1e6).toPrecision(12)}M`,
];

const magnitude = fc.double({ min: 1e-3, max: 1e9, noNaN: true, noDefaultInfinity: true });
const signed = fc.tuple(magnitude, fc.boolean()).map(([m, negative]) => (negative ? -m : m));

test('property: any formatting of a number within 5% of the gold is correct', () => {
  fc.assert(
    fc.property(signed, fc.double({ min: 0.951, max: 1.049, noNaN: true }), fc.integer({ min: 0, max: formats.length - 1 }), (gold, factor, f) => {
      const format = formats[f] as (x: number) => string;
      const prediction = format(gold * factor);
      const match = scoreAnswer(prediction, String(gold), relaxed);
      assert.equal(match.correct, true, `${prediction} vs ${gold}`);
      assert.equal(match.method, 'numeric');
    }),
    { numRuns: 400 },
  );
});

test('property: a number more than 5% away is wrong however it is written (percent and scale readings included)', () => {
  fc.assert(
    fc.property(signed, fc.double({ min: 1.06, max: 3, noNaN: true }), fc.integer({ min: 0, max: formats.length - 1 }), (gold, factor, f) => {
      const format = formats[f] as (x: number) => string;
      const prediction = format(gold * factor);
      assert.equal(scoreAnswer(prediction, String(gold), relaxed).correct, false, `${prediction} vs ${gold}`);
    }),
    { numRuns: 300 },
  );
});

const label = fc.stringMatching(/^[A-Z][a-z]{2,8}$/u);
const labels = fc.uniqueArray(label, { minLength: 2, maxLength: 6, selector: (s) => s.toLowerCase() });

test('property: list scores ignore the order of items on either side', () => {
  const picked = labels.chain((gold) =>
    fc.tuple(fc.constant(gold), fc.shuffledSubarray([...gold, 'Zzextra', 'Qqother'], { minLength: 1 }), fc.shuffledSubarray(gold, { minLength: gold.length })),
  );
  fc.assert(
    fc.property(picked, fc.nat(), ([gold, prediction, goldReordered], seed) => {
      const predictionReordered = [...prediction.slice(seed % prediction.length), ...prediction.slice(0, seed % prediction.length)];
      const a = scoreAnswer(prediction.join(' || '), gold);
      const b = scoreAnswer(predictionReordered, goldReordered.join(' || '));
      assert.equal(a.score, b.score);
      assert.equal(a.correct, b.correct);
    }),
    { numRuns: 300 },
  );
});

test('property: list F1 is symmetric between prediction and gold for text items', () => {
  fc.assert(
    fc.property(labels, labels, (left, right) => {
      const forward = scoreAnswer(left, right);
      const backward = scoreAnswer(right, left);
      assert.ok(Math.abs(forward.score - backward.score) < 1e-12);
      assert.equal(forward.correct, backward.correct);
      assert.ok(forward.score >= 0 && forward.score <= 1);
    }),
    { numRuns: 300 },
  );
});

test('property: a permutation of the gold list is always fully correct', () => {
  fc.assert(
    fc.property(labels, fc.integer({ min: 1, max: 10 }), (gold, rotation) => {
      const rotated = gold.map((_, i) => gold[(i + rotation) % gold.length] as string);
      assert.deepEqual(scoreAnswer(rotated, gold), { correct: true, score: 1, method: 'list' });
    }),
    { numRuns: 200 },
  );
});
