/**
 * One line of `results.jsonl`: how one task went in one arm (with tools or without). A finished
 * episode is scored here — relaxed and exact accuracy by rule, the run's reward, the judge's
 * verdict when a judge is configured — and reduced to the counts the summary needs, so the
 * summary never re-reads trajectories. A task that could not be run is a `failed` line with its
 * reason: never dropped.
 *
 * Pure apart from the judge request; never writes anything.
 */
import { ERROR_CLASS_DESCRIPTIONS, type ErrorClass } from '../core/errors.js';
import type { Trajectory } from '../episodes/trajectory.js';
import { assistantTurns } from '../rewards/format.js';
import { answerRuleFor, scoreAnswer, scoreTrajectory, type RewardConfig, type TrajectoryScorer } from '../rewards/index.js';
import type { TaskRecord } from '../tasks/record.js';
import { scanTrajectory, type Finding, type ScanContext } from '../episodes/scanners/index.js';
import type { CallTarget } from '../episodes/call-target.js';
import type { Counterfactual } from './counterfactual.js';

export type Arm = 'tools' | 'no_tools';
export const ARMS: readonly Arm[] = ['tools', 'no_tools'];

export const ERROR_CLASSES = Object.keys(ERROR_CLASS_DESCRIPTIONS) as ErrorClass[];

interface ResultBase {
  task_id: string;
  arm: Arm;
  kind: string;
  difficulty: number;
  family: string | null;
  /** Wall time of the episode and its scoring, seconds. */
  seconds: number;
  /** HTTP requests to the policy server (retries included), and how many were retries. */
  requests: number;
  retries: number;
}

export interface CompletedResult extends ResultBase {
  status: 'ok';
  answer: string | string[] | null;
  gold: string | string[];
  /** ChartQA relaxed accuracy by rule (numbers within the reward config's relative tolerance). */
  correct_relaxed: boolean;
  /** The same rule with no numeric tolerance and all-or-nothing lists (text still normalised). */
  correct_exact: boolean;
  /** The judge's verdict; null without a judge, or when the judge failed or was not asked. */
  judge: boolean | null;
  judge_error?: string;
  reward: number;
  /** An answer was given and no turn had a malformed call (E1): the trainer's format_valid. */
  format_valid: boolean;
  /** Successful tool calls, failed tool calls, assistant turns. */
  tool_calls: number;
  tool_errors: number;
  turns: number;
  end_reason: string | null;
  /** Errors recorded in assistant turns, by class; classes that did not occur are left out. */
  errors: Partial<Record<ErrorClass, number>>;
  /**
   * The calls that ran, by their target (env/episodes/call-target.ts): on, partly, off, unknown.
   * Absent in results written before issue 43.
   */
  targets?: Record<CallTarget, number>;
  /** The scanners that fired on the episode (env/episodes/scanners). Absent in results written before issue 43. */
  findings?: Finding[];
  prompt_tokens: number;
  completion_tokens: number;
  /**
   * The tools arm of an eval with --counterfactual: the replay with the tool results withheld
   * (counterfactual.ts), or null when the episode had no successful call and was not replayed
   * (its counterfactual is itself). Absent without --counterfactual and in the no-tools arm.
   */
  counterfactual?: Counterfactual | null;
}

export interface FailedResult extends ResultBase {
  status: 'failed';
  /** What went wrong, for a person: the HTTP status, the timeout, the unreadable image. */
  reason: string;
  /** Assistant turns completed before the failure. */
  turns: number;
}

export type TaskResult = CompletedResult | FailedResult;

/** The rule config for exact accuracy: no numeric tolerance, whole lists only, ANLS only when perfect. */
export function exactAnswerConfig(config: RewardConfig['answer']): RewardConfig['answer'] {
  return { ...config, relative_tolerance: 0, list_score: 'exact', anls_correct_at: 1 };
}

export function resultKey(taskId: string, arm: Arm): string {
  return `${taskId}\u0000${arm}`;
}

export function taskFields(task: TaskRecord): Pick<ResultBase, 'task_id' | 'kind' | 'difficulty' | 'family'> {
  return { task_id: task.id, kind: task.kind, difficulty: task.difficulty, family: task.family ?? task.query?.family ?? null };
}

function isTaskResult(value: unknown): value is TaskResult {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.task_id === 'string' && ARMS.includes(v.arm as Arm) && (v.status === 'ok' || v.status === 'failed');
}

/** Latest line per task/arm (a retried failure is superseded by its rerun). */
export function latestResults(values: unknown[], file: string): Map<string, TaskResult> {
  const latest = new Map<string, TaskResult>();
  values.forEach((value, i) => {
    if (!isTaskResult(value)) throw new Error(`${file}: record ${i + 1} is not a task result (needs task_id, arm, status); was the file edited?`);
    latest.set(resultKey(value.task_id, value.arm), value);
  });
  return latest;
}

export interface Measured {
  seconds: number;
  requests: number;
  retries: number;
  promptTokens: number;
  completionTokens: number;
}

/** The calls that ran in a trajectory, counted by target; a call without one (an older record) counts as unknown. */
export function countTargets(trajectory: Pick<Trajectory, 'turns'>): Record<CallTarget, number> {
  const counts: Record<CallTarget, number> = { on: 0, partly: 0, off: 0, unknown: 0 };
  for (const turn of assistantTurns(trajectory)) for (const call of turn.calls) if (call.ok) counts[call.target ?? 'unknown'] += 1;
  return counts;
}

/**
 * Scores a finished trajectory and fills in its reward fields and findings (the rollout record
 * carries them), then returns the result line. `context`: the task image's size and metadata,
 * which one scanner (degenerate_edit's zoom rule) needs.
 */
export async function scoreCompleted(
  trajectory: Trajectory,
  task: TaskRecord,
  arm: Arm,
  scorer: TrajectoryScorer,
  measured: Measured,
  context: ScanContext = {},
): Promise<CompletedResult> {
  const config = scorer.config;
  const rule = answerRuleFor(task);
  const verdict = await scorer.verdict(trajectory, task.answer, rule);
  const scored = scoreTrajectory(trajectory, task.answer, config, verdict, rule);
  trajectory.reward = scored.reward;
  trajectory.reward_breakdown = scored.components;
  trajectory.reward_weights = scored.weights;
  trajectory.correct = scored.correct;
  trajectory.findings = scanTrajectory(trajectory, context);
  const turns = assistantTurns(trajectory);
  const errors: Partial<Record<ErrorClass, number>> = {};
  for (const turn of turns) for (const e of turn.errors) errors[e.class] = (errors[e.class] ?? 0) + 1;
  const result: CompletedResult = {
    ...taskFields(task),
    arm,
    status: 'ok',
    answer: trajectory.answer,
    gold: task.answer,
    correct_relaxed: scoreAnswer(trajectory.answer, task.answer, config.answer, rule).correct,
    correct_exact: scoreAnswer(trajectory.answer, task.answer, exactAnswerConfig(config.answer), rule).correct,
    judge: verdict?.status === 'ok' ? verdict.correct : null,
    reward: scored.reward,
    format_valid: trajectory.answer !== null && !turns.some((t) => t.errors.some((e) => e.class === 'E1')),
    tool_calls: trajectory.tool_calls,
    tool_errors: trajectory.tool_errors,
    turns: turns.length,
    end_reason: trajectory.end_reason,
    errors,
    targets: countTargets(trajectory),
    findings: [...trajectory.findings],
    seconds: measured.seconds,
    requests: measured.requests,
    retries: measured.retries,
    prompt_tokens: measured.promptTokens,
    completion_tokens: measured.completionTokens,
  };
  if (verdict?.status === 'error') result.judge_error = verdict.reason;
  return result;
}
