/**
 * Data shaping for the dashboard, pure and DOM-free so it is tested without a browser: growing a
 * run's metric table as rows arrive, the x axis (step or wall time), EMA smoothing, min/max/last,
 * and CSV export. Nothing here touches Chart.js. The charts' series come from the host already
 * shaped (metrics/series); what both compute goes through protocol/metric-math.ts.
 */
import { debiasedEma, stageChanges, wallClockSeconds } from '../../protocol/metric-math.js';
import type { MetricTable } from '../../protocol/panel-protocol.js';

export interface Point {
  x: number;
  y: number;
}

export type XAxis = 'step' | 'time';

export function emptyTable(): MetricTable {
  return { steps: [], times: [], stages: [], columns: {} };
}

/** Appends `addition` (rows that follow `table`'s last row) in place; columns new to either side are padded with null. */
export function appendRows(table: MetricTable, addition: MetricTable): void {
  const before = table.steps.length;
  const added = addition.steps.length;
  table.steps.push(...addition.steps);
  table.times.push(...addition.times);
  table.stages.push(...addition.stages);
  for (const [name, values] of Object.entries(addition.columns)) {
    const column = (table.columns[name] ??= new Array<number | null>(before).fill(null));
    column.push(...values);
  }
  for (const column of Object.values(table.columns)) while (column.length < before + added) column.push(null);
}

/**
 * Elapsed wall time of each row in seconds since the run's first row: from the rows' own
 * `time`/`timestamp` when they have them, else the running sum of `timing/step_s` (what the
 * trainer writes). `source` says which; null when the run has neither.
 */
export function wallClock(table: MetricTable): { seconds: (number | null)[]; source: 'time' | 'timing/step_s' | null } {
  const { seconds, source } = wallClockSeconds(table.times, table.columns['timing/step_s'], table.steps.length);
  return { seconds: Array.from(seconds, (s) => (Number.isNaN(s) ? null : s)), source };
}

/** Where a run moves from one stage to the next (SFT → RL): the x of the first row of each new stage. */
export function phaseChanges(table: MetricTable, xAxis: XAxis): { x: number; stage: string }[] {
  return stageChanges(table.stages, xAxis === 'step' ? table.steps : wallClock(table).seconds);
}

/** The points of one metric against the chosen x axis, rows without a value left out, sorted by x. */
export function metricPoints(table: MetricTable, metric: string, xAxis: XAxis): Point[] {
  const values = table.columns[metric];
  if (!values) return [];
  const xs = xAxis === 'step' ? table.steps : wallClock(table).seconds;
  const points: Point[] = [];
  let sorted = true;
  for (let i = 0; i < values.length; i++) {
    const y = values[i];
    const x = xs[i];
    if (y === null || y === undefined || x === null || x === undefined) continue;
    const last = points[points.length - 1];
    if (last && x < last.x) sorted = false;
    points.push({ x, y });
  }
  // The decimation plugin needs points in x order; a resumed run may have rewritten steps.
  if (!sorted) points.sort((a, b) => a.x - b.x);
  return points;
}

/**
 * Exponential moving average with TensorBoard's debiasing, so the curve does not start at zero:
 * s_t = w·s_{t−1} + (1−w)·y_t, shown as s_t / (1 − w^t). `weight` 0 returns the points unchanged.
 */
export function smooth(points: Point[], weight: number): Point[] {
  if (!(weight > 0)) return points;
  const ys = debiasedEma(points.map((p) => p.y), weight);
  return points.map((p, i) => ({ x: p.x, y: ys[i] as number }));
}

export interface SeriesStats {
  min: number;
  max: number;
  last: number;
  count: number;
}

export function seriesStats(points: Point[]): SeriesStats | null {
  const lastPoint = points[points.length - 1];
  if (!lastPoint) return null;
  let min = Infinity;
  let max = -Infinity;
  for (const p of points) {
    if (p.y < min) min = p.y;
    if (p.y > max) max = p.y;
  }
  return { min, max, last: lastPoint.y, count: points.length };
}

function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV: a row per (run, metric row) with `run,step,time_s,<metric>...`; empty cells where a run lacks a metric. */
export function toCsv(runs: { name: string; table: MetricTable }[], metrics: string[]): string {
  const lines = [['run', 'step', 'time_s', ...metrics].map(csvField).join(',')];
  for (const { name, table } of runs) {
    const { seconds } = wallClock(table);
    for (let i = 0; i < table.steps.length; i++) {
      const cells = [name, table.steps[i] ?? null, seconds[i] ?? null, ...metrics.map((m) => table.columns[m]?.[i] ?? null)];
      lines.push(cells.map(csvField).join(','));
    }
  }
  return lines.join('\n') + '\n';
}

/** Seconds as h:mm:ss (or m:ss under an hour), for the wall-time axis. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`;
}
