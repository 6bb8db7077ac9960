/**
 * A run's metrics.jsonl, held in memory as columns and kept current by tailing the file.
 * Training lines become rows (step, time, stage, every numeric field); lines with
 * `"stage": "eval"` (the trainer's held-out evaluations) become EvalResults instead of points on
 * the curves. Lines that are not JSON objects are counted as problems, never fatal: a dashboard
 * must keep showing a run whose file has one bad line.
 *
 * veRL's `file` logger (verl/utils/tracking.py, FileLogger; VERL_FILE_LOGGER_PATH names the file)
 * writes each step as `{"step": N, "data": {metric: value, ...}}`. Such a line (exactly those two
 * keys, `data` an object) is read as the row `{step: N, ...data}`. veRL writes no time and no
 * stage into it, so those rows have none: the step axis draws them, and the wall-clock axis says
 * the run has no time (a time guessed from when the reader saw the line would be wrong for a file
 * read after the run). Validation metrics (`val-core/...`, `val-aux/...`) are columns like any
 * other, with points at the steps veRL validated.
 *
 * Columns are Float64Arrays with NaN where a row lacks the metric (non-finite values are never
 * stored, so NaN is free to mean "missing"): 100k rows of 40 metrics take about 40 MB instead of
 * the several hundred a JavaScript array of boxed numbers and nulls took. The file is read in
 * slices, each a few milliseconds of parsing, so a host can answer panels while a 100 MB file
 * loads; `refresh(maxBytes)` stops after about that many bytes and `loading` says how far it got.
 *
 * Never writes to the run directory.
 */
import type { EvalResult, MetricTable } from '../../protocol/panel-protocol.js';
import { JsonlTail } from './jsonl-tail.js';

/** Fields that describe a row rather than measure something. */
const ROW_FIELDS = new Set(['step', 'time', 'timestamp', 'stage', 'label']);

/** Bytes parsed between two turns of the event loop: a few milliseconds of JSON.parse. */
const SLICE_BYTES = 1 << 20;
const FIRST_CAPACITY = 1024;

/**
 * The row a parsed line stands for: veRL's file-logger line `{"step": N, "data": {...}}` flattened
 * (its `step` wins over a `step` inside `data`), any other object as it is.
 */
export function metricRow(line: Record<string, unknown>): Record<string, unknown> {
  const data = line.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return line;
  for (const key in line) if (key !== 'step' && key !== 'data') return line;
  return { ...(data as Record<string, unknown>), step: line.step };
}

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

/** A metric's values (NaN where a row lacks it) and, over the values present, their count, min and max. */
interface Column {
  values: Float64Array;
  count: number;
  min: number;
  max: number;
}

/** How many rows of the run have a value of a metric, and its range: whether it varies (the dashboard's defaults). */
export interface ColumnStats {
  count: number;
  min: number;
  max: number;
}

function grown(column: Float64Array, capacity: number): Float64Array<ArrayBuffer> {
  const bigger = new Float64Array(capacity).fill(NaN);
  bigger.set(column);
  return bigger;
}

export class MetricsStore {
  private readonly tail: JsonlTail;
  private length = 0;
  private capacity = 0;
  private steps: Float64Array<ArrayBuffer> = new Float64Array(0);
  private times: Float64Array<ArrayBuffer> = new Float64Array(0);
  /** Each row's stage as an index into `stageNames`, −1 for none (a few distinct strings, 100k rows). */
  private stageCodes = new Int32Array(0);
  private stageNames: string[] = [];
  private columns = new Map<string, Column>();
  private sortedNames: string[] | null = null;
  private evals: EvalResult[] = [];
  private badLines = 0;
  private firstBadLine: number | null = null;
  private unread = false;
  private epoch = 0;
  /** Refreshes run one at a time: two callers must not parse the same bytes twice. */
  private refreshing: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {
    this.tail = new JsonlTail(path);
  }

  get rowCount(): number {
    return this.length;
  }

  /** Changes whenever the file was replaced and read again: with rowCount, it names one state of the data. */
  get generation(): number {
    return this.epoch;
  }

  get names(): string[] {
    this.sortedNames ??= [...this.columns.keys()].sort();
    return this.sortedNames;
  }

  get evaluations(): EvalResult[] {
    return this.evals;
  }

  /** While the last refresh stopped short of the end of the file: how far it read. */
  get loading(): { bytesRead: number; bytesTotal: number } | null {
    return this.unread ? { bytesRead: this.tail.position, bytesTotal: this.tail.size } : null;
  }

  get problems(): string[] {
    if (this.badLines === 0) return [];
    return [`metrics.jsonl: ${this.badLines} line(s) are not JSON objects and were skipped (first at line ${(this.firstBadLine ?? 0) + 1})`];
  }

  /**
   * Reads what was appended since the last call, all of it or about `maxBytes` of it; true when
   * anything changed. Between slices the event loop runs, so other requests are answered.
   */
  refresh(maxBytes = Infinity): Promise<boolean> {
    const next = this.refreshing.then(() => this.readSlices(maxBytes));
    this.refreshing = next.catch(() => undefined);
    return next;
  }

  /** The values of a metric for rows [0, rowCount), NaN where a row lacks it; undefined for a metric no row has. */
  column(name: string): Float64Array | undefined {
    return this.columns.get(name)?.values.subarray(0, this.length);
  }

  /** Every metric's count, min and max over the rows read (kept as rows are added: no pass over the rows). */
  columnStats(): Record<string, ColumnStats> {
    const stats: Record<string, ColumnStats> = {};
    for (const [name, { count, min, max }] of this.columns) stats[name] = { count, min, max };
    return stats;
  }

  stepColumn(): Float64Array {
    return this.steps.subarray(0, this.length);
  }

  /** Unix seconds of each row, NaN where a row has no time. */
  timeColumn(): Float64Array {
    return this.times.subarray(0, this.length);
  }

  stageColumn(): (string | null)[] {
    const names = this.stageNames;
    return Array.from(this.stageCodes.subarray(0, this.length), (code) => (code < 0 ? null : (names[code] as string)));
  }

  /** Rows from index `from` to the end, as columns; only the metrics in `names` when it is given. */
  slice(from: number, names?: readonly string[]): MetricTable {
    const start = Math.min(from, this.length);
    const nullable = (values: Float64Array) => Array.from(values.subarray(start, this.length), (v) => (Number.isNaN(v) ? null : v));
    const columns: Record<string, (number | null)[]> = {};
    for (const [name, { values }] of this.columns) if (!names || names.includes(name)) columns[name] = nullable(values);
    return { steps: Array.from(this.steps.subarray(start, this.length)), times: nullable(this.times), stages: this.stageColumn().slice(start), columns };
  }

  private async readSlices(maxBytes: number): Promise<boolean> {
    let changed = false;
    let budget = maxBytes;
    for (;;) {
      const { reset, lines, more } = await this.tail.read(Math.min(SLICE_BYTES, budget));
      if (reset) {
        this.clear();
        changed = true;
      }
      for (const { line, length, text } of lines) {
        budget -= length + 1;
        this.addLine(text, line);
      }
      changed ||= lines.length > 0;
      this.unread = more;
      if (more) this.reserve();
      if (!more || budget <= 0) return changed;
    }
  }

  /**
   * Adds lines that were not read from this store's file in order: a preview's sampled lines
   * (metrics-preview.ts). A store filled this way is never refreshed.
   */
  addLines(texts: readonly string[]): void {
    for (const text of texts) this.addLine(text, null);
  }

  private addLine(text: string, line: number | null): void {
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch {
      row = null;
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      this.badLines += 1;
      this.firstBadLine ??= line;
      return;
    }
    this.add(metricRow(row as Record<string, unknown>));
  }

  private add(row: Record<string, unknown>): void {
    const step = typeof row.step === 'number' && Number.isFinite(row.step) ? row.step : this.length;
    if (row.stage === 'eval') {
      const metrics: Record<string, number> = {};
      for (const [key, value] of Object.entries(row)) if (!ROW_FIELDS.has(key) && typeof value === 'number' && Number.isFinite(value)) metrics[key] = value;
      const label = typeof row.label === 'string' && row.label !== '' ? row.label : `step ${step}`;
      this.evals = [...this.evals.filter((e) => e.label !== label), { label, step, source: 'metrics.jsonl', metrics }];
      return;
    }
    if (this.length === this.capacity) this.grow();
    const index = this.length;
    this.steps[index] = step;
    this.times[index] = rowTime(row) ?? NaN;
    this.stageCodes[index] = typeof row.stage === 'string' && row.stage !== '' ? this.stageCode(row.stage) : -1;
    for (const key in row) {
      const value = row[key];
      if (typeof value !== 'number' || !Number.isFinite(value) || ROW_FIELDS.has(key)) continue;
      let column = this.columns.get(key);
      if (!column) {
        column = { values: new Float64Array(this.capacity).fill(NaN), count: 0, min: Infinity, max: -Infinity };
        this.columns.set(key, column);
        this.sortedNames = null;
      }
      column.values[index] = value;
      column.count += 1;
      if (value < column.min) column.min = value;
      if (value > column.max) column.max = value;
    }
    this.length += 1;
  }

  private stageCode(stage: string): number {
    const known = this.stageNames.indexOf(stage);
    if (known !== -1) return known;
    this.stageNames.push(stage);
    return this.stageNames.length - 1;
  }

  /**
   * Room for the rows the rest of the file holds, at the mean line length so far (a 100 MB file
   * grown by doubling copied every column seven times over).
   */
  private reserve(): void {
    const read = this.tail.position;
    if (this.length === 0 || read === 0) return;
    const expected = Math.ceil((this.length * this.tail.size) / read * 1.02);
    if (expected > this.capacity) this.grow(expected);
  }

  private grow(atLeast = 0): void {
    this.capacity = Math.max(FIRST_CAPACITY, this.capacity * 2, atLeast);
    this.steps = grown(this.steps, this.capacity);
    this.times = grown(this.times, this.capacity);
    const codes = new Int32Array(this.capacity).fill(-1);
    codes.set(this.stageCodes);
    this.stageCodes = codes;
    for (const column of this.columns.values()) column.values = grown(column.values, this.capacity);
  }

  private clear(): void {
    this.length = 0;
    this.capacity = 0;
    this.steps = new Float64Array(0);
    this.times = new Float64Array(0);
    this.stageCodes = new Int32Array(0);
    this.stageNames = [];
    this.columns = new Map();
    this.sortedNames = null;
    this.evals = [];
    this.badLines = 0;
    this.firstBadLine = null;
    this.epoch += 1;
  }
}
