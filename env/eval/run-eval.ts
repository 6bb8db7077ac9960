/**
 * The evaluation harness for a chat policy: every selected task, in each requested arm (with
 * tools, without), played through the engine's `Episode`, scored, and written as it finishes:
 *
 *   DIR/results.jsonl            one line per task and arm (task-result.ts), appended whole
 *   DIR/rollouts/step-000000.jsonl  the trajectories in the rollout format; a task's arms are
 *                                consecutive lines, group 0 = tools, 1 = no tools, so the
 *                                rollout viewer shows them side by side as one prompt group
 *   DIR/images/<sha256>.png      every image shown, content-addressed
 *   DIR/run.json                 status and what was evaluated (run-record.ts)
 *   DIR/results.json             the summary (results-document.ts), rewritten as it goes
 *
 * Resumable: a rerun reads results.jsonl and does only the task/arm pairs without a line
 * (failed ones too with `retryFailed`). A trajectory is appended before its result line, so a
 * kill between the two leaves an orphan trajectory, which the next run removes.
 * An interrupted episode (abort signal) writes nothing and is redone next time.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { decodeImage, type RgbImage } from '../core/image.js';
import type { PixelBounds } from '../config/qwen-image-tokens.js';
import { DEFAULT_LIMITS } from '../episodes/episode.js';
import { DEFAULT_PRESENTATION, type Presentation } from '../presentation/presentation.js';
import { ImageStore } from '../episodes/image-store.js';
import type { Trajectory } from '../episodes/trajectory.js';
import { answerRuleFor, scoreAnswer, TrajectoryScorer } from '../rewards/index.js';
import { parseTasks } from '../tasks/load.js';
import { isProcessAlive } from '../core/process-liveness.js';
import type { TaskRecord } from '../tasks/record.js';
import { resolveMetadata, type PixelMetadata } from '../tools/metadata.js';
import type { ChatUsage } from './chat-client.js';
import type { ChatPolicy } from './chat-policy.js';
import { JsonlAppender, readJsonl, repairTornTail, rewriteJsonl } from './jsonl-log.js';
import { RESULTS_FORMAT, RESULTS_VERSION, writeResultsDocument, type ResultsDocument } from './results-document.js';
import { identityDifferences, presentationHash, readRunRecord, sha256, writeRunRecord, type EvalIdentity, type EvalRunRecord } from './run-record.js';
import { replayWithheld } from './counterfactual.js';
import { EpisodeRunError, runEpisode } from './run-episode.js';
import { dashboardMetrics, summarize } from './summary.js';
import { ARMS, latestResults, resultKey, scoreCompleted, taskFields, type Arm, type FailedResult, type TaskResult } from './task-result.js';

export const ROLLOUT_FILE = join('rollouts', 'step-000000.jsonl');

export interface ChatEvalOptions {
  policy: ChatPolicy;
  /** How the policy is written in records (never holds a key). */
  policyName: string;
  label: string;
  tasksFile: string;
  arms: Arm[];
  limit: number | null;
  concurrency: number;
  maxTurns: number;
  /** Tool calls per episode (default: the env's, DEFAULT_LIMITS.maxToolCalls). */
  maxToolCalls?: number;
  /**
   * What the policy reads: the system turn and image view (presentation/). A checkpoint's comes
   * from its run config; default: the env's own system turn and every image.
   */
  presentation?: Presentation;
  /** The policy's image processor bounds, the episodes' pixel_bounds (absent: Qwen2.5-VL's defaults). */
  pixelBounds?: PixelBounds;
  /** Sampling settings, recorded so that a resume with different ones is refused. */
  temperature: number;
  maxTokens: number;
  out: string;
  rewardConfig: unknown;
  retryFailed: boolean;
  /** Progress lines (stderr in the CLI). */
  progress: (line: string) => void;
  signal?: AbortSignal;
  /** Seconds between results.json rewrites while running (0: after every task). */
  summaryEverySeconds?: number;
  /**
   * Stop the eval (an error) after this many task/arm failures in a row: a server that went
   * down should not turn the rest of a data set into failure lines, each after its full retry
   * schedule. 0 never stops. Default 10.
   */
  stopAfterFailures?: number;
  /** The training step of the policy evaluated (a checkpoint's), shown on the dashboard; default null. */
  step?: number | null;
  /**
   * Replay each tools-arm episode that had a successful call with the results withheld
   * (counterfactual.ts) and report the tool effect. Needs temperature 0: the replay continues
   * greedily and is compared with a greedy run.
   */
  counterfactual?: boolean;
}

export interface ChatEvalOutcome {
  document: ResultsDocument;
  interrupted: boolean;
  /** Task/arm pairs run by this invocation (not counting those found done). */
  ran: number;
  skipped: number;
}

async function loadTaskImage(task: TaskRecord, taskDir: string): Promise<LoadedImage> {
  const path = resolve(taskDir, task.image);
  let image: RgbImage;
  try {
    image = await decodeImage(path, { maxPixels: DEFAULT_LIMITS.maxPixels });
  } catch (err) {
    throw new Error(`cannot decode the task image ${path} (${(err as Error).message})`, { cause: err });
  }
  try {
    return { image, meta: resolveMetadata(task.meta, image.width, image.height) };
  } catch (err) {
    throw new Error(`bad metadata for ${path}: ${(err as Error).message}`, { cause: err });
  }
}

const emptyUsage = (): ChatUsage => ({ requests: 0, retries: 0, promptTokens: 0, completionTokens: 0 });

export function buildDocument(
  options: Pick<ChatEvalOptions, 'label' | 'policyName' | 'tasksFile' | 'arms'> & { tasksSha256?: string; presentation?: Presentation },
  selected: readonly TaskRecord[],
  results: Iterable<TaskResult>,
  step: number | null,
): ResultsDocument {
  const ids = new Set(selected.map((t) => t.id));
  const mine = [...results].filter((r) => ids.has(r.task_id) && options.arms.includes(r.arm));
  const arms = summarize(mine);
  const have = new Set(mine.map((r) => resultKey(r.task_id, r.arm)));
  const complete = selected.every((t) => options.arms.every((arm) => have.has(resultKey(t.id, arm))));
  return {
    format: RESULTS_FORMAT,
    version: RESULTS_VERSION,
    label: options.label,
    policy: options.policyName,
    tasks_file: options.tasksFile,
    ...(options.tasksSha256 !== undefined ? { tasks_sha256: options.tasksSha256 } : {}),
    ...(options.presentation !== undefined ? { presentation: options.presentation } : {}),
    tasks: selected.length,
    arms_requested: [...options.arms],
    complete,
    per_task: true,
    step,
    updated_at: Date.now() / 1000,
    evaluations: { [options.label]: { step, metrics: dashboardMetrics(arms, selected.length) } },
    arms,
  };
}

/** What an eval runs on, read once: the tasks selected, the scorer, and the identity a resume must match. */
interface EvalPlan {
  out: string;
  tasksFile: string;
  taskDir: string;
  selected: TaskRecord[];
  scorer: TrajectoryScorer;
  presentation: Presentation;
  maxToolCalls: number;
  tasksSha256: string;
  identity: EvalIdentity;
}

type LoadedImage = { image: RgbImage; meta: PixelMetadata };
type ArmOutcome = { result: TaskResult; trajectory?: Trajectory };
type EvalUnit = { task: TaskRecord; arms: Arm[] };

export async function runChatEval(options: ChatEvalOptions): Promise<ChatEvalOutcome> {
  if (options.counterfactual && options.temperature !== 0) {
    throw new Error(`counterfactual replays continue greedily and are compared with the run as it went, so the run must be greedy too: use temperature 0 (got ${options.temperature})`);
  }
  const plan = await planEval(options);
  const { out, identity } = plan;
  await mkdir(join(out, 'rollouts'), { recursive: true });
  const previous = await refuseUnresumable(out, identity);
  const results = await recoverResults(out, options.progress);
  const { units, skipped } = pendingUnits(plan.selected, options, results);
  if (skipped > 0) options.progress(`eval: resuming ${out}: ${skipped} task/arm result(s) already there, ${units.reduce((s, u) => s + u.arms.length, 0)} to run`);

  const startedAt = previous?.started_at ?? Date.now() / 1000;
  const runRecord = (status: EvalRunRecord['status'], error?: string): EvalRunRecord => ({
    kind: 'eval',
    status,
    pid: process.pid,
    started_at: startedAt,
    updated_at: Date.now() / 1000,
    label: options.label,
    tasks_file: plan.tasksFile,
    identity,
    ...(error ? { error } : {}),
  });
  await writeRunRecord(out, runRecord('running'));

  const run = new EvalRun(options, plan, results, units.length);
  try {
    await run.runAll(units);
  } catch (err) {
    await writeRunRecord(out, runRecord('failed', (err as Error).message));
    throw err;
  } finally {
    await run.close();
  }
  const interrupted = options.signal?.aborted === true;
  const document = run.document();
  await writeResultsDocument(out, document);
  if (run.broken !== null && !interrupted) {
    await writeRunRecord(out, runRecord('failed', run.broken));
    throw new Error(run.broken);
  }
  await writeRunRecord(out, runRecord(interrupted ? 'interrupted' : 'finished'));
  return { document, interrupted, ran: run.ran, skipped };
}

/** Reads the tasks and works out the eval's identity. */
async function planEval(options: ChatEvalOptions): Promise<EvalPlan> {
  const out = resolve(options.out);
  const tasksFile = resolve(options.tasksFile);
  const tasksBytes = await readFile(tasksFile).catch((err: Error) => {
    throw new Error(`cannot read the tasks file ${tasksFile}: ${err.message}`);
  });
  // Parsed from the bytes that are hashed, so the identity below is that of the tasks run.
  const all = parseTasks(tasksBytes.toString('utf8'), tasksFile);
  const selected = options.limit === null ? all : all.slice(0, options.limit);
  const scorer = new TrajectoryScorer(options.rewardConfig ?? {});
  const presentation = options.presentation ?? DEFAULT_PRESENTATION;
  const maxToolCalls = options.maxToolCalls ?? DEFAULT_LIMITS.maxToolCalls;
  const tasksSha256 = sha256(tasksBytes);
  const identity: EvalIdentity = {
    policy: options.policyName,
    tasks_sha256: tasksSha256,
    max_turns: options.maxTurns,
    max_tool_calls: maxToolCalls,
    presentation_sha256: presentationHash(presentation),
    temperature: options.temperature,
    max_tokens: options.maxTokens,
    reward_config_sha256: sha256(JSON.stringify(scorer.config)),
    counterfactual: options.counterfactual === true,
  };
  return { out, tasksFile, taskDir: dirname(tasksFile), selected, scorer, presentation, maxToolCalls, tasksSha256, identity };
}

/** The folder's earlier run record; refuses a folder another live eval writes, or one started with other options. */
async function refuseUnresumable(out: string, identity: EvalIdentity): Promise<EvalRunRecord | null> {
  const previous = await readRunRecord(out);
  if (previous?.status === 'running' && previous.pid !== process.pid && isProcessAlive(previous.pid)) {
    throw new Error(`another eval (pid ${previous.pid}) is running in ${out}; wait for it or stop it first — two writers would interleave their results`);
  }
  if (previous) {
    const differences = identityDifferences(previous.identity, identity);
    if (differences.length > 0) {
      throw new Error(
        `${out} holds an eval that cannot be resumed with these options (${differences.join('; ')}). ` +
          'Rerun with the options it was started with, or give a new --out to start a separate eval.',
      );
    }
  }
  return previous;
}

/** The results a killed run left, after its logs' torn last lines and orphan trajectories are removed. */
async function recoverResults(out: string, progress: (line: string) => void): Promise<Map<string, TaskResult>> {
  const resultsPath = join(out, 'results.jsonl');
  const rolloutsPath = join(out, ROLLOUT_FILE);
  const tornResults = await repairTornTail(resultsPath);
  const tornRollouts = await repairTornTail(rolloutsPath);
  if (tornResults + tornRollouts > 0) progress(`eval: removed a torn last line left by an interrupted run (${tornResults + tornRollouts} bytes)`);
  const results = latestResults(await readJsonl(resultsPath), resultsPath);

  // Trajectories whose result line never made it (killed between the two appends) are redone:
  // drop them, and any duplicate, so every trajectory in the file has exactly one result.
  const finishedOk = new Set([...results.values()].filter((r) => r.status === 'ok').map((r) => resultKey(r.task_id, r.arm)));
  const rollouts = await readJsonl(rolloutsPath);
  const kept: unknown[] = [];
  const seen = new Set<string>();
  for (const record of rollouts) {
    const r = record as { prompt_id?: unknown; arm?: unknown };
    const key = resultKey(String(r.prompt_id), r.arm as Arm);
    if (finishedOk.has(key) && !seen.has(key)) {
      seen.add(key);
      kept.push(record);
    }
  }
  if (kept.length !== rollouts.length) {
    await rewriteJsonl(rolloutsPath, kept);
    progress(`eval: dropped ${rollouts.length - kept.length} trajectory line(s) without a result; those tasks run again`);
  }
  return results;
}

/** The task/arm pairs still to run (failed ones too with retryFailed), and how many are done. */
function pendingUnits(selected: readonly TaskRecord[], options: ChatEvalOptions, results: ReadonlyMap<string, TaskResult>): { units: EvalUnit[]; skipped: number } {
  const isDone = (taskId: string, arm: Arm) => {
    const r = results.get(resultKey(taskId, arm));
    return r !== undefined && (r.status === 'ok' || !options.retryFailed);
  };
  const units = selected.map((task) => ({ task, arms: options.arms.filter((arm) => !isDone(task.id, arm)) })).filter((u) => u.arms.length > 0);
  const skipped = selected.length * options.arms.length - units.reduce((sum, u) => sum + u.arms.length, 0);
  return { units, skipped };
}

/**
 * One invocation's episodes: `concurrency` workers take tasks in order, play each arm, append
 * trajectories then result lines, and stop on the caller's signal (Ctrl-C) or after
 * stopAfterFailures failures in a row (`broken` says why).
 */
class EvalRun {
  /** Task/arm pairs this invocation ran. */
  ran = 0;
  /** Why the failure breaker stopped the eval, or null. */
  broken: string | null = null;
  private readonly store: ImageStore;
  private readonly resultLog: JsonlAppender;
  private readonly rolloutLog: JsonlAppender;
  private readonly breaker = new AbortController();
  private readonly signal: AbortSignal;
  private readonly stopAfter: number;
  private readonly summaryEvery: number;
  private readonly described: Parameters<typeof buildDocument>[0];
  private failuresInARow = 0;
  private finishedUnits = 0;
  private lastSummary = Date.now();

  constructor(
    private readonly options: ChatEvalOptions,
    private readonly plan: EvalPlan,
    private readonly results: Map<string, TaskResult>,
    private readonly total: number,
  ) {
    this.store = new ImageStore(join(plan.out, 'images'));
    this.resultLog = new JsonlAppender(join(plan.out, 'results.jsonl'));
    this.rolloutLog = new JsonlAppender(join(plan.out, ROLLOUT_FILE));
    this.signal = options.signal ? AbortSignal.any([options.signal, this.breaker.signal]) : this.breaker.signal;
    this.stopAfter = options.stopAfterFailures ?? 10;
    this.summaryEvery = (options.summaryEverySeconds ?? 10) * 1000;
    this.described = { ...options, tasksFile: plan.tasksFile, tasksSha256: plan.tasksSha256, presentation: plan.presentation };
  }

  async runAll(units: readonly EvalUnit[]): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < units.length && !this.signal.aborted) {
        const unit = units[next++];
        if (unit) await this.runUnit(unit);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.options.concurrency, units.length)) }, worker));
  }

  async close(): Promise<void> {
    await this.resultLog.close();
    await this.rolloutLog.close();
    await this.plan.scorer.judge?.flush();
  }

  document(): ResultsDocument {
    return buildDocument(this.described, this.plan.selected, this.results.values(), this.options.step ?? null);
  }

  private async runUnit(unit: EvalUnit): Promise<void> {
    let loaded: LoadedImage | null = null;
    let loadError: string | null = null;
    try {
      loaded = await loadTaskImage(unit.task, this.plan.taskDir);
    } catch (err) {
      loadError = (err as Error).message;
    }
    const outcomes: ArmOutcome[] = [];
    for (const arm of unit.arms) {
      if (this.signal.aborted) break;
      if (loaded === null) {
        outcomes.push({ result: { ...taskFields(unit.task), arm, status: 'failed', reason: loadError ?? 'task image not loaded', turns: 0, seconds: 0, requests: 0, retries: 0 } });
        continue;
      }
      const outcome = await this.runArm(unit.task, arm, loaded);
      if (outcome === null) break; // interrupted: this arm writes nothing and runs again next time
      outcomes.push(outcome);
    }
    if (outcomes.length > 0) await this.record(outcomes);
  }

  private async runArm(task: TaskRecord, arm: Arm, loaded: LoadedImage): Promise<ArmOutcome | null> {
    const usage = emptyUsage();
    const started = performance.now();
    // The replay's requests and time count with the episode's: the line says what the task cost.
    const measure = () => ({ seconds: (performance.now() - started) / 1000, requests: usage.requests, retries: usage.retries, promptTokens: usage.promptTokens, completionTokens: usage.completionTokens });
    try {
      const trajectory = await runEpisode(task, loaded.image, loaded.meta, this.store, this.options.policy, usage, {
        tools: arm === 'tools',
        limits: { maxTurns: this.options.maxTurns, maxToolCalls: this.plan.maxToolCalls },
        presentation: this.plan.presentation,
        ...(this.options.pixelBounds ? { pixelBounds: this.options.pixelBounds } : {}),
        signal: this.signal,
      });
      // The task image's metadata lets the scanners judge a zoom on empty space (env/episodes/scanners).
      const taskImage = { meta: loaded.meta, width: loaded.image.width, height: loaded.image.height };
      // A crop's box is in the image as the policy was shown it: under the episode's bounds.
      const scan = { taskImage, ...(this.options.pixelBounds ? { bounds: this.options.pixelBounds } : {}) };
      if (arm === 'tools' && this.options.counterfactual) {
        const config = this.plan.scorer.config.answer;
        const rule = answerRuleFor(task);
        const replay = await replayWithheld(task, loaded.image, loaded.meta, this.store, this.options.policy, usage, trajectory, {
          limits: { maxTurns: this.options.maxTurns, maxToolCalls: this.plan.maxToolCalls },
          presentation: this.plan.presentation,
          ...(this.options.pixelBounds ? { pixelBounds: this.options.pixelBounds } : {}),
          signal: this.signal,
          isCorrect: (answer) => scoreAnswer(answer, task.answer, config, rule).correct,
        });
        // Attached before scoring, so the scanners see it (answered_without_looking).
        if (replay !== null) trajectory.counterfactual = replay;
        const result = await scoreCompleted(trajectory, task, arm, this.plan.scorer, measure(), scan);
        return { result: { ...result, counterfactual: replay }, trajectory };
      }
      const result = await scoreCompleted(trajectory, task, arm, this.plan.scorer, measure(), scan);
      return { result, trajectory };
    } catch (err) {
      if (this.signal.aborted) return null;
      const failed: FailedResult = {
        ...taskFields(task),
        arm,
        status: 'failed',
        reason: err instanceof Error ? err.message : String(err),
        turns: err instanceof EpisodeRunError ? err.turns : 0,
        seconds: (performance.now() - started) / 1000,
        requests: usage.requests,
        retries: usage.retries,
      };
      return { result: failed };
    }
  }

  /** Appends a task's trajectories, then its results; counts failures in a row; reports progress. */
  private async record(outcomes: ArmOutcome[]): Promise<void> {
    const records = outcomes.flatMap(({ result, trajectory }) =>
      trajectory ? [{ ...trajectory, step: 0, group: ARMS.indexOf(result.arm), arm: result.arm, label: this.options.label }] : [],
    );
    if (records.length > 0) await this.rolloutLog.append(...records);
    await this.resultLog.append(...outcomes.map((o) => o.result));
    for (const { result } of outcomes) this.results.set(resultKey(result.task_id, result.arm), result);
    this.ran += outcomes.length;
    this.finishedUnits++;
    for (const { result } of outcomes) {
      this.failuresInARow = result.status === 'ok' ? 0 : this.failuresInARow + 1;
      if (this.stopAfter > 0 && this.failuresInARow >= this.stopAfter && this.broken === null && result.status === 'failed') {
        this.broken = `${this.failuresInARow} task/arm results in a row failed (last: ${result.reason}); stopped so that a broken server or task file does not fail every remaining task. Fix the cause and rerun the same command with --retry-failed (or --stop-after-failures 0 to never stop)`;
        this.breaker.abort();
      }
    }
    this.options.progress(progressLine(this.finishedUnits, this.total, outcomes.map((o) => o.result)));
    if (Date.now() - this.lastSummary >= this.summaryEvery) {
      this.lastSummary = Date.now();
      await writeResultsDocument(this.plan.out, this.document());
    }
  }
}

function progressLine(done: number, total: number, results: TaskResult[]): string {
  const parts = results.map((r) => {
    if (r.status === 'failed') return `${r.arm} FAILED (${r.reason.length > 120 ? `${r.reason.slice(0, 117)}...` : r.reason})`;
    const replay = r.counterfactual ? `, withheld: ${r.counterfactual.correct ? 'correct' : 'wrong'}${r.counterfactual.changed ? ', answer changed' : ''}` : '';
    return `${r.arm} ${r.correct_relaxed ? 'correct' : 'wrong'} (${r.turns} turn${r.turns === 1 ? '' : 's'}, ${r.tool_calls} call${r.tool_calls === 1 ? '' : 's'}${r.retries ? `, ${r.retries} retr${r.retries === 1 ? 'y' : 'ies'}` : ''}${replay})`;
  });
  return `eval: ${done}/${total} ${results[0]?.task_id ?? ''}: ${parts.join('; ')}`;
}
