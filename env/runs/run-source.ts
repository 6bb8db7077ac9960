/**
 * One run directory as the panels see it: its summary (status from run.json, metric names and
 * row count, rollout steps, evaluations), its metrics in memory, and its rollout indexes.
 * `refresh()` is cheap when nothing changed (a few stat calls), so the host can poll it often
 * enough to push a new metrics line within a second of it being written. A big metrics.jsonl
 * can be read a slice per refresh (`metricsBytes`), so the first refresh returns quickly and
 * the summary says how far reading got (`metricsLoading`); meanwhile lines sampled from the
 * unread part let the charts show the whole run (metrics-preview.ts).
 *
 * Read-only: never writes, renames or deletes anything in the run directory.
 */
import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { runName } from './run-name.js';
import type { EvalResult, EvalSetInfo, RunSummary, StepFileInfo } from '../../protocol/panel-protocol.js';
import { isRecord } from '../../protocol/guards.js';
import { isProcessAlive } from '../core/process-liveness.js';
import { evaluationsFromRunJson, mergeEvaluations, readEvalFiles } from './evaluations.js';
import { MetricSeriesSource } from './metric-series.js';
import { MetricsStore } from './metrics-store.js';
import { previewStore } from './metrics-preview.js';
import { listStepFiles, StepFileIndex } from './rollout-index.js';
import { reportOf } from './run-groups.js';
import { sftPhaseStarts } from './sft-phases.js';
import { listEvalSets } from './eval-sets.js';

/** How the problem for a killed run begins (the editor's Runs view says it in its own words). */
export const PROCESS_GONE = 'run.json says running, but its process';

/** A change stamp for a file or folder: empty when absent. */
async function stamp(path: string): Promise<string> {
  const info = await stat(path).catch(() => null);
  return info ? `${info.ino}:${info.size}:${info.mtimeMs}` : '';
}

/** How often the report a run is read with is looked for again (a demo writes its report.html last). */
/** A demo folder's summary (trainer/vistool_trainer/run/demo_summary.py). */
const DEMO_SUMMARY_FILE = 'summary.json';
const REPORT_CHECK_MS = 5000;

/** Lines sampled for a preview: about one per pixel of a wide chart. */
const PREVIEW_LINES = 2000;
/** A preview is made only when at least this much is left to read (less takes a poll or two). */
const PREVIEW_MIN_UNREAD_BYTES = 16 << 20;

export interface RefreshOptions {
  /** Read at most about this many bytes of metrics.jsonl (default: all that is new). */
  metricsBytes?: number;
}

export class RunSource {
  readonly metrics: MetricsStore;
  /** The charts' downsampled lines (metrics/series), computed from `metrics`. */
  readonly charts: MetricSeriesSource;
  private run: Record<string, unknown> | null = null;
  private runProblem: string | null = null;
  private gone = false;
  private steps: StepFileInfo[] = [];
  private fileEvaluations: EvalResult[] = [];
  private evalProblems: string[] = [];
  private readonly stamps = new Map<string, string>();
  /** The rollouts folder's stamp when `steps` was listed: a listing is only made again when a file came or went. */
  private listedStamp: string | null = null;
  private readonly indexes = new Map<number, StepFileIndex>();
  private readonly evalIndexes = new Map<string, StepFileIndex>();
  private report: string | null = null;
  /** Whether the run's folder is a demo's (summary.json beside its runs): its runs group by folder name across seeds. */
  private inDemoFolder = false;
  /** Where the SFT warm-up's phases begin, from run.json's sft_schedule. */
  private sftPhases: { sftStep: number; stage: string }[] = [];
  private reportCheckedAt = -Infinity;

  /** Sampled lines of the part of metrics.jsonl not read yet (metrics-preview.ts), while a big one loads. */
  private preview: MetricsStore | null = null;
  private previewGeneration = -1;

  constructor(
    readonly id: string,
    readonly dir: string,
  ) {
    this.metrics = new MetricsStore(join(dir, 'metrics.jsonl'));
    this.charts = new MetricSeriesSource(this.metrics, () => this.preview, () => this.sftPhases);
  }

  /** Whether metrics.jsonl has bytes the last refresh left for the next. */
  get metricsPending(): boolean {
    return this.metrics.loading !== null;
  }

  /** Re-reads what changed on disk; true when the summary may differ. */
  async refresh(options: RefreshOptions = {}): Promise<boolean> {
    let changed = await this.metrics.refresh(options.metricsBytes);
    changed = (await this.updatePreview()) || changed;
    if (await this.changed('run.json')) {
      changed = true;
      await this.readRunJson();
    }
    // A trainer killed with SIGKILL (or a reboot) leaves "running" in run.json: nothing on disk
    // changes when it dies, so its pid is checked on every refresh.
    const gone = this.processGone();
    if (gone !== this.gone) {
      this.gone = gone;
      changed = true;
    }
    if (await this.changed('rollouts')) {
      changed = true;
      await this.listSteps(this.stamps.get('rollouts') ?? '');
    }
    // results.json and eval/ are re-read only when one of them changed.
    const resultsChanged = await this.changed('results.json');
    const evalFolderChanged = await this.changed('eval');
    if (resultsChanged || evalFolderChanged) {
      changed = true;
      const { results, problems } = await readEvalFiles(this.dir);
      this.fileEvaluations = results;
      this.evalProblems = problems;
    }
    if (performance.now() - this.reportCheckedAt >= REPORT_CHECK_MS) {
      this.reportCheckedAt = performance.now();
      const report = await reportOf(this.dir);
      changed = changed || report !== this.report;
      this.report = report;
      const inDemoFolder = existsSync(join(dirname(this.dir), DEMO_SUMMARY_FILE));
      changed = changed || inDemoFolder !== this.inDemoFolder;
      this.inDemoFolder = inDemoFolder;
    }
    return changed;
  }

  /** The report.html the run is read with (its own, or its folder of runs'), as of the last refresh. */
  get reportFile(): string | null {
    return this.report;
  }

  summary(): RunSummary {
    const run = this.run ?? {};
    const numberField = (key: string) => (typeof run[key] === 'number' && Number.isFinite(run[key]) ? (run[key] as number) : null);
    const loading = this.metrics.loading;
    return {
      id: this.id,
      name: runName(this.dir),
      path: this.dir,
      // The Runs view's word for a run whose process is gone without a final status.
      status: this.gone ? 'stopped' : typeof run.status === 'string' ? run.status : null,
      engine: typeof run.engine === 'string' && run.engine !== '' ? run.engine : null,
      startedAt: numberField('started_at') ?? numberField('created_at'),
      updatedAt: numberField('updated_at') ?? numberField('ended_at'),
      metricRows: this.metrics.rowCount,
      metricNames: this.metrics.names,
      metricStats: this.metrics.columnStats(),
      rolloutSteps: this.steps.length,
      evaluations: mergeEvaluations(this.metrics.evaluations, evaluationsFromRunJson(this.run), this.fileEvaluations),
      problems: [
        ...(this.runProblem ? [this.runProblem] : []),
        ...(this.gone ? [`${PROCESS_GONE} (pid ${String(run.pid)}) is gone without writing a final status: killed, or the machine restarted. --resume continues from the newest checkpoint.`] : []),
        ...this.metrics.problems,
        ...this.evalProblems,
      ],
      report: this.report !== null,
      ...ranOf(run),
      ...(typeof run.group === 'string' && run.group !== '' ? { group: run.group } : this.inDemoFolder ? { group: basename(this.dir) } : {}),
      ...(loading ? { metricsLoading: { ...loading, ...(this.preview ? { sampledLines: this.preview.rowCount } : {}) } } : {}),
    };
  }

  /**
   * Samples the unread part of a big metrics.jsonl once per load (what is read later replaces the
   * samples before it, metric-series.ts); drops the samples when the reading is done. True when
   * that changed what the charts show.
   */
  private async updatePreview(): Promise<boolean> {
    const loading = this.metrics.loading;
    if (!loading) {
      const had = this.preview !== null;
      this.preview = null;
      return had;
    }
    if (this.previewGeneration === this.metrics.generation || loading.bytesTotal - loading.bytesRead < PREVIEW_MIN_UNREAD_BYTES) return false;
    this.previewGeneration = this.metrics.generation;
    this.preview = await previewStore(this.metrics.path, loading.bytesRead, loading.bytesTotal, PREVIEW_LINES);
    return true;
  }

  /** run.json says running, names a pid, and no process has it. */
  private processGone(): boolean {
    const run = this.run;
    if (!run || run.status !== 'running' || typeof run.pid !== 'number') return false;
    return !isProcessAlive(run.pid);
  }

  /**
   * The step files as of now. A listing can be older than the last poll, so the folder is looked at
   * again (one stat); it is listed again only when a file came or went since (a stat per file: on a
   * run of a thousand steps, that took longer than the rest of opening the viewer on the host). The
   * sizes are those of the listing.
   */
  async stepFiles(): Promise<StepFileInfo[]> {
    const now = await stamp(join(this.dir, 'rollouts'));
    if (now !== this.listedStamp) await this.listSteps(now);
    return this.steps;
  }

  /** Lists the step files; `folderStamp` is the rollouts folder's stamp taken before. */
  private async listSteps(folderStamp: string): Promise<void> {
    this.steps = await listStepFiles(this.dir);
    this.listedStamp = folderStamp;
  }

  /** The index of one step file, created on first use and grown on every call. */
  async stepIndex(step: number): Promise<StepFileIndex> {
    let index = this.indexes.get(step);
    if (!index) {
      const file = (this.steps.find((s) => s.step === step) ?? (await this.stepFiles()).find((s) => s.step === step))?.file;
      if (!file) throw new Error(`run '${runName(this.dir)}' has no rollouts for step ${step} (looked in ${join(this.dir, 'rollouts')})`);
      index = new StepFileIndex(join(this.dir, file), step);
      this.indexes.set(step, index);
    }
    return index;
  }

  /** The evaluations of the run whose every task was kept (eval-sets.ts). */
  async evalSets(): Promise<EvalSetInfo[]> {
    return listEvalSets(this.dir, this.run, this.summary().evaluations);
  }

  /** The index of one kept evaluation, created on first use and grown on every call. */
  async evalIndex(key: string): Promise<{ set: EvalSetInfo; index: StepFileIndex }> {
    const set = (await this.evalSets()).find((s) => s.key === key);
    if (!set) throw new Error(`run '${runName(this.dir)}' has no evaluation '${key}' kept task by task (looked for rollouts/eval-*.jsonl, and a vistool eval folder's rollouts)`);
    let index = this.evalIndexes.get(key);
    if (!index || index.path !== join(this.dir, set.file)) {
      index = new StepFileIndex(join(this.dir, set.file), set.step ?? 0);
      this.evalIndexes.set(key, index);
    }
    return { set, index };
  }

  private async changed(relative: string): Promise<boolean> {
    const now = await stamp(join(this.dir, relative));
    const before = this.stamps.get(relative);
    this.stamps.set(relative, now);
    return before !== now;
  }

  private async readRunJson(): Promise<void> {
    this.runProblem = null;
    let text: string;
    try {
      text = await readFile(join(this.dir, 'run.json'), 'utf8');
    } catch {
      this.run = null;
      return;
    }
    try {
      const parsed: unknown = JSON.parse(text);
      this.run = isRecord(parsed) ? parsed : null;
      this.sftPhases = sftPhaseStarts(this.run);
      if (!this.run) this.runProblem = 'run.json is not a JSON object';
    } catch (err) {
      this.runProblem = `run.json is not valid JSON (${(err as Error).message})`;
    }
  }
}

/** What run.json says each stage ran (its final `state`) and which stages a time cap stopped; nothing when it says neither. */
export function ranOf(run: Record<string, unknown>): Pick<RunSummary, 'ran'> {
  const state = isRecord(run.state) ? run.state : {};
  const ran: NonNullable<RunSummary['ran']> = {};
  for (const [stage, key] of [['sft', 'sft_step'], ['rl', 'rl_step'], ['perception', 'perception_step']] as const) {
    const value = state[key];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) ran[stage] = value;
  }
  const capped = isRecord(run.time_caps_reached) ? Object.keys(run.time_caps_reached) : [];
  if (capped.length > 0) ran.timeCapped = capped;
  return Object.keys(ran).length > 0 ? { ran } : {};
}
