/**
 * Detects tool use collapsing during RL: the policy learns to answer without calling tools (the
 * collapse reported in DeepEyes issue #55 and OpenThinkIMG issue #13).
 *
 * The call rate is compared with its own best, not with a recent window: a collapse that
 * happened long ago and stays collapsed is still a collapse, and so is one that lowers the
 * reward (under this project's default rewards, dropping the tool usually does). The test, on the
 * training rows that have `tool/call_rate`, in step order:
 *   1. each row's level is the median of the `window` rows ending at it (default 10), so one
 *      noisy row can neither trigger nor hide it;
 *   2. the peak is the highest level reached before the last window; the current level is the
 *      last row's;
 *   3. tool use collapsed when the current level is at least `minDrop` below the peak
 *      (default 0.3, i.e. 30 points of call rate).
 * `reward/mean`'s levels at the peak and now are reported beside it, to tell reward hacking (the
 * reward rose as the calls stopped) from a run that is failing as a whole. With fewer than two
 * windows of rows there is no verdict. Pure: no DOM, no Chart.js.
 */

export interface FadingOptions {
  window: number;
  minDrop: number;
}

export const DEFAULT_FADING: FadingOptions = { window: 10, minDrop: 0.3 };

/** The reward settings that make answering without a tool pay less (rewards section of the run config). */
export const COUNTER_SETTING = 'rewards.tool.no_tool_factor';

export interface FadingVerdict {
  fading: boolean;
  /** Why not, or the numbers behind a warning. */
  reason: string;
  /** The steps of the window whose median is the peak level, and of the current one. */
  peakSteps: [number, number];
  currentSteps: [number, number];
  callRatePeak: number;
  callRateNow: number;
  /** reward/mean's level over the same windows (null where the rows have no reward). */
  rewardAtPeak: number | null;
  rewardNow: number | null;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The median of each `window` rows ending at row i, for i ≥ window − 1 (index i − window + 1 in the result). */
export function rollingMedian(values: number[], window: number): number[] {
  const levels: number[] = [];
  for (let end = window; end <= values.length; end++) levels.push(median(values.slice(end - window, end)));
  return levels;
}

function levelOf(values: (number | null)[], from: number, to: number): number | null {
  const present = values.slice(from, to).filter((v): v is number => typeof v === 'number');
  return present.length > 0 ? median(present) : null;
}

/**
 * `steps`, `callRate` and `reward` are parallel columns (null where a row lacks the value), as in
 * a MetricTable. Returns null when there are too few rows for a verdict.
 */
export function detectToolFading(steps: number[], callRate: (number | null)[], reward: (number | null)[], options: FadingOptions = DEFAULT_FADING): FadingVerdict | null {
  const rows: { step: number; c: number; r: number | null }[] = [];
  for (let i = 0; i < steps.length; i++) {
    const c = callRate[i];
    const r = reward[i];
    const step = steps[i];
    if (typeof c === 'number' && typeof step === 'number') rows.push({ step, c, r: typeof r === 'number' ? r : null });
  }
  rows.sort((a, b) => a.step - b.step);
  const { window } = options;
  if (rows.length < 2 * window) return null;
  const levels = rollingMedian(rows.map((row) => row.c), window);
  // Peaks are looked for in windows that end before the current window starts.
  const candidates = levels.slice(0, levels.length - window);
  let peakIndex = 0;
  candidates.forEach((level, i) => {
    if (level > (candidates[peakIndex] as number)) peakIndex = i;
  });
  const rewards = rows.map((row) => row.r);
  const last = rows.length;
  const verdict = {
    peakSteps: [rows[peakIndex]!.step, rows[peakIndex + window - 1]!.step] as [number, number],
    currentSteps: [rows[last - window]!.step, rows[last - 1]!.step] as [number, number],
    callRatePeak: candidates[peakIndex] as number,
    callRateNow: levels[levels.length - 1] as number,
    rewardAtPeak: levelOf(rewards, peakIndex, peakIndex + window),
    rewardNow: levelOf(rewards, last - window, last),
  };
  const drop = verdict.callRatePeak - verdict.callRateNow;
  if (drop < options.minDrop) {
    return { fading: false, reason: `tool/call_rate is ${drop > 0 ? `${drop.toFixed(2)} below` : 'at or above'} its peak of ${verdict.callRatePeak.toFixed(2)}; a collapse is a drop of ${options.minDrop} or more`, ...verdict };
  }
  const span = (s: [number, number]) => (s[0] === s[1] ? `step ${s[0]}` : `steps ${s[0]}–${s[1]}`);
  let rewardWords = '';
  if (verdict.rewardAtPeak !== null && verdict.rewardNow !== null) {
    const moved = verdict.rewardNow > verdict.rewardAtPeak ? 'rose' : verdict.rewardNow < verdict.rewardAtPeak ? 'fell' : 'stayed';
    rewardWords = `, while reward/mean ${moved} from ${verdict.rewardAtPeak.toFixed(2)} to ${verdict.rewardNow.toFixed(2)}`;
  }
  return {
    fading: true,
    reason: `tool/call_rate fell from ${verdict.callRatePeak.toFixed(2)} (median of ${span(verdict.peakSteps)}) to ${verdict.callRateNow.toFixed(2)} (median of ${span(verdict.currentSteps)})${rewardWords}`,
    ...verdict,
  };
}
