/**
 * The arithmetic on metric columns that the host and the dashboard must do alike: the wall-clock
 * x axis, TensorBoard's debiased EMA, and where a run changes stage. The host computes a chart's
 * series from every row of a run (env/runs/metric-series.ts) and the dashboard exports the rows
 * as CSV (webview/dashboard/series.ts); both call these, so a curve and its CSV never disagree.
 *
 * Columns are arrays with null for a missing value (a MetricTable) or the host's typed columns
 * with NaN; both read alike. Pure: no DOM, no Node.
 */

/** A value a row lacks: null or undefined in a MetricTable, NaN in a typed column. */
export function isMissing(value: number | null | undefined): value is null | undefined {
  return value === null || value === undefined || Number.isNaN(value);
}

/**
 * The seconds each step took, by the name each trainer writes: vistool's (`timing/step_s`) and
 * veRL's (`timing_s/step`, whose file logger writes no time of day). The first a run has is used.
 */
export const STEP_SECONDS_METRICS = ['timing/step_s', 'timing_s/step'] as const;
export type StepSecondsMetric = (typeof STEP_SECONDS_METRICS)[number];
export type WallClockSource = 'time' | StepSecondsMetric | null;

/**
 * Elapsed wall time of each of `rows` rows in seconds since the run's first timed row: from the
 * rows' own `time`/`timestamp` when any row has one, else the running sum of the first of
 * STEP_SECONDS_METRICS the run has (`column` looks one up). NaN where a row has no time; all NaN
 * when the run has neither.
 */
export function wallClockSeconds(
  times: ArrayLike<number | null>,
  column: (metric: StepSecondsMetric) => ArrayLike<number | null> | undefined,
  rows: number,
): { seconds: Float64Array; source: WallClockSource } {
  const seconds = new Float64Array(rows).fill(NaN);
  let first: number | null = null;
  for (let i = 0; i < rows; i++) {
    const t = times[i];
    if (!isMissing(t)) {
      first = t;
      break;
    }
  }
  if (first !== null) {
    for (let i = 0; i < rows; i++) {
      const t = times[i];
      if (!isMissing(t)) seconds[i] = t - first;
    }
    return { seconds, source: 'time' };
  }
  for (const metric of STEP_SECONDS_METRICS) {
    const stepSeconds = column(metric);
    let any = false;
    if (stepSeconds) for (let i = 0; i < rows && !any; i++) any = !isMissing(stepSeconds[i]);
    if (!any || !stepSeconds) continue;
    let total = 0;
    for (let i = 0; i < rows; i++) {
      const v = stepSeconds[i];
      seconds[i] = total += isMissing(v) ? 0 : v;
    }
    return { seconds, source: metric };
  }
  return { seconds, source: null };
}

/**
 * Exponential moving average with TensorBoard's debiasing, so the curve does not start at zero:
 * s_t = w·s_{t−1} + (1−w)·y_t, shown as s_t / (1 − w^t). `weight` is capped at 0.999.
 */
export function debiasedEma(ys: ArrayLike<number>, weight: number): Float64Array {
  const w = Math.min(weight, 0.999);
  const out = new Float64Array(ys.length);
  let last = 0;
  let debias = 0;
  for (let i = 0; i < ys.length; i++) {
    last = last * w + (1 - w) * (ys[i] as number);
    debias = debias * w + (1 - w);
    out[i] = last / debias;
  }
  return out;
}

/**
 * Where a run moves from one stage to the next (SFT → RL): the x of the first row of each new
 * stage. Rows without a stage change nothing; a change on a row without an x is not marked.
 */
export function stageChanges(stages: ArrayLike<string | null>, xs: ArrayLike<number | null>): { x: number; stage: string }[] {
  const changes: { x: number; stage: string }[] = [];
  let previous: string | null = null;
  for (let i = 0; i < stages.length; i++) {
    const stage = stages[i] ?? null;
    if (stage === null) continue;
    const x = xs[i];
    if (previous !== null && stage !== previous && !isMissing(x)) changes.push({ x, stage });
    previous = stage;
  }
  return changes;
}
