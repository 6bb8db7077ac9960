/**
 * Data shaping for the dashboard, pure and DOM-free so it is tested without a browser: the wall
 * clock of a run's rows, the CSV export and the duration format. Nothing here touches Chart.js.
 * The charts' series (points, EMA, stats, stage changes) come from the host already shaped
 * (metrics/series, env/runs/metric-series.ts); what both compute goes through
 * protocol/metric-math.ts.
 */
import { type WallClockSource, wallClockSeconds } from '../../protocol/metric-math.js';
import type { MetricTable } from '../../protocol/panel-protocol.js';

export interface Point {
  x: number;
  y: number;
}

export type XAxis = 'step' | 'time';

/**
 * Elapsed wall time of each row in seconds since the run's first row: from the rows' own
 * `time`/`timestamp` when they have them, else the running sum of the seconds per step the
 * trainer writes (STEP_SECONDS_METRICS). `source` says which; null when the run has neither.
 */
export function wallClock(table: MetricTable): { seconds: (number | null)[]; source: WallClockSource } {
  const { seconds, source } = wallClockSeconds(table.times, (metric) => table.columns[metric], table.steps.length);
  return { seconds: Array.from(seconds, (s) => (Number.isNaN(s) ? null : s)), source };
}

export interface SeriesStats {
  min: number;
  max: number;
  last: number;
  count: number;
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
