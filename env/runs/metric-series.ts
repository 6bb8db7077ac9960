/**
 * Answers metrics/series for one run: each asked metric against the step or the wall clock,
 * sorted by x, its debiased EMA over every point, its stats, the requested range, and then at
 * most `maxPoints` points per line (protocol/series-shape.ts, which a bundle page runs too). Also where the run changes stage and whether
 * tool use collapsed, both judged on every row. The dashboard used to get every row and do this
 * itself; at 100k rows that was a 42 MB answer and seconds of work in the page per redraw.
 *
 * What is the same for every metric of one state of the data (the x column, the stage changes,
 * the tool-fading verdict) is kept until the store's rows change. Each metric's points by step
 * are kept too and only grow when rows are appended, so a live update or a slider move costs
 * the EMA and the downsampling, not a pass that gathers every row again.
 */
import { stageChanges, wallClockSeconds } from '../../protocol/metric-math.js';
import type { MetricSeries, MetricSeriesParams, MetricSeriesResult, SeriesPoints } from '../../protocol/panel/metrics.js';
import { emptySeries, shapeSeries, sortedPoints } from '../../protocol/series-shape.js';
import { detectToolFading, type FadingVerdict } from '../../protocol/tool-fading.js';
import type { MetricsStore } from './metrics-store.js';
import { sftPhaseMarks } from './sft-phases.js';

type Axis = MetricSeriesParams['xAxis'];

/** A metric's rows that have both an x and a value, in x order, as of `rows` rows of the store. */
interface Gathered {
  rows: number;
  count: number;
  px: Float64Array;
  py: Float64Array;
  min: number;
  max: number;
}

interface AxisData {
  xs: Float64Array;
  source: MetricSeriesResult['xSource'];
  phases: MetricSeriesResult['phases'];
}

function withRoom(values: Float64Array, count: number, needed: number): Float64Array {
  if (values.length >= needed) return values;
  const bigger = new Float64Array(Math.max(needed, values.length * 2));
  bigger.set(values.subarray(0, count));
  return bigger;
}

/**
 * Adds rows [gathered.rows, xs.length) to `gathered`; false when a new row's x is below the last
 * one's (a rewritten step), which only a fresh, sorted gathering handles.
 */
function extend(gathered: Gathered, xs: Float64Array, values: Float64Array): boolean {
  const rows = values.length;
  let { count, px, py, min, max } = gathered;
  px = withRoom(px, count, rows);
  py = withRoom(py, count, rows);
  for (let i = gathered.rows; i < rows; i++) {
    const x = xs[i] as number;
    const y = values[i] as number;
    if (Number.isNaN(x) || Number.isNaN(y)) continue;
    if (count > 0 && x < (px[count - 1] as number)) return false;
    px[count] = x;
    py[count] = y;
    count += 1;
    if (y < min) min = y;
    if (y > max) max = y;
  }
  Object.assign(gathered, { rows, count, px, py, min, max });
  return true;
}

function lastFinite(values: Float64Array): number {
  for (let i = values.length - 1; i >= 0; i--) if (!Number.isNaN(values[i] as number)) return values[i] as number;
  return -Infinity;
}

/** The points of `line` beyond x `after`. */
function beyond(line: SeriesPoints, after: number): SeriesPoints {
  const from = line.x.findIndex((x) => x > after);
  return from === -1 ? { x: [], y: [] } : { x: line.x.slice(from), y: line.y.slice(from) };
}

/**
 * The exact series of the rows read, continued past their last step by the preview's sampled
 * rows (those at or before it are dropped: the rows read replace them). The samples' smoothing
 * is their own EMA; `rows`, tool fading and the stats' count and last stay those of the rows read.
 */
function withPreview(exact: Omit<MetricSeriesResult, 'runId'>, sampled: Omit<MetricSeriesResult, 'runId'>, after: number, rowsAfter: number): Omit<MetricSeriesResult, 'runId'> {
  const series = exact.series.map((line, i) => {
    const more = sampled.series[i];
    if (!more) return line;
    const raw = beyond(more.raw, after);
    if (raw.x.length === 0) return line;
    const smoothed = line.smoothed && more.smoothed ? beyond(more.smoothed, after) : null;
    // min and max take the samples in (a flat line's axis is pinned from them); last and count are the rows read's.
    let [min, max] = [line.stats?.min ?? Infinity, line.stats?.max ?? -Infinity];
    for (const y of raw.y) [min, max] = [Math.min(min, y), Math.max(max, y)];
    const stats = { min, max, last: line.stats?.last ?? (raw.y[raw.y.length - 1] as number), count: line.stats?.count ?? 0 };
    return {
      ...line,
      raw: { x: [...line.raw.x, ...raw.x], y: [...line.raw.y, ...raw.y] },
      smoothed: line.smoothed ? (smoothed ? { x: [...line.smoothed.x, ...smoothed.x], y: [...line.smoothed.y, ...smoothed.y] } : line.smoothed) : null,
      stats,
      inRange: line.inRange + raw.x.length,
    };
  });
  let stage = exact.phases.length > 0 ? (exact.phases[exact.phases.length - 1] as { stage: string }).stage : null;
  const phases = [...exact.phases];
  for (const change of sampled.phases) {
    if (change.x <= after || change.stage === stage) continue;
    phases.push(change);
    stage = change.stage;
  }
  return { ...exact, series, phases, preview: { after, rows: rowsAfter } };
}

export class MetricSeriesSource {
  private stamp = '';
  private generation = -1;
  private axes = new Map<Axis, AxisData>();
  private readonly gathered = new Map<string, Gathered>();
  private readonly rawLines = new Map<string, SeriesPoints>();
  private fading: FadingVerdict | null | undefined;

  /** The series of the current preview store, kept while it is the same store. */
  private previewSeries: MetricSeriesSource | null = null;

  /**
   * `preview`: sampled lines of the unread part of the file while it loads (metrics-preview.ts), drawn beyond the rows read.
   * `sftPhases`: where the SFT warm-up's phases begin (sft-phases.ts, from run.json), marked beside the stage changes.
   */
  constructor(
    private readonly store: MetricsStore,
    private readonly preview: () => MetricsStore | null = () => null,
    private readonly sftPhases: () => readonly { sftStep: number; stage: string }[] = () => [],
  ) {}

  query(params: Omit<MetricSeriesParams, 'runId'>): Omit<MetricSeriesResult, 'runId'> {
    this.forgetIfChanged();
    const axis = this.axis(params.xAxis);
    const exact = {
      rows: this.store.rowCount,
      xSource: axis.source,
      series: params.metrics.map((metric) => this.series(metric, axis.xs, params)),
      phases: axis.phases,
      toolFading: this.toolFading(),
    };
    const sampled = params.xAxis === 'step' ? this.preview() : null;
    const after = lastFinite(axis.xs);
    const rowsAfter = sampled ? sampled.stepColumn().reduce((n, step) => (step > after ? n + 1 : n), 0) : 0;
    if (!sampled || rowsAfter === 0) {
      this.previewSeries = null;
      return exact;
    }
    if (this.previewSeries?.store !== sampled) this.previewSeries = new MetricSeriesSource(sampled);
    return withPreview(exact, this.previewSeries.query(params), after, rowsAfter);
  }

  private series(metric: string, xs: Float64Array, params: Omit<MetricSeriesParams, 'runId'>): MetricSeries {
    const gathered = this.gather(metric, params.xAxis, xs);
    if (!gathered || gathered.count === 0) return emptySeries(metric, params.smoothing);
    const { count, min, max } = gathered;
    const points = { px: gathered.px.subarray(0, count), py: gathered.py.subarray(0, count), min, max };
    // A slider move asks for the same raw line again: it is kept until the rows change.
    return shapeSeries(metric, points, params, (from, to, compute) => {
      const rawKey = `${params.xAxis}\u0000${metric}\u0000${params.maxPoints}\u0000${from}:${to}`;
      let raw = this.rawLines.get(rawKey);
      if (!raw) {
        raw = compute();
        this.rawLines.set(rawKey, raw);
      }
      return raw;
    });
  }

  /** The metric's points in x order, grown from the last call when rows were only appended. */
  private gather(metric: string, xAxis: Axis, xs: Float64Array): Gathered | null {
    const values = this.store.column(metric);
    if (!values) return null;
    const key = `${xAxis}\u0000${metric}`;
    const known = this.gathered.get(key);
    if (known && known.rows === values.length) return known;
    if (known && extend(known, xs, values)) return known;
    const fresh: Gathered = { rows: 0, count: 0, px: new Float64Array(0), py: new Float64Array(0), min: Infinity, max: -Infinity };
    if (!extend(fresh, xs, values)) {
      // Out of order: every point, stably sorted by x.
      const sorted = sortedPoints(xs, values);
      Object.assign(fresh, sorted, { count: sorted.px.length, rows: values.length });
      // Later rows cannot be appended to a series that was out of order; it is gathered afresh.
      this.gathered.delete(key);
      return fresh;
    }
    this.gathered.set(key, fresh);
    return fresh;
  }

  private axis(xAxis: Axis): AxisData {
    let data = this.axes.get(xAxis);
    if (!data) {
      const store = this.store;
      const rows = store.rowCount;
      const clock = xAxis === 'time' ? wallClockSeconds(store.timeColumn(), (metric) => store.column(metric), rows) : null;
      const xs = clock ? clock.seconds : store.stepColumn();
      const marks = [...stageChanges(store.stageColumn(), xs), ...sftPhaseMarks(this.sftPhases(), store.column('sft/step') ?? null, xs)];
      data = { xs, source: clock ? clock.source : 'step', phases: marks.sort((a, b) => a.x - b.x) };
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
    const stamp = `${this.store.generation}:${this.store.rowCount}:${JSON.stringify(this.sftPhases())}`;
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    this.axes.clear();
    this.rawLines.clear();
    this.fading = undefined;
    // Appended rows leave the step axis's earlier points as they were; wall time is measured from
    // the first timed row, which a rewrite or a first `time` field can move, so it starts over.
    for (const key of this.gathered.keys()) if (!key.startsWith('step\u0000')) this.gathered.delete(key);
    if (this.store.generation !== this.generation) {
      this.generation = this.store.generation;
      this.gathered.clear();
    }
  }
}
