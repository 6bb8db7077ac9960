/**
 * Detects tool use fading during RL: the policy learns to answer without calling tools while
 * reward still rises (the collapse reported in DeepEyes issue #55 and OpenThinkIMG issue #13).
 *
 * The test, on the last `window` training rows that have both `tool/call_rate` and
 * `reward/mean` (default 20), in step order:
 *   1. the call rate fell by at least `minDrop` (default 0.15, i.e. 15 points of call rate),
 *      measured on the least-squares line through the window (fitted first minus fitted last),
 *      so one noisy row cannot trigger or hide it;
 *   2. it fell steadily: Kendall's τ between step and call rate is at most `maxTau`
 *      (default −0.5: without ties, at least 75% of all pairs of rows say it went down);
 *   3. reward rose: the least-squares slope of reward/mean is positive and its Kendall τ
 *      with step is positive.
 * With fewer rows than the window there is no verdict. Pure: no DOM, no Chart.js.
 */

export interface FadingOptions {
  window: number;
  minDrop: number;
  maxTau: number;
}

export const DEFAULT_FADING: FadingOptions = { window: 20, minDrop: 0.15, maxTau: -0.5 };

export interface FadingVerdict {
  fading: boolean;
  /** Why not, or the numbers behind a warning. */
  reason: string;
  fromStep: number;
  toStep: number;
  callRateFrom: number;
  callRateTo: number;
  rewardFrom: number;
  rewardTo: number;
  callRateTau: number;
  rewardTau: number;
}

function leastSquares(xs: number[], ys: number[]): { slope: number; intercept: number } {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] as number) - mx;
    sxy += dx * ((ys[i] as number) - my);
    sxx += dx * dx;
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  return { slope, intercept: my - slope * mx };
}

/** Kendall's τ-a between x and y: (concordant − discordant) pairs over all pairs. */
export function kendallTau(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  let score = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      score += Math.sign((xs[j] as number) - (xs[i] as number)) * Math.sign((ys[j] as number) - (ys[i] as number));
    }
  }
  return score / ((n * (n - 1)) / 2);
}

/**
 * `steps`, `callRate` and `reward` are parallel columns (null where a row lacks the value), as in
 * a MetricTable. Returns null when there are too few rows for a verdict.
 */
export function detectToolFading(steps: number[], callRate: (number | null)[], reward: (number | null)[], options: FadingOptions = DEFAULT_FADING): FadingVerdict | null {
  const rows: { step: number; c: number; r: number }[] = [];
  for (let i = 0; i < steps.length; i++) {
    const c = callRate[i];
    const r = reward[i];
    const step = steps[i];
    if (typeof c === 'number' && typeof r === 'number' && typeof step === 'number') rows.push({ step, c, r });
  }
  rows.sort((a, b) => a.step - b.step);
  if (rows.length < options.window) return null;
  const recent = rows.slice(-options.window);
  const xs = recent.map((row) => row.step);
  const cs = recent.map((row) => row.c);
  const rs = recent.map((row) => row.r);
  const first = xs[0] as number;
  const last = xs[xs.length - 1] as number;
  const callFit = leastSquares(xs, cs);
  const rewardFit = leastSquares(xs, rs);
  const verdict = {
    fromStep: first,
    toStep: last,
    callRateFrom: callFit.intercept + callFit.slope * first,
    callRateTo: callFit.intercept + callFit.slope * last,
    rewardFrom: rewardFit.intercept + rewardFit.slope * first,
    rewardTo: rewardFit.intercept + rewardFit.slope * last,
    callRateTau: kendallTau(xs, cs),
    rewardTau: kendallTau(xs, rs),
  };
  const drop = verdict.callRateFrom - verdict.callRateTo;
  if (drop < options.minDrop) return { fading: false, reason: `call rate fell by ${drop.toFixed(3)}, less than ${options.minDrop}`, ...verdict };
  if (verdict.callRateTau > options.maxTau) return { fading: false, reason: `call rate is not falling steadily (Kendall τ ${verdict.callRateTau.toFixed(2)} > ${options.maxTau})`, ...verdict };
  if (!(rewardFit.slope > 0 && verdict.rewardTau > 0)) return { fading: false, reason: 'reward is not rising, so this looks like a failing run, not tool collapse', ...verdict };
  return { fading: true, reason: `tool/call_rate fell from ${verdict.callRateFrom.toFixed(2)} to ${verdict.callRateTo.toFixed(2)} over steps ${first}–${last} while reward/mean rose from ${verdict.rewardFrom.toFixed(2)} to ${verdict.rewardTo.toFixed(2)}`, ...verdict };
}
