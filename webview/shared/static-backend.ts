/**
 * The host of a static bundle (`vistool view RUN… --bundle OUT/`), inside the page: it answers the
 * panel protocol from the files the bundle holds, so the dashboard and the rollout viewer run from
 * `file://` or any static host with no server. `data/bundle.js` sets `window.__vistoolBundle`
 * (summaries, configs, every metric row, the stage and phase marks per axis, step and evaluation
 * lists, annotations); each step's and evaluation's index and records are a script of their own
 * (`data/<run>/*.js`, loaded when first needed, which calls `window.__vistoolBundleChunk`).
 *
 * It is a value of the protocol's RequestHandlers and CommandHandlers (protocol/panel/handlers.ts),
 * as the server's PanelBackend is, so a request added to the protocol is a compile error here until
 * it is answered. What needs the server's engine is answered "not in a bundle" by explicit
 * handlers: the tool playground (it runs the tools), saving annotations, report pages (a report
 * lies outside the run directories, which is all a bundle copies), replaying a rollout without its
 * tool's result (it asks a served policy: `replay/availability` answers why not). Series, searches, comparisons
 * and timelines are computed by the same pure functions the host uses (protocol/series-shape.ts,
 * rollout-search.ts, rollout-text.ts, eval-compare.ts).
 *
 * Browser code only. Everything it reads was written by `vistool view --bundle`; model text in it
 * is data, and the panels only ever set it as text.
 */
import type { BundleChunk, BundleData } from '../../protocol/bundle.js';
import { armOf, compareEvaluations } from '../../protocol/eval-compare.js';
import { runEvalSummary } from '../../protocol/eval-summary.js';
import { wallClockSeconds } from '../../protocol/metric-math.js';
import type { EvalComparison, EvalSetInfo, EvalSide, TaskTimeline, TimelineEntry } from '../../protocol/panel/evaluations.js';
import { type CommandHandlers, dispatch, dispatchCommand, type RequestHandlers } from '../../protocol/panel/handlers.js';
import type { HostToPanelMessage, PanelToHostMessage } from '../../protocol/panel/messages.js';
import type { MetricRowsParams, MetricRowsResult, MetricSeries, MetricSeriesParams, MetricSeriesResult, MetricTable } from '../../protocol/panel/metrics.js';
import type { StepIndex } from '../../protocol/panel/rollouts.js';
import { RunsChangedNotification, type RunSummary } from '../../protocol/panel/runs.js';
import type { RolloutSearchParams, RolloutSearchResult } from '../../protocol/panel/search.js';
import { searchSteps, type SearchedRollout, type SearchCounts } from '../../protocol/rollout-search.js';
import { emptySeries, shapeSeries, sortedPoints } from '../../protocol/series-shape.js';

declare global {
  interface Window {
    __vistoolBundle?: BundleData;
    __vistoolBundleChunk?: (key: string, chunk: BundleChunk) => void;
  }
}

export const READ_ONLY = 'this is a static bundle (vistool view --bundle): it shows what was exported and cannot save or run anything; open the run with `vistool view` for that';

const nan = (values: readonly (number | null)[]) => Float64Array.from(values, (v) => (v === null ? NaN : v));

/** A metric against an axis, shaped as the host's metrics/series shapes it (env/runs/metric-series.ts): sorted, ranged, smoothed over every point, downsampled. */
export function staticSeries(metric: string, xs: Float64Array, values: Float64Array | null, params: Omit<MetricSeriesParams, 'runId' | 'metrics'>): MetricSeries {
  return values ? shapeSeries(metric, sortedPoints(xs, values), params) : emptySeries(metric, params.smoothing);
}

/** The answer of a request that needs the server's engine. */
function notInBundle(method: string): () => never {
  return () => {
    throw new Error(`'${method}' is not available: ${READ_ONLY}`);
  };
}

function readOnlyAnnotations(): never {
  throw new Error(`annotations cannot be changed here: ${READ_ONLY}`);
}

/** Nothing for a bundle's page to do: the panel does it itself (a browser saves and opens pages), or nothing is running to stop. */
const inThePage = (): void => {};

export class StaticBackend {
  private readonly chunks = new Map<string, Promise<BundleChunk>>();
  private readonly waiting = new Map<string, (chunk: BundleChunk) => void>();

  readonly requests: RequestHandlers = {
    'runs/list': () => ({ runs: this.data.runs }),
    'runs/configs': ({ runIds }) => ({ configs: runIds.map((id) => this.data.configs[this.run(id).id] ?? { runId: id, config: null, problem: 'not in this bundle' }) }),
    'runs/image': notInBundle('runs/image'),
    'metrics/rows': (params) => this.rows(params),
    'metrics/series': (params) => this.series(params),
    'rollouts/steps': ({ runId }) => ({ runId, steps: this.data.steps[this.run(runId).id] ?? [] }),
    'rollouts/index': async ({ runId, step }) => (await this.chunk(`${this.run(runId).id}/step/${step}`)).index,
    'rollouts/record': async ({ runId, step, line }) => {
      const found = (await this.chunk(`${this.run(runId).id}/step/${step}`)).records[line];
      if (!found) throw new Error(`step ${step} has no rollout on line ${line + 1} in this bundle`);
      return { runId, step, line, ...found };
    },
    'rollouts/search': (params) => this.search(params),
    'rollouts/timeline': ({ runId, promptId }) => this.timeline(runId, promptId),
    'evals/list': ({ runId }) => ({ runId, sets: this.data.evalSets[this.run(runId).id] ?? [] }),
    'evals/compare': ({ a, b }) => this.compare(a, b),
    'evals/summary': async ({ runId }) => {
      const run = this.run(runId);
      const sets = await Promise.all((this.data.evalSets[run.id] ?? []).map(async (set) => ({ ...set, rollouts: (await this.chunk(`${run.id}/eval/${set.key}`)).index.rollouts })));
      return runEvalSummary(run.id, sets);
    },
    'evals/record': async ({ runId, key, line }) => {
      this.evalSet(runId, key);
      const found = (await this.chunk(`${runId}/eval/${key}`)).records[line];
      if (!found) throw new Error(`evaluation ${key} has no rollout on line ${line + 1} in this bundle`);
      return { runId, key, line, ...found };
    },
    'annotations/list': ({ runId }) => ({ runId, ...(this.data.annotations[this.run(runId).id] ?? { annotations: [], problems: [] }) }),
    'annotations/save': readOnlyAnnotations,
    'annotations/delete': readOnlyAnnotations,
    'tools/list': notInBundle('tools/list'),
    'playground/open': notInBundle('playground/open'),
    'playground/apply': notInBundle('playground/apply'),
    'playground/undo': notInBundle('playground/undo'),
    'playground/snapshot': notInBundle('playground/snapshot'),
    'calls/format': notInBundle('calls/format'),
    // A replay asks a served policy from Node (the extension host, `vistool view`); a page has neither.
    'replay/availability': () => ({ available: false, policy: null, reason: `replaying needs a host that can ask a policy: ${READ_ONLY}` }),
    'replay/withheld': notInBundle('replay/withheld'),
  };

  readonly commands: CommandHandlers = {
    'webview/ready': () => this.notify({ kind: 'notification', method: RunsChangedNotification.method, params: { runs: this.data.runs } }),
    'webview/error': inThePage,
    'file/save': inThePage,
    'playground/show': inThePage,
    'viewer/show': inThePage,
    'report/show': inThePage,
    'request/cancel': inThePage,
  };

  /** `notify` receives the notifications a host sends (the runs' snapshot when a panel is ready). */
  constructor(
    private readonly data: BundleData,
    private readonly notify: (message: HostToPanelMessage) => void = () => {},
  ) {
    window.__vistoolBundleChunk = (key, chunk) => {
      this.waiting.get(key)?.(chunk);
      this.waiting.delete(key);
    };
  }

  runs(): RunSummary[] {
    return this.data.runs;
  }

  async handle(message: PanelToHostMessage): Promise<HostToPanelMessage | null> {
    if (message.kind === 'command') {
      await dispatchCommand(this.commands, message);
      return null;
    }
    try {
      return { kind: 'response', id: message.id, method: message.method, ok: true, result: await dispatch(this.requests, message) };
    } catch (err) {
      return { kind: 'response', id: message.id, method: message.method, ok: false, error: { message: (err as Error).message } };
    }
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

  private rows({ runId, from, columns }: MetricRowsParams): MetricRowsResult {
    const table = this.data.tables[this.run(runId).id] as MetricTable;
    const pickColumns = Object.fromEntries(Object.entries(table.columns).filter(([name]) => !columns || columns.includes(name)).map(([name, values]) => [name, values.slice(from)]));
    return { runId, from, total: table.steps.length, table: { steps: table.steps.slice(from), times: table.times.slice(from), stages: table.stages.slice(from), columns: pickColumns } };
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

  private async compare(a: EvalSide, b: EvalSide): Promise<EvalComparison> {
    const [left, right] = await Promise.all([a, b].map(async (side) => ({ set: this.evalSet(side.runId, side.key), chunk: await this.chunk(`${side.runId}/eval/${side.key}`) })));
    if (!left || !right) throw new Error('evals/compare needs two sides');
    return {
      a: { ...a, label: left.set.label, step: left.set.step },
      b: { ...b, label: right.set.label, step: right.set.step },
      ...compareEvaluations(left.chunk.index.rollouts, a.arm, right.chunk.index.rollouts, b.arm),
    };
  }

  /** The run's step chunks searched by protocol/rollout-search.ts, as the host searches its step files. */
  private async search({ runId, ...query }: RolloutSearchParams): Promise<RolloutSearchResult> {
    const run = this.run(runId);
    const chunk = (step: number) => this.chunk(`${run.id}/step/${step}`);
    async function* read(step: number, counts: SearchCounts): AsyncGenerator<SearchedRollout> {
      const { index, records } = await chunk(step);
      counts.skipped += index.skipped.length;
      for (const summary of index.rollouts) yield { line: summary.line, record: records[summary.line]?.record as unknown as Record<string, unknown> | undefined, summary };
    }
    const steps = (this.data.steps[run.id] ?? []).map((s) => s.step);
    return { runId: run.id, ...(await searchSteps(steps, read, query)) };
  }

  private async timeline(runId: string, promptId: string): Promise<TaskTimeline> {
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
