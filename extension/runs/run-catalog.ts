/**
 * The runs the Runs view lists: every run directory under the runs folder and in each folder of
 * runs there (the demo's runs/demo/{tools,text}: env/runs/run-groups.ts), plus directories the
 * extension started runs in elsewhere. For each, an overview (state, step, last reward,
 * tool-call rate) read through env/view's RunSource, which tails metrics.jsonl so a refresh
 * costs a few stat calls when nothing changed.
 *
 * Editor-free (unit-tested under plain Node). Read-only: never writes to a run directory.
 */
import { basename, join, resolve } from 'node:path';
import { configNameOf, runName } from '../../env/runs/run-name.js';
import { PROCESS_GONE, RunSource } from '../../env/runs/run-source.js';
import type { MetricTable } from '../../protocol/panel-protocol.js';
import { isProcessAlive } from '../../env/core/process-liveness.js';
import { VERL_COMMAND_MARK } from '../processes/verl-launch.js';
import { type RunState, runStateFrom, TRAINER_COMMAND_MARK } from './run-state.js';
import { readJsonObject } from './read-json.js';
import { findRuns, isRunDirectory, reportOf } from '../../env/runs/run-groups.js';

export interface RunOverview {
  /** Absolute path of the run directory: the run's identity. */
  dir: string;
  /** The folder's name (env/runs/run-name.ts). */
  name: string;
  /** The run config's name (run.json), when it differs from the folder's. */
  configName: string | null;
  state: RunState;
  /** run.json `status` as written, null without run.json. */
  status: string | null;
  pid: number | null;
  /** `step` of the newest training row in metrics.jsonl. */
  step: number | null;
  /** 'perception' (a curriculum's first stage), 'sft' or 'rl' from the newest training row, null before the first. */
  stage: 'perception' | 'sft' | 'rl' | null;
  /**
   * The newest training row's step within its stage, counted from the stage's start (`rl/step`,
   * `sft/step`, `perception/step`; veRL's `training/global_step`): a run 30 steps into RL after 650
   * SFT steps is at rl step 30, not 680. Null when the row does not say (absent in overviews made before).
   */
  stageStep?: number | null;
  /** The newest supervised loss: `perception/loss` in the perception stage, else `sft/loss`. */
  sftLoss: number | null;
  reward: number | null;
  accuracy: number | null;
  toolCallRate: number | null;
  /** run.json `error` of a failed run. */
  error: string | null;
  startedAt: number | null;
  updatedAt: number | null;
  problems: string[];
  /** The folder of runs it belongs to (runs/demo for runs/demo/tools), null for a run on its own. */
  group: string | null;
  /** The report.html it is read with (its own, or its folder of runs'), null when there is none. */
  report: string | null;
}

/** Run directories under `runsRoot` (directly, or in a folder of runs there), sorted by path; none when it does not exist. */
export async function findRunDirectories(runsRoot: string): Promise<string[]> {
  return (await findRuns(runsRoot)).map((run) => run.dir);
}

/** The newest non-null value of each metric, in a table (callers pass a tail of the run, not all of it). */
export function latestValues(table: MetricTable, names: readonly string[]): Record<string, number | null> {
  const latest: Record<string, number | null> = {};
  for (const name of names) {
    const values = table.columns[name] ?? [];
    let found: number | null = null;
    for (let i = values.length - 1; i >= 0 && found === null; i--) found = values[i] ?? null;
    latest[name] = found;
  }
  return latest;
}

/** veRL's names for the same things (its file logger's lines, docs/VERL.md): the mean episode score, the RL step. */
const VERL_REWARD = 'critic/score/mean';
const VERL_STEP = 'training/global_step';
const OVERVIEW_METRICS = ['reward/mean', 'acc/mean', 'tool/call_rate', 'sft/loss', 'perception/loss', VERL_REWARD] as const;
const LOOK_BACK_ROWS = 256;

export class RunCatalog {
  private readonly sources = new Map<string, RunSource>();
  private readonly extraDirs = new Set<string>();

  /** `allowedRoots`: where a symbolic link in a runs folder may lead (the workspace folders); the runs folders when not given. */
  constructor(private runsRoots: string[], private allowedRoots: string[] = []) {}

  setRunsRoots(roots: string[], allowedRoots: string[] = []): void {
    this.runsRoots = roots;
    this.allowedRoots = allowedRoots;
  }

  /** A run directory outside the runs folders (a config whose output_dir points elsewhere). */
  addRunDirectory(dir: string): void {
    this.extraDirs.add(resolve(dir));
  }

  /** Re-reads every run; the overviews sorted newest first (then by name). */
  async refresh(): Promise<RunOverview[]> {
    const found = (await Promise.all(this.runsRoots.map((root) => findRuns(root, [root, ...this.allowedRoots])))).flat();
    const groups = new Map(found.map((run) => [resolve(run.dir), run.group === null ? null : resolve(run.group)]));
    const extra = await Promise.all([...this.extraDirs].map(async (dir) => ((await isRunDirectory(dir)) ? dir : null)));
    const dirs = [...new Set([...groups.keys(), ...extra.filter((d): d is string => d !== null)])];
    for (const dir of [...this.sources.keys()]) if (!dirs.includes(dir)) this.sources.delete(dir);
    const overviews = await Promise.all(dirs.map((dir) => this.overview(dir, groups.get(dir) ?? null)));
    return overviews.sort((a, b) => (b.startedAt ?? 0) - (a.startedAt ?? 0) || a.name.localeCompare(b.name));
  }

  private async overview(dir: string, group: string | null): Promise<RunOverview> {
    let source = this.sources.get(dir);
    if (!source) {
      source = new RunSource(basename(dir), dir);
      this.sources.set(dir, source);
    }
    await source.refresh().catch(() => false);
    const summary = source.summary();
    const run = (await readJsonObject(join(dir, 'run.json'))) ?? {};
    const pid = typeof run.pid === 'number' && Number.isInteger(run.pid) ? run.pid : null;
    // A veRL launch's process is its recipe's run.sh (extension/processes/verl-launch.ts).
    const alive = pid === null ? null : isProcessAlive(pid, run.engine === 'verl' ? VERL_COMMAND_MARK : TRAINER_COMMAND_MARK);
    const rows = source.metrics.rowCount;
    const tail = source.metrics.slice(Math.max(0, rows - LOOK_BACK_ROWS));
    const latest = latestValues(tail, OVERVIEW_METRICS);
    const lastIndex = tail.steps.length - 1;
    const lastIsRl = lastIndex >= 0 && ((tail.columns['rl/step']?.[lastIndex] ?? null) !== null || (tail.columns[VERL_STEP]?.[lastIndex] ?? null) !== null);
    const lastIsSft = lastIndex >= 0 && (tail.columns['sft/step']?.[lastIndex] ?? null) !== null;
    const lastIsPerception = lastIndex >= 0 && (tail.columns['perception/step']?.[lastIndex] ?? null) !== null;
    const name = runName(dir);
    const recorded = typeof run.status === 'string' ? run.status : null;
    return {
      dir,
      name,
      configName: configNameOf(dir, run),
      // run.json's own word: the state below turns a dead pid's "running" into stopped itself.
      state: runStateFrom(recorded, alive),
      status: recorded,
      pid,
      step: lastIndex >= 0 ? (tail.steps[lastIndex] ?? null) : null,
      stage: lastIsRl ? 'rl' : lastIsSft ? 'sft' : lastIsPerception ? 'perception' : null,
      stageStep: lastIndex < 0 ? null : (tail.columns[lastIsRl ? 'rl/step' : lastIsSft ? 'sft/step' : 'perception/step']?.[lastIndex] ?? (lastIsRl ? tail.columns[VERL_STEP]?.[lastIndex] : null) ?? null),
      sftLoss: (lastIsPerception ? latest['perception/loss'] : latest['sft/loss']) ?? null,
      // veRL's critic/score/mean is the mean of the env server's episode rewards (vistool_verl's reward function returns them).
      reward: latest['reward/mean'] ?? latest[VERL_REWARD] ?? null,
      accuracy: latest['acc/mean'] ?? null,
      toolCallRate: latest['tool/call_rate'] ?? null,
      error: typeof run.error === 'string' ? run.error : null,
      startedAt: summary.startedAt,
      updatedAt: summary.updatedAt,
      problems: summary.problems.filter((problem) => !problem.startsWith(PROCESS_GONE)), // run-labels words it for the editor
      group,
      report: await reportOf(dir),
    };
  }
}
