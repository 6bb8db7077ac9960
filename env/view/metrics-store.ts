/**
 * A run's metrics.jsonl, held in memory as columns and kept current by tailing the file.
 * Training lines become rows (step, time, every numeric field); lines with `"stage": "eval"`
 * (the trainer's held-out evaluations) become EvalResults instead of points on the curves.
 * Lines that are not JSON objects are counted as problems, never fatal: a dashboard must keep
 * showing a run whose file has one bad line.
 *
 * Never writes to the run directory.
 */
import type { EvalResult, MetricTable } from '../../protocol/panel-protocol.js';
import { JsonlTail } from './jsonl-tail.js';

/** Fields that describe a row rather than measure something. */
const ROW_FIELDS = new Set(['step', 'time', 'timestamp', 'stage', 'label']);

/** Unix seconds from a `time`/`timestamp` value: seconds, milliseconds, or an ISO date string. */
export function rowTime(row: Record<string, unknown>): number | null {
  const value = row.time ?? row.timestamp;
  if (typeof value === 'number' && Number.isFinite(value)) return value > 1e11 ? value / 1000 : value;
  if (typeof value === 'string') {
    const parsed = Date.parse(value);
    return Number.isNaN(parsed) ? null : parsed / 1000;
  }
  return null;
}

export class MetricsStore {
  private readonly tail: JsonlTail;
  private steps: number[] = [];
  private times: (number | null)[] = [];
  private stages: (string | null)[] = [];
  private columns = new Map<string, (number | null)[]>();
  private evals: EvalResult[] = [];
  private badLines = 0;
  private firstBadLine: number | null = null;

  constructor(readonly path: string) {
    this.tail = new JsonlTail(path);
  }

  get rowCount(): number {
    return this.steps.length;
  }

  get names(): string[] {
    return [...this.columns.keys()].sort();
  }

  get evaluations(): EvalResult[] {
    return this.evals;
  }

  get problems(): string[] {
    if (this.badLines === 0) return [];
    return [`metrics.jsonl: ${this.badLines} line(s) are not JSON objects and were skipped (first at line ${(this.firstBadLine ?? 0) + 1})`];
  }

  /** Reads what was appended since the last call; true when anything changed. */
  async refresh(): Promise<boolean> {
    const { reset, lines } = await this.tail.read();
    if (reset) this.clear();
    for (const { line, text } of lines) {
      let row: unknown;
      try {
        row = JSON.parse(text);
      } catch {
        row = null;
      }
      if (typeof row !== 'object' || row === null || Array.isArray(row)) {
        this.badLines += 1;
        this.firstBadLine ??= line;
        continue;
      }
      this.add(row as Record<string, unknown>);
    }
    return reset || lines.length > 0;
  }

  /** Rows from index `from` to the end, as columns. */
  slice(from: number): MetricTable {
    const columns: Record<string, (number | null)[]> = {};
    for (const [name, values] of this.columns) columns[name] = values.slice(from);
    return { steps: this.steps.slice(from), times: this.times.slice(from), stages: this.stages.slice(from), columns };
  }

  private add(row: Record<string, unknown>): void {
    const step = typeof row.step === 'number' && Number.isFinite(row.step) ? row.step : this.steps.length;
    if (row.stage === 'eval') {
      const metrics: Record<string, number> = {};
      for (const [key, value] of Object.entries(row)) if (!ROW_FIELDS.has(key) && typeof value === 'number' && Number.isFinite(value)) metrics[key] = value;
      const label = typeof row.label === 'string' && row.label !== '' ? row.label : `step ${step}`;
      this.evals = [...this.evals.filter((e) => e.label !== label), { label, step, source: 'metrics.jsonl', metrics }];
      return;
    }
    const index = this.steps.length;
    this.steps.push(step);
    this.times.push(rowTime(row));
    this.stages.push(typeof row.stage === 'string' && row.stage !== '' ? row.stage : null);
    for (const [key, value] of Object.entries(row)) {
      if (ROW_FIELDS.has(key) || typeof value !== 'number' || !Number.isFinite(value)) continue;
      let column = this.columns.get(key);
      if (!column) {
        column = new Array<number | null>(index).fill(null);
        this.columns.set(key, column);
      }
      column.push(value);
    }
    for (const column of this.columns.values()) if (column.length === index) column.push(null);
  }

  private clear(): void {
    this.steps = [];
    this.times = [];
    this.stages = [];
    this.columns = new Map();
    this.evals = [];
    this.badLines = 0;
    this.firstBadLine = null;
  }
}
