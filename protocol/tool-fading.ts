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
 *
 * It lives in protocol/ because the host computes it (over every row of a run, which a panel no
 * longer receives) and the dashboard shows it. Columns may be arrays with null for a missing
 * value or the host's typed columns with NaN; both read alike. A 100k-row run takes a few
 * milliseconds: the window slides over a sorted copy instead of sorting every window afresh.
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

function medianOfSorted(sorted: ArrayLike<number>, length: number): number {
  const middle = length >> 1;
  return length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function median(values: number[]): number {
  return medianOfSorted([...values].sort((a, b) => a - b), values.length);
}

/** The first index of `sorted[0, length)` whose value is not below `value`. */
function lowerBound(sorted: Float64Array, length: number, value: number): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The median of each `window` rows ending at row i, for i ≥ window − 1 (index i − window + 1 in the result). */
export function rollingMedian(values: ArrayLike<number>, window: number): number[] {
  const levels: number[] = [];
  if (window < 1 || values.length < window) return levels;
  // The window's values kept sorted: each step removes the row that leaves and inserts the one that enters.
  const sorted = new Float64Array(window);
  for (let i = 0; i < window; i++) sorted[i] = values[i] as number;
  sorted.sort();
  levels.push(medianOfSorted(sorted, window));
  for (let end = window + 1; end <= values.length; end++) {
    const leaving = values[end - window - 1] as number;
    const entering = values[end - 1] as number;
    const at = lowerBound(sorted, window, leaving);
    sorted.copyWithin(at, at + 1, window);
    const to = lowerBound(sorted, window - 1, entering);
    sorted.copyWithin(to + 1, to, window - 1);
    sorted[to] = entering;
    levels.push(medianOfSorted(sorted, window));
  }
  return levels;
}

function levelOf(values: (number | null)[], from: number, to: number): number | null {
  const present = values.slice(from, to).filter((v): v is number => typeof v === 'number');
  return present.length > 0 ? median(present) : null;
}

/** A value that is there: a finite number (null, undefined and NaN all mean the row lacks it). */
function present(value: number | null | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/**
 * `steps`, `callRate` and `reward` are parallel columns (null where a row lacks the value), as in
 * a MetricTable. Returns null when there are too few rows for a verdict.
 */
export function detectToolFading(steps: ArrayLike<number>, callRate: ArrayLike<number | null>, reward: ArrayLike<number | null>, options: FadingOptions = DEFAULT_FADING): FadingVerdict | null {
  // The rows that have a call rate, as parallel columns (objects per row cost more than the median).
  const rowSteps: number[] = [];
  const rates: number[] = [];
  const rewards: (number | null)[] = [];
  let sorted = true;
  for (let i = 0; i < steps.length; i++) {
    const c = callRate[i];
    const step = steps[i];
    if (!present(c) || typeof step !== 'number') continue;
    if (rowSteps.length > 0 && step < (rowSteps[rowSteps.length - 1] as number)) sorted = false;
    const r = reward[i];
    rowSteps.push(step);
    rates.push(c);
    rewards.push(present(r) ? r : null);
  }
  // Rows come in step order unless a resume rewrote steps; then they are put in step order (stably).
  if (!sorted) {
    const order = rowSteps.map((_, i) => i).sort((a, b) => (rowSteps[a] as number) - (rowSteps[b] as number));
    const [s, c, r] = [order.map((i) => rowSteps[i] as number), order.map((i) => rates[i] as number), order.map((i) => rewards[i] ?? null)];
    for (let i = 0; i < s.length; i++) [rowSteps[i], rates[i], rewards[i]] = [s[i] as number, c[i] as number, r[i] ?? null];
  }
  const { window } = options;
  const last = rowSteps.length;
  if (last < 2 * window) return null;
  const levels = rollingMedian(rates, window);
  // Peaks are looked for in windows that end before the current window starts.
  const candidates = levels.length - window;
  let peakIndex = 0;
  for (let i = 1; i < candidates; i++) if ((levels[i] as number) > (levels[peakIndex] as number)) peakIndex = i;
  const verdict = {
    peakSteps: [rowSteps[peakIndex] as number, rowSteps[peakIndex + window - 1] as number] as [number, number],
    currentSteps: [rowSteps[last - window] as number, rowSteps[last - 1] as number] as [number, number],
    callRatePeak: levels[peakIndex] as number,
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
