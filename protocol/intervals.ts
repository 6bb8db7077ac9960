/**
 * The Wilson score interval for an accuracy, as the trainer computes it for summary.json and the
 * report (trainer/vistool_trainer/algorithms/intervals.py): it stays inside [0, 1] and keeps its
 * coverage near 0 and 1 and at small n, where the normal approximation does not. The panels draw
 * it as error bars and print it beside counts. Pure.
 */

/** The standard normal's 97.5th percentile: a 95 % two-sided interval. */
export const Z_95 = 1.959963984540054;

/** [low, high] for `successes` out of `n`; [0, 1] when there is nothing to go on (n = 0). */
export function wilsonInterval(successes: number, n: number, z = Z_95): [number, number] {
  if (!Number.isInteger(n) || !Number.isInteger(successes) || n < 0 || successes < 0 || successes > n) {
    throw new RangeError(`successes must be an integer in 0..n; got ${successes} of ${n}`);
  }
  if (n === 0) return [0, 1];
  const p = successes / n;
  const centre = p + (z * z) / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  const denominator = 1 + (z * z) / n;
  // At 0 or n successes the bound is exactly 0 or 1; the formula leaves rounding dust there.
  const low = successes === 0 ? 0 : Math.max(0, (centre - spread) / denominator);
  const high = successes === n ? 1 : Math.min(1, (centre + spread) / denominator);
  return [low, high];
}
