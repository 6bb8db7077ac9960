/**
 * How a metric's points become one chart line of `metrics/series`: sorted by x, the requested
 * range found by binary search (with the point on either side, so a zoomed line reaches the
 * chart's edges), the debiased EMA over every point, then the min/max downsampling
 * (downsample.ts) of both lines, and the stats over every point. The panel host
 * (env/runs/metric-series.ts, which keeps the sorted points as rows are appended) and a static
 * bundle's page (webview/shared/static-backend.ts) both shape lines with these functions.
 *
 * Pure: no DOM, no Node.
 */
import { minMaxIndices } from './downsample.js';
import { debiasedEma } from './metric-math.js';
import type { MetricSeries, MetricSeriesParams, SeriesPoints } from './panel/metrics.js';

/** A metric's points with both an x and a value, in x order, and the values' range. */
export interface SortedPoints {
  px: Float64Array;
  py: Float64Array;
  min: number;
  max: number;
}

export type SeriesShape = Pick<MetricSeriesParams, 'smoothing' | 'maxPoints' | 'range'>;

/** The first index of sorted[0, length) whose value is ≥ value (or > value when `after`). */
export function lowerBound(sorted: ArrayLike<number>, length: number, value: number, after: boolean): number {
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

export function pickPoints(xs: ArrayLike<number>, ys: ArrayLike<number>, indices: number[]): SeriesPoints {
  return { x: indices.map((i) => xs[i] as number), y: indices.map((i) => ys[i] as number) };
}

/** Rows i with both xs[i] and values[i] (NaN: none), stably sorted by x. */
export function sortedPoints(xs: ArrayLike<number>, values: ArrayLike<number>): SortedPoints {
  const order: number[] = [];
  for (let i = 0; i < values.length; i++) if (!Number.isNaN(xs[i] as number) && !Number.isNaN(values[i] as number)) order.push(i);
  order.sort((a, b) => (xs[a] as number) - (xs[b] as number) || a - b);
  const px = Float64Array.from(order, (i) => xs[i] as number);
  const py = Float64Array.from(order, (i) => values[i] as number);
  let min = Infinity;
  let max = -Infinity;
  for (const y of py) [min, max] = [Math.min(min, y), Math.max(max, y)];
  return { px, py, min, max };
}

/** The line of a metric without points (a metric the run lacks, or one never logged with an x). */
export function emptySeries(metric: string, smoothing: number): MetricSeries {
  return { metric, raw: { x: [], y: [] }, smoothed: smoothing > 0 ? { x: [], y: [] } : null, stats: null, inRange: 0 };
}

/**
 * A metric's chart line from its sorted points. `rawLine` lets a caller keep the downsampled raw
 * line of a window [from, to) (a slider move asks for the same one again); without it the line is
 * computed each time.
 */
export function shapeSeries(
  metric: string,
  points: SortedPoints,
  shape: SeriesShape,
  rawLine: (from: number, to: number, compute: () => SeriesPoints) => SeriesPoints = (_from, _to, compute) => compute(),
): MetricSeries {
  const { px, py, min, max } = points;
  const count = px.length;
  if (count === 0) return emptySeries(metric, shape.smoothing);
  let from = 0;
  let to = count;
  if (shape.range) {
    from = lowerBound(px, count, shape.range.min, false);
    to = lowerBound(px, count, shape.range.max, true);
  }
  const inRange = to - from;
  // One point beyond each edge, so a zoomed line runs to the sides of the chart.
  if (shape.range) {
    from = Math.max(0, from - 1);
    to = Math.min(count, to + 1);
  }
  const smoothed = shape.smoothing > 0 ? debiasedEma(py, shape.smoothing) : null;
  return {
    metric,
    raw: rawLine(from, to, () => pickPoints(px, py, minMaxIndices(px, py, from, to, shape.maxPoints))),
    smoothed: smoothed ? pickPoints(px, smoothed, minMaxIndices(px, smoothed, from, to, shape.maxPoints)) : null,
    stats: { min, max, last: py[count - 1] as number, count },
    inRange,
  };
}
