/**
 * A run's training metrics: whole rows (exports, hosts' own summaries) and the charts' series,
 * shaped by the host so an answer's size does not grow with the run.
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { hasFields, isFiniteNumber, isNonNegativeInteger, isNumberInRange, isString, isStringArray, optional } from '../guards.js';
import type { WallClockSource } from '../metric-math.js';
import type { FadingVerdict } from '../tool-fading.js';
import { request } from './messages.js';

/**
 * Training metric rows in columns: `steps[i]`, `times[i]` and `columns[name][i]` describe row i.
 * Null where a row lacks the metric. `times` are Unix seconds from the row's `time` or
 * `timestamp` field (a number, or an ISO date string), null when it has neither.
 */
export interface MetricTable {
  steps: number[];
  times: (number | null)[];
  /** Each row's `stage` ("sft", "rl", ...; null when the line has none): the dashboard marks where it changes. */
  stages: (string | null)[];
  columns: Record<string, (number | null)[]>;
}

/** Points of a chart line as two columns, x ascending. */
export interface SeriesPoints {
  x: number[];
  y: number[];
}

/** One metric of one run, shaped by the host for a chart (metrics/series). */
export interface MetricSeries {
  metric: string;
  /**
   * The values against the chosen x axis, rows without one left out: every point when they fit
   * in `maxPoints`, else the first, the last and each bucket's lowest and highest point
   * (protocol/downsample.ts has the exact rule).
   */
  raw: SeriesPoints;
  /** The debiased EMA computed over every point, then downsampled the same way; null when smoothing is 0. */
  smoothed: SeriesPoints | null;
  /** Over every point of the series, whatever the range: what the chart's stats line shows. */
  stats: { min: number; max: number; last: number; count: number } | null;
  /** Points inside the requested range (all of them without one) before downsampling. */
  inRange: number;
}

export interface MetricSeriesParams {
  runId: string;
  metrics: string[];
  xAxis: 'step' | 'time';
  /** EMA weight, 0 for none. */
  smoothing: number;
  /** Most points per line: about the chart's width in pixels. */
  maxPoints: number;
  /** Only x in [min, max] (a zoomed chart), plus the point on either side so the line reaches the edges. */
  range?: { min: number; max: number };
}

export interface MetricSeriesResult {
  runId: string;
  /** The training rows the series were computed from. */
  rows: number;
  /** What x is: the step, or the wall clock from the rows' time or from their seconds per step (null: the run has neither). */
  xSource: 'step' | WallClockSource;
  series: MetricSeries[];
  /** Where the run changes stage, on the chosen x axis. */
  phases: { x: number; stage: string }[];
  /** Whether tool use collapsed, judged on every row (protocol/tool-fading.ts); null with too few rows. */
  toolFading: FadingVerdict | null;
  /**
   * While the host still reads a big metrics.jsonl: the lines beyond x `after` are sampled ones
   * (`rows` of them), drawn until the rows there are read. Only on the step axis; `rows`, the
   * tool-fading verdict and the stats' count and last are the rows read's (min and max include
   * the samples).
   */
  preview?: { after: number; rows: number };
}

export interface MetricRowsParams {
  runId: string;
  from: number;
  columns?: string[];
}

export interface MetricRowsResult {
  runId: string;
  from: number;
  total: number;
  table: MetricTable;
}

/**
 * Every row from `from` on, with every metric or only those in `columns`. A dashboard asks for
 * metrics/series to draw; whole rows are for exports and for hosts' own summaries.
 */
export const MetricRowsRequest = request<MetricRowsParams, MetricRowsResult>()('metrics/rows', (p): p is MetricRowsParams =>
  hasFields(p, { runId: isString, from: isNonNegativeInteger, columns: optional(isStringArray) }),
);

/** Most points per line a panel may ask for. */
export const MAX_SERIES_POINTS = 20_000;

/** The charts' lines of one run, downsampled by the host so the answer stays small however long the run. */
export const MetricSeriesRequest = request<MetricSeriesParams, MetricSeriesResult>()('metrics/series', (p): p is MetricSeriesParams =>
  hasFields(p, {
    runId: isString,
    metrics: isStringArray,
    xAxis: (v) => v === 'step' || v === 'time',
    smoothing: (v) => isNumberInRange(v, 0, 0.999),
    maxPoints: (v) => isNonNegativeInteger(v) && v >= 4 && v <= MAX_SERIES_POINTS,
    range: optional((r) => hasFields(r, { min: isFiniteNumber, max: isFiniteNumber })),
  }),
);
