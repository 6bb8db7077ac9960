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
import { DEFAULT_LIMITS } from '../episodes/episode.js';
import { DEFAULT_PRESENTATION, type Presentation } from '../presentation/presentation.js';
import { ImageStore } from '../episodes/image-store.js';
import type { Trajectory } from '../episodes/trajectory.js';
import { TrajectoryScorer } from '../rewards/index.js';
import { parseTasks } from '../tasks/load.js';
import { isProcessAlive } from '../core/process-liveness.js';
import type { TaskRecord } from '../tasks/record.js';
import { resolveMetadata, type PixelMetadata } from '../tools/metadata.js';
import type { ChatUsage } from './chat-client.js';
import type { ChatPolicy } from './chat-policy.js';
import { JsonlAppender, readJsonl, repairTornTail, rewriteJsonl } from './jsonl-log.js';
import { RESULTS_FORMAT, RESULTS_VERSION, writeResultsDocument, type ResultsDocument } from './results-document.js';
import { identityDifferences, presentationHash, readRunRecord, sha256, writeRunRecord, type EvalIdentity, type EvalRunRecord } from './run-record.js';
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
}

export interface ChatEvalOutcome {
  document: ResultsDocument;
  interrupted: boolean;
  /** Task/arm pairs run by this invocation (not counting those found done). */
  ran: number;
  skipped: number;
}

async function loadTaskImage(task: TaskRecord, taskDir: string): Promise<{ image: RgbImage; meta: PixelMetadata }> {
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

export async function runChatEval(options: ChatEvalOptions): Promise<ChatEvalOutcome> {
  const out = resolve(options.out);
  const tasksFile = resolve(options.tasksFile);
  const taskDir = dirname(tasksFile);
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
  };

  await mkdir(join(out, 'rollouts'), { recursive: true });
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

  const resultsPath = join(out, 'results.jsonl');
  const rolloutsPath = join(out, ROLLOUT_FILE);
  const tornResults = await repairTornTail(resultsPath);
  const tornRollouts = await repairTornTail(rolloutsPath);
  if (tornResults + tornRollouts > 0) options.progress(`eval: removed a torn last line left by an interrupted run (${tornResults + tornRollouts} bytes)`);
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
    options.progress(`eval: dropped ${rollouts.length - kept.length} trajectory line(s) without a result; those tasks run again`);
  }

  const isDone = (taskId: string, arm: Arm) => {
    const r = results.get(resultKey(taskId, arm));
    return r !== undefined && (r.status === 'ok' || !options.retryFailed);
  };
  const units = selected.map((task) => ({ task, arms: options.arms.filter((arm) => !isDone(task.id, arm)) })).filter((u) => u.arms.length > 0);
  const skipped = selected.length * options.arms.length - units.reduce((sum, u) => sum + u.arms.length, 0);
  if (skipped > 0) options.progress(`eval: resuming ${out}: ${skipped} task/arm result(s) already there, ${units.reduce((s, u) => s + u.arms.length, 0)} to run`);

  const startedAt = previous?.started_at ?? Date.now() / 1000;
  const runRecord = (status: EvalRunRecord['status'], error?: string): EvalRunRecord => ({
    kind: 'eval',
    status,
    pid: process.pid,
    started_at: startedAt,
    updated_at: Date.now() / 1000,
    label: options.label,
    tasks_file: tasksFile,
    identity,
    ...(error ? { error } : {}),
  });
  await writeRunRecord(out, runRecord('running'));

  const store = new ImageStore(join(out, 'images'));
  const resultLog = new JsonlAppender(resultsPath);
  const rolloutLog = new JsonlAppender(rolloutsPath);
  const total = units.length;
  let finishedUnits = 0;
  let ran = 0;
  let lastSummary = Date.now();
  const summaryEvery = (options.summaryEverySeconds ?? 10) * 1000;
  const described = { ...options, tasksFile, tasksSha256, presentation };
  const writeSummary = () => writeResultsDocument(out, buildDocument(described, selected, results.values(), options.step ?? null));

  // Episodes stop on the caller's signal (Ctrl-C) or on the failure breaker below.
  const breaker = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, breaker.signal]) : breaker.signal;
  const stopAfter = options.stopAfterFailures ?? 10;
  let failuresInARow = 0;
  let broken: string | null = null;

  const runArm = async (task: TaskRecord, arm: Arm, loaded: { image: RgbImage; meta: PixelMetadata }): Promise<{ result: TaskResult; trajectory?: Trajectory } | null> => {
    const usage = emptyUsage();
    const started = performance.now();
    try {
      const trajectory = await runEpisode(task, loaded.image, loaded.meta, store, options.policy, usage, {
        tools: arm === 'tools',
        limits: { maxTurns: options.maxTurns, maxToolCalls },
        presentation,
        signal,
      });
      const measured = { seconds: (performance.now() - started) / 1000, requests: usage.requests, retries: usage.retries, promptTokens: usage.promptTokens, completionTokens: usage.completionTokens };
      const result = await scoreCompleted(trajectory, task, arm, scorer, measured);
      return { result, trajectory };
    } catch (err) {
      if (signal.aborted) return null;
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
  };

  const runUnit = async (unit: { task: TaskRecord; arms: Arm[] }): Promise<void> => {
    let loaded: { image: RgbImage; meta: PixelMetadata } | null = null;
    let loadError: string | null = null;
    try {
      loaded = await loadTaskImage(unit.task, taskDir);
    } catch (err) {
      loadError = (err as Error).message;
    }
    const outcomes: { result: TaskResult; trajectory?: Trajectory }[] = [];
    for (const arm of unit.arms) {
      if (signal.aborted) break;
      if (loaded === null) {
        outcomes.push({ result: { ...taskFields(unit.task), arm, status: 'failed', reason: loadError ?? 'task image not loaded', turns: 0, seconds: 0, requests: 0, retries: 0 } });
        continue;
      }
      const outcome = await runArm(unit.task, arm, loaded);
      if (outcome === null) break; // interrupted: this arm writes nothing and runs again next time
      outcomes.push(outcome);
    }
    if (outcomes.length === 0) return;
    const records = outcomes.flatMap(({ result, trajectory }) =>
      trajectory ? [{ ...trajectory, step: 0, group: ARMS.indexOf(result.arm), arm: result.arm, label: options.label }] : [],
    );
    if (records.length > 0) await rolloutLog.append(...records);
    await resultLog.append(...outcomes.map((o) => o.result));
    for (const { result } of outcomes) results.set(resultKey(result.task_id, result.arm), result);
    ran += outcomes.length;
    finishedUnits++;
    for (const { result } of outcomes) {
      failuresInARow = result.status === 'ok' ? 0 : failuresInARow + 1;
      if (stopAfter > 0 && failuresInARow >= stopAfter && broken === null && result.status === 'failed') {
        broken = `${failuresInARow} task/arm results in a row failed (last: ${result.reason}); stopped so that a broken server or task file does not fail every remaining task. Fix the cause and rerun the same command with --retry-failed (or --stop-after-failures 0 to never stop)`;
        breaker.abort();
      }
    }
    options.progress(progressLine(finishedUnits, total, outcomes.map((o) => o.result)));
    if (Date.now() - lastSummary >= summaryEvery) {
      lastSummary = Date.now();
      await writeSummary();
    }
  };

  let next = 0;
  const worker = async () => {
    while (next < units.length && !signal.aborted) {
      const unit = units[next++];
      if (unit) await runUnit(unit);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, units.length)) }, worker));
  } catch (err) {
    await writeRunRecord(out, runRecord('failed', (err as Error).message));
    throw err;
  } finally {
    await resultLog.close();
    await rolloutLog.close();
    await scorer.judge?.flush();
  }
  const interrupted = options.signal?.aborted === true;
  const document = buildDocument(described, selected, results.values(), options.step ?? null);
  await writeResultsDocument(out, document);
  if (broken !== null && !interrupted) {
    await writeRunRecord(out, runRecord('failed', broken));
    throw new Error(broken);
  }
  await writeRunRecord(out, runRecord(interrupted ? 'interrupted' : 'finished'));
  return { document, interrupted, ran, skipped };
}

function progressLine(done: number, total: number, results: TaskResult[]): string {
  const parts = results.map((r) => {
    if (r.status === 'failed') return `${r.arm} FAILED (${r.reason.length > 120 ? `${r.reason.slice(0, 117)}...` : r.reason})`;
    return `${r.arm} ${r.correct_relaxed ? 'correct' : 'wrong'} (${r.turns} turn${r.turns === 1 ? '' : 's'}, ${r.tool_calls} call${r.tool_calls === 1 ? '' : 's'}${r.retries ? `, ${r.retries} retr${r.retries === 1 ? 'y' : 'ies'}` : ''})`;
  });
  return `eval: ${done}/${total} ${results[0]?.task_id ?? ''}: ${parts.join('; ')}`;
}
