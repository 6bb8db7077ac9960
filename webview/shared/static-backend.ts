/**
 * The host of a static bundle (`vistool view RUN… --bundle OUT/`), inside the page: it answers the
 * panel protocol from the files the bundle holds, so the dashboard and the rollout viewer run from
 * `file://` or any static host with no server. `data/bundle.js` sets `window.__vistoolBundle`
 * (summaries, configs, every metric row, the stage and phase marks per axis, step and evaluation
 * lists, annotations); each step's and evaluation's index and records are a script of their own
 * (`data/<run>/*.js`, loaded when first needed, which calls `window.__vistoolBundleChunk`).
 *
 * What needs the server's engine is not offered: the tool playground (it runs the tools), saving
 * annotations, report pages (a report lies outside the run directories, which is all a bundle
 * copies). Series, searches, comparisons and timelines are computed here by the same pure rules
 * the host uses (protocol/downsample.ts, metric-math.ts, rollout-text.ts, eval-compare.ts).
 *
 * Browser code only. Everything it reads was written by `vistool view --bundle`; model text in it
 * is data, and the panels only ever set it as text.
 */
import {
  AnnotationDeleteRequest,
  AnnotationSaveRequest,
  AnnotationsListRequest,
  EvalCompareRequest,
  EvalRecordRequest,
  type EvalSetInfo,
  EvalSetsRequest,
  type HostToPanelMessage,
  type MetricSeries,
  type MetricSeriesParams,
  type MetricSeriesResult,
  MetricRowsRequest,
  MetricSeriesRequest,
  type MetricTable,
  type PageConfig,
  type PanelToHostMessage,
  ReadyCommand,
  REQUESTS,
  RolloutIndexRequest,
  RolloutRecordRequest,
  type RolloutSearchMatch,
  RolloutSearchRequest,
  RolloutStepsRequest,
  RunConfigsRequest,
  RunsChangedNotification,
  RunsListRequest,
  type RunSummary,
  SEARCH_LIMIT,
  type StepIndex,
  TaskTimelineRequest,
  type TimelineEntry,
} from '../../protocol/panel-protocol.js';
import { debiasedEma, wallClockSeconds } from '../../protocol/metric-math.js';
import { minMaxIndices } from '../../protocol/downsample.js';
import { findInRecord } from '../../protocol/rollout-text.js';
import { matchesFacets } from '../../protocol/rollout-filter.js';
import { armOf, compareEvaluations } from '../../protocol/eval-compare.js';
import type { Transport } from './host.js';
import { isDarkTheme, toggleBrowserTheme } from './theme.js';
import type { BundleChunk, BundleData } from '../../protocol/bundle.js';

declare global {
  interface Window {
    __vistoolBundle?: BundleData;
    __vistoolBundleChunk?: (key: string, chunk: BundleChunk) => void;
  }
}

export const READ_ONLY = 'this is a static bundle (vistool view --bundle): it shows what was exported and cannot save or run anything; open the run with `vistool view` for that';

const nan = (values: readonly (number | null)[]) => Float64Array.from(values, (v) => (v === null ? NaN : v));

/** The first index of sorted[0, length) whose value is ≥ value (or > value when `after`). */
function bound(sorted: Float64Array, value: number, after: boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const v = sorted[mid] as number;
    if (v < value || (after && v === value)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function pick(xs: ArrayLike<number>, ys: ArrayLike<number>, indices: number[]): { x: number[]; y: number[] } {
  return { x: indices.map((i) => xs[i] as number), y: indices.map((i) => ys[i] as number) };
}

/** A metric against an axis, shaped as the host's metrics/series shapes it (env/runs/metric-series.ts): sorted, ranged, smoothed over every point, downsampled. */
export function staticSeries(metric: string, xs: Float64Array, values: Float64Array | null, params: Omit<MetricSeriesParams, 'runId' | 'metrics'>): MetricSeries {
  const order: number[] = [];
  if (values) for (let i = 0; i < values.length; i++) if (!Number.isNaN(xs[i] as number) && !Number.isNaN(values[i] as number)) order.push(i);
  order.sort((a, b) => (xs[a] as number) - (xs[b] as number) || a - b);
  if (order.length === 0) return { metric, raw: { x: [], y: [] }, smoothed: params.smoothing > 0 ? { x: [], y: [] } : null, stats: null, inRange: 0 };
  const px = Float64Array.from(order, (i) => xs[i] as number);
  const py = Float64Array.from(order, (i) => (values as Float64Array)[i] as number);
  let from = 0;
  let to = px.length;
  if (params.range) {
    from = bound(px, params.range.min, false);
    to = bound(px, params.range.max, true);
  }
  const inRange = to - from;
  if (params.range) {
    from = Math.max(0, from - 1);
    to = Math.min(px.length, to + 1);
  }
  let min = Infinity;
  let max = -Infinity;
  for (const y of py) [min, max] = [Math.min(min, y), Math.max(max, y)];
  const smoothed = params.smoothing > 0 ? debiasedEma(py, params.smoothing) : null;
  return {
    metric,
    raw: pick(px, py, minMaxIndices(px, py, from, to, params.maxPoints)),
    smoothed: smoothed ? pick(px, smoothed, minMaxIndices(px, smoothed, from, to, params.maxPoints)) : null,
    stats: { min, max, last: py[py.length - 1] as number, count: py.length },
    inRange,
  };
}

export class StaticBackend {
  private readonly chunks = new Map<string, Promise<BundleChunk>>();
  private readonly waiting = new Map<string, (chunk: BundleChunk) => void>();

  constructor(private readonly data: BundleData) {
    window.__vistoolBundleChunk = (key, chunk) => {
      this.waiting.get(key)?.(chunk);
      this.waiting.delete(key);
    };
  }

  runs(): RunSummary[] {
    return this.data.runs;
  }

  /** A chunk's script, loaded once (a script tag: file:// pages cannot fetch). */
  private chunk(key: string): Promise<BundleChunk> {
    let loading = this.chunks.get(key);
    if (!loading) {
      const src = this.data.chunks[key];
      if (src === undefined) return Promise.reject(new Error(`the bundle has no ${key}`));
      loading = new Promise<BundleChunk>((resolve, reject) => {
        this.waiting.set(key, resolve);
        const script = document.createElement('script');
        script.src = src;
        script.addEventListener('error', () => reject(new Error(`the bundle's ${src} did not load; is the bundle complete?`)));
        document.head.append(script);
      });
      this.chunks.set(key, loading);
    }
    return loading;
  }

  private run(id: string): RunSummary {
    const run = this.data.runs.find((r) => r.id === id);
    if (!run) throw new Error(`no run '${id}' in this bundle; it holds: ${this.data.runs.map((r) => r.id).join(', ') || 'none'}`);
    return run;
  }

  private evalSet(runId: string, key: string): EvalSetInfo {
    const set = (this.data.evalSets[this.run(runId).id] ?? []).find((s) => s.key === key);
    if (!set) throw new Error(`run '${runId}' has no evaluation '${key}' in this bundle`);
    return set;
  }

  async handle(message: PanelToHostMessage): Promise<HostToPanelMessage | null> {
    if (message.kind === 'command') return null;
    try {
      return { kind: 'response', id: message.id, method: message.method, ok: true, result: await this.request(message) };
    } catch (err) {
      return { kind: 'response', id: message.id, method: message.method, ok: false, error: { message: (err as Error).message } };
    }
  }

  private async request(message: PanelToHostMessage): Promise<unknown> {
    if (RunsListRequest.is(message)) return { runs: this.data.runs };
    if (MetricRowsRequest.is(message)) {
      const { runId, from, columns } = message.params;
      const table = this.data.tables[this.run(runId).id] as MetricTable;
      const pickColumns = Object.fromEntries(Object.entries(table.columns).filter(([name]) => !columns || columns.includes(name)).map(([name, values]) => [name, values.slice(from)]));
      return { runId, from, total: table.steps.length, table: { steps: table.steps.slice(from), times: table.times.slice(from), stages: table.stages.slice(from), columns: pickColumns } };
    }
    if (MetricSeriesRequest.is(message)) return this.series(message.params);
    if (RolloutStepsRequest.is(message)) return { runId: message.params.runId, steps: this.data.steps[this.run(message.params.runId).id] ?? [] };
    if (RolloutIndexRequest.is(message)) return (await this.chunk(`${this.run(message.params.runId).id}/step/${message.params.step}`)).index;
    if (RolloutRecordRequest.is(message)) {
      const { runId, step, line } = message.params;
      const found = (await this.chunk(`${this.run(runId).id}/step/${step}`)).records[line];
      if (!found) throw new Error(`step ${step} has no rollout on line ${line + 1} in this bundle`);
      return { runId, step, line, ...found };
    }
    if (RolloutSearchRequest.is(message)) return this.search(message.params);
    if (RunConfigsRequest.is(message)) return { configs: message.params.runIds.map((id) => this.data.configs[this.run(id).id] ?? { runId: id, config: null, problem: 'not in this bundle' }) };
    if (EvalSetsRequest.is(message)) return { runId: message.params.runId, sets: this.data.evalSets[this.run(message.params.runId).id] ?? [] };
    if (EvalCompareRequest.is(message)) {
      const { a, b } = message.params;
      const [left, right] = await Promise.all([a, b].map(async (side) => ({ set: this.evalSet(side.runId, side.key), chunk: await this.chunk(`${side.runId}/eval/${side.key}`) })));
      if (!left || !right) throw new Error('evals/compare needs two sides');
      return {
        a: { ...a, label: left.set.label, step: left.set.step },
        b: { ...b, label: right.set.label, step: right.set.step },
        ...compareEvaluations(left.chunk.index.rollouts, a.arm, right.chunk.index.rollouts, b.arm),
      };
    }
    if (EvalRecordRequest.is(message)) {
      const { runId, key, line } = message.params;
      this.evalSet(runId, key);
      const found = (await this.chunk(`${runId}/eval/${key}`)).records[line];
      if (!found) throw new Error(`evaluation ${key} has no rollout on line ${line + 1} in this bundle`);
      return { runId, key, line, ...found };
    }
    if (TaskTimelineRequest.is(message)) return this.timeline(message.params.runId, message.params.promptId);
    if (AnnotationsListRequest.is(message)) return { runId: message.params.runId, ...(this.data.annotations[this.run(message.params.runId).id] ?? { annotations: [], problems: [] }) };
    if (AnnotationSaveRequest.is(message) || AnnotationDeleteRequest.is(message)) throw new Error(`annotations cannot be changed here: ${READ_ONLY}`);
    const known = REQUESTS.some((r) => r.method === message.method);
    throw new Error(known ? `'${message.method}' is not available: ${READ_ONLY}` : `unknown request '${message.method}'`);
  }

  private series(params: MetricSeriesParams): MetricSeriesResult {
    const run = this.run(params.runId);
    const table = this.data.tables[run.id] as MetricTable;
    const facts = this.data.axes[run.id]?.[params.xAxis] ?? { xSource: params.xAxis === 'step' ? 'step' : null, phases: [], toolFading: null };
    const rows = table.steps.length;
    const column = (name: string) => (table.columns[name] ? nan(table.columns[name] as (number | null)[]) : null);
    const xs = params.xAxis === 'step' ? Float64Array.from(table.steps) : wallClockSeconds(table.times, (m) => table.columns[m], rows).seconds;
    return { runId: run.id, rows, ...facts, series: params.metrics.map((metric) => staticSeries(metric, xs, column(metric), params)) };
  }

  private async search(params: { runId: string; query: string; filter: Parameters<typeof matchesFacets>[1]; limit?: number; from?: { step: number; line: number } }): Promise<unknown> {
    const run = this.run(params.runId);
    const limit = params.limit ?? SEARCH_LIMIT;
    const from = params.from ?? { step: 0, line: 0 };
    const steps: { step: number; matches: number }[] = [];
    const matches: RolloutSearchMatch[] = [];
    const scanned = { steps: 0, rollouts: 0, skipped: 0 };
    const errorClasses = new Set<string>();
    const toolNames = new Set<string>();
    let total = 0;
    let after = 0;
    for (const { step } of this.data.steps[run.id] ?? []) {
      const chunk = await this.chunk(`${run.id}/step/${step}`);
      scanned.steps += 1;
      scanned.skipped += chunk.index.skipped.length;
      let count = 0;
      for (const summary of chunk.index.rollouts) {
        scanned.rollouts += 1;
        summary.errorClasses.forEach((c) => errorClasses.add(c));
        summary.toolNames.forEach((t) => toolNames.add(t));
        const record = chunk.records[summary.line]?.record;
        if (!record || !matchesFacets(summary, params.filter)) continue;
        const found = findInRecord(record as unknown as Record<string, unknown>, params.query);
        if (!found) continue;
        count += 1;
        if (step < from.step || (step === from.step && summary.line < from.line)) continue;
        after += 1;
        if (matches.length < limit) matches.push({ step, line: summary.line, promptId: summary.promptId, ...found });
      }
      if (count > 0) steps.push({ step, matches: count });
      total += count;
    }
    return { runId: run.id, query: params.query, filter: params.filter, steps, total, matches, from, capped: after > matches.length, scanned, seen: { errorClasses: [...errorClasses].sort(), toolNames: [...toolNames].sort() } };
  }

  private async timeline(runId: string, promptId: string): Promise<unknown> {
    const run = this.run(runId);
    const entries: TimelineEntry[] = [];
    let question = '';
    let gold: string | string[] | null = null;
    let files = 0;
    const visit = (summary: StepIndex['rollouts'][number], entry: Pick<TimelineEntry, 'kind' | 'step'> & Partial<TimelineEntry>) => {
      if (summary.promptId !== promptId) return;
      question ||= summary.question;
      gold ??= summary.gold;
      const { line, group, correct, answer, reward, toolCalls, toolNames, errorClasses } = summary;
      entries.push({ line, group, correct, answer, reward, toolCalls, toolNames, errorClasses, ...entry });
    };
    for (const { step } of this.data.steps[run.id] ?? []) {
      files += 1;
      for (const summary of (await this.chunk(`${run.id}/step/${step}`)).index.rollouts) visit(summary, { kind: 'step', step });
    }
    for (const set of this.data.evalSets[run.id] ?? []) {
      files += 1;
      for (const summary of (await this.chunk(`${run.id}/eval/${set.key}`)).index.rollouts) {
        const arm = armOf(summary);
        visit(summary, { kind: 'eval', step: set.step, key: set.key, label: set.label, ...(arm ? { arm } : {}) });
      }
    }
    return { runId: run.id, promptId, question, gold, entries, scanned: { files, rollouts: entries.length, skipped: 0 } };
  }
}

/** A bundle page's transport: the static backend answers in the page; state lives in sessionStorage; files are the bundle's copies. */
export class BundleTransport implements Transport {
  readonly kind = 'bundle';
  readonly savesLocally = true;
  private readonly listeners: ((message: HostToPanelMessage) => void)[] = [];
  private readonly backend: StaticBackend;
  private readonly stateKey: string;

  constructor(config: PageConfig) {
    // A bundle's pages are files, with no server to set the theme: `?theme=dark` in the link does.
    if (new URLSearchParams(window.location.search).get('theme') === 'dark' && !isDarkTheme()) toggleBrowserTheme();
    const data = window.__vistoolBundle;
    if (!data || data.format !== 'vistool-bundle') throw new Error("this page's bundle data (data/bundle.js) did not load; open the page from the bundle folder it was written to");
    this.backend = new StaticBackend(data);
    this.stateKey = `vistool:bundle:${config.panel}:state`;
  }

  post(message: PanelToHostMessage): void {
    void this.backend.handle(message).then((reply) => {
      if (reply) this.deliver(reply);
      // As a host does: a panel that says it is ready gets the runs' snapshot.
      if (ReadyCommand.is(message)) this.deliver({ kind: 'notification', method: RunsChangedNotification.method, params: { runs: this.backend.runs() } });
    });
  }

  cancel(): void {
    // Answers come from memory or a script already loading: nothing to stop.
  }

  onMessage(listener: (message: HostToPanelMessage) => void): void {
    this.listeners.push(listener);
  }

  private deliver(message: HostToPanelMessage): void {
    for (const listener of this.listeners) listener(message);
  }

  getState(): unknown {
    try {
      const text = sessionStorage.getItem(this.stateKey);
      return text === null ? undefined : JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  setState(state: unknown): void {
    try {
      sessionStorage.setItem(this.stateKey, JSON.stringify(state));
    } catch {
      // UI state is a convenience.
    }
  }

  resourceUrl(runId: string, relativePath: string): string {
    return `runs/${encodeURIComponent(runId)}/${relativePath.split('/').map(encodeURIComponent).join('/')}`;
  }
}
