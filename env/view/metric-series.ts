/**
 * Answers metrics/series for one run: each asked metric against the step or the wall clock,
 * sorted by x, its debiased EMA over every point, its stats, the requested range, and then at
 * most `maxPoints` points per line (downsample.ts). Also where the run changes stage and whether
 * tool use collapsed, both judged on every row. The dashboard used to get every row and do this
 * itself; at 100k rows that was a 42 MB answer and seconds of work in the page per redraw.
 *
 * What is the same for every metric of one state of the data (the x column, the stage changes,
 * the tool-fading verdict) is kept until the store's rows change.
 */
import { debiasedEma, stageChanges, wallClockSeconds } from '../../protocol/metric-math.js';
import type { MetricSeries, MetricSeriesParams, MetricSeriesResult, SeriesPoints } from '../../protocol/panel-protocol.js';
import { detectToolFading, type FadingVerdict } from '../../protocol/tool-fading.js';
import { minMaxIndices } from './downsample.js';
import type { MetricsStore } from './metrics-store.js';

type Axis = MetricSeriesParams['xAxis'];

interface AxisData {
  xs: Float64Array;
  source: MetricSeriesResult['xSource'];
  phases: MetricSeriesResult['phases'];
}

/** The first index of sorted[0, length) whose value is ≥ value (or > value when `after`). */
function bound(sorted: Float64Array, length: number, value: number, after: boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const v = sorted[mid] as number;
    if (v < value || (after && v === value)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function pick(xs: Float64Array, ys: ArrayLike<number>, indices: number[]): SeriesPoints {
  return { x: indices.map((i) => xs[i] as number), y: indices.map((i) => ys[i] as number) };
}

export class MetricSeriesSource {
  private stamp = '';
  private axes = new Map<Axis, AxisData>();
  private fading: FadingVerdict | null | undefined;

  constructor(private readonly store: MetricsStore) {}

  query(params: Omit<MetricSeriesParams, 'runId'>): Omit<MetricSeriesResult, 'runId'> {
    this.forgetIfChanged();
    const axis = this.axis(params.xAxis);
    return {
      rows: this.store.rowCount,
      xSource: axis.source,
      series: params.metrics.map((metric) => this.series(metric, axis.xs, params)),
      phases: axis.phases,
      toolFading: this.toolFading(),
    };
  }

  private series(metric: string, xs: Float64Array, params: Omit<MetricSeriesParams, 'runId'>): MetricSeries {
    const values = this.store.column(metric);
    const empty: MetricSeries = { metric, raw: { x: [], y: [] }, smoothed: params.smoothing > 0 ? { x: [], y: [] } : null, stats: null, inRange: 0 };
    if (!values) return empty;
    // The rows that have both an x and the value, in x order (a resumed run may have rewritten steps).
    let px = new Float64Array(values.length);
    let py = new Float64Array(values.length);
    let count = 0;
    let sorted = true;
    for (let i = 0; i < values.length; i++) {
      const x = xs[i] as number;
      const y = values[i] as number;
      if (Number.isNaN(x) || Number.isNaN(y)) continue;
      if (count > 0 && x < (px[count - 1] as number)) sorted = false;
      px[count] = x;
      py[count] = y;
      count += 1;
    }
    if (count === 0) return empty;
    px = px.subarray(0, count);
    py = py.subarray(0, count);
    if (!sorted) {
      const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => (px[a] as number) - (px[b] as number));
      px = Float64Array.from(order, (i) => px[i] as number);
      py = Float64Array.from(order, (i) => py[i] as number);
    }
    let min = Infinity;
    let max = -Infinity;
    for (const y of py) {
      if (y < min) min = y;
      if (y > max) max = y;
    }
    let from = 0;
    let to = count;
    if (params.range) {
      from = bound(px, count, params.range.min, false);
      to = bound(px, count, params.range.max, true);
    }
    const inRange = to - from;
    // One point beyond each edge, so a zoomed line runs to the sides of the chart.
    if (params.range && inRange >= 0) {
      from = Math.max(0, from - 1);
      to = Math.min(count, to + 1);
    }
    const smoothedValues = params.smoothing > 0 ? debiasedEma(py, params.smoothing) : null;
    return {
      metric,
      raw: pick(px, py, minMaxIndices(px, py, from, to, params.maxPoints)),
      smoothed: smoothedValues ? pick(px, smoothedValues, minMaxIndices(px, smoothedValues, from, to, params.maxPoints)) : null,
      stats: { min, max, last: py[count - 1] as number, count },
      inRange,
    };
  }

  private axis(xAxis: Axis): AxisData {
    let data = this.axes.get(xAxis);
    if (!data) {
      const store = this.store;
      const rows = store.rowCount;
      const clock = xAxis === 'time' ? wallClockSeconds(store.timeColumn(), store.column('timing/step_s'), rows) : null;
      const xs = clock ? clock.seconds : store.stepColumn();
      data = { xs, source: clock ? clock.source : 'step', phases: stageChanges(store.stageColumn(), xs) };
      this.axes.set(xAxis, data);
    }
    return data;
  }

  private toolFading(): FadingVerdict | null {
    if (this.fading === undefined) {
      const store = this.store;
      const reward = store.column('reward/mean') ?? store.column('critic/score/mean') ?? [];
      this.fading = detectToolFading(store.stepColumn(), store.column('tool/call_rate') ?? [], reward);
    }
    return this.fading;
  }

  private forgetIfChanged(): void {
    const stamp = `${this.store.generation}:${this.store.rowCount}`;
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    this.axes.clear();
    this.fading = undefined;
  }
}
