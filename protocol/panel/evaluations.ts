/**
 * Evaluations a run kept task by task (env/runs/eval-sets.ts): which there are, two of them
 * compared task by task, one record, and one task followed through a run's steps and evaluations.
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { hasFields, isNonNegativeInteger, isString } from '../guards.js';
import { request } from './messages.js';
import { EVAL_ARMS, type EvalArm, type InferredWeights, type RolloutRecord } from './rollouts.js';
import type { FindingName } from '../findings.js';

/** One evaluation of a run whose every task's rollout was kept: the trainer's rollouts/eval-<label>.jsonl, or a `vistool eval` folder's rollouts. */
export interface EvalSetInfo {
  /** Names the set within its run (`evals/compare`, `evals/record`). */
  key: string;
  label: string;
  /** The step it evaluated (the checkpoint's), null when unknown. */
  step: number | null;
  /** Path relative to the run directory. */
  file: string;
  bytes: number;
}

/** One side of a comparison: an evaluation of a run, in one arm. */
export interface EvalSide {
  runId: string;
  key: string;
  arm: EvalArm;
}

/** How a task fared from side a to side b. */
export type CompareOutcome = 'fixed' | 'broken' | 'both_wrong' | 'both_right' | 'only_a' | 'only_b';
export const COMPARE_OUTCOMES: readonly CompareOutcome[] = ['fixed', 'broken', 'both_wrong', 'both_right', 'only_a', 'only_b'];

/** A task's rollout on one side of a comparison: where to read it, and what the list shows. */
export interface ComparedRollout {
  line: number;
  correct: boolean | null;
  answer: string | string[] | null;
  reward: number | null;
  toolCalls: number;
  toolErrors: number;
  formatErrors: number;
  errorClasses: string[];
  /** The scanners that fired on it (RolloutSummary.findings); absent when its record was not scanned. */
  findings?: FindingName[];
}

export interface ComparedTask {
  promptId: string;
  question: string;
  gold: string | string[] | null;
  outcome: CompareOutcome;
  a: ComparedRollout | null;
  b: ComparedRollout | null;
}

export interface EvalComparison {
  a: EvalSide & { label: string; step: number | null };
  b: EvalSide & { label: string; step: number | null };
  /** Every task either side has, in side a's order, then side b's others. */
  tasks: ComparedTask[];
  counts: Record<CompareOutcome, number>;
  /** Accuracy of each side over the tasks both have (the counts' denominators). */
  shared: number;
}

/** Where one task appeared in a run: a training step's rollout or an evaluation's. */
export interface TimelineEntry {
  kind: 'step' | 'eval';
  /** The training step, or the step the evaluation evaluated (null when unknown). */
  step: number | null;
  /** The evaluation's set key and label, and its arm (kind 'eval'). */
  key?: string;
  label?: string;
  arm?: EvalArm;
  line: number;
  /** The rollout's index in its group (training). */
  group: number | null;
  correct: boolean | null;
  answer: string | string[] | null;
  reward: number | null;
  toolCalls: number;
  toolNames: string[];
  errorClasses: string[];
}

export interface TaskTimeline {
  runId: string;
  promptId: string;
  question: string;
  gold: string | string[] | null;
  /** Training rollouts by step, then evaluations by step (and label). */
  entries: TimelineEntry[];
  /** Files read, and lines that were not rollout records. */
  scanned: { files: number; rollouts: number; skipped: number };
}

/** The evaluations of a run that kept every task's rollout (env/runs/eval-sets.ts). */
export const EvalSetsRequest = request<{ runId: string }, { runId: string; sets: EvalSetInfo[] }>()('evals/list', (p): p is { runId: string } => hasFields(p, { runId: isString }));

const isEvalSide = (v: unknown): v is EvalSide => hasFields(v, { runId: isString, key: isString, arm: (a) => EVAL_ARMS.includes(a as EvalArm) });

/** Two evaluations side by side, task by task: which tasks b fixed, broke, or both got wrong (or right), with the counts. */
export const EvalCompareRequest = request<{ a: EvalSide; b: EvalSide }, EvalComparison>()('evals/compare', (p): p is { a: EvalSide; b: EvalSide } =>
  hasFields(p, { a: isEvalSide, b: isEvalSide }),
);

/** One record of an evaluation, by line. */
export const EvalRecordRequest = request<{ runId: string; key: string; line: number }, { runId: string; key: string; line: number; record: RolloutRecord } & InferredWeights>()(
  'evals/record',
  (p): p is { runId: string; key: string; line: number } => hasFields(p, { runId: isString, key: isString, line: isNonNegativeInteger }),
);

/** Most characters of a prompt id a timeline may ask for. */
export const PROMPT_ID_MAX = 300;

/** Every training step and evaluation of a run where one task (by prompt id) appeared, with its reward, answer and tool calls. */
export const TaskTimelineRequest = request<{ runId: string; promptId: string }, TaskTimeline>()('rollouts/timeline', (p): p is { runId: string; promptId: string } =>
  hasFields(p, { runId: isString, promptId: (v) => isString(v) && v.length > 0 && v.length <= PROMPT_ID_MAX }),
);

/** Gold answers × given answers of one evaluation in one arm, normalised as the scorer compares them (protocol/eval-summary.ts). */
export interface AnswerGrid {
  /** Row labels: the normalised gold answers. */
  gold: string[];
  /** Column labels: the gold answers, then other answers given, then NO_ANSWER when some episode gave none. */
  answers: string[];
  /** counts[row][column]: tasks with that gold answer that were answered so. */
  counts: number[][];
}

/** An accuracy over n tasks with its 95 % Wilson interval. */
export interface Proportion {
  correct: number;
  n: number;
  acc: number;
  ci95: [number, number];
}

/** One evaluation in one arm: accuracy, call rate and the answer grid. */
export interface ArmEvalSummary extends Proportion {
  /** Tasks whose episode made at least one tool call, and their share. */
  called: number;
  callRate: number;
  /** Null when the gold answers are free-form (more distinct ones than a grid can show). */
  grid: AnswerGrid | null;
  /** Calls that named another label than the question's, and the accuracy on them and on the others (protocol/eval-summary.ts); null when no question quotes a label or no record says what its call named. */
  offTarget?: OffTargetCalls | null;
}

/**
 * The right tool on the wrong bar. Where every episode with a call was scanned, the env's verdict
 * (a call that ran was off its task's target: the `off_target_call` finding); in records from before
 * the scanners, the first call naming another label than the question quotes.
 */
export interface OffTargetCalls {
  /** Episodes judged: with a call that ran (scanned), or with a call whose question quotes a label. */
  calls: number;
  offTarget: number;
  /** 'scanner': the `off_target_call` finding, so the viewer's finding filter opens exactly these; 'question-label': the older rule. */
  rule?: 'scanner' | 'question-label';
  off: Proportion;
  on: Proportion;
}

/** A difference of two accuracies with its 95 % interval and the method that gave it. */
export interface AccuracyDifference {
  diff: number;
  ci95: [number, number];
  /** 'newcombe-hybrid': independent samples (Newcombe 1998, method 10); 'newcombe-paired': the same tasks (Newcombe 1998, paired method 10). */
  method: 'newcombe-hybrid' | 'newcombe-paired';
}

/** One kept evaluation of a run, summarised per arm. */
export interface EvalSetSummary {
  key: string;
  label: string;
  step: number | null;
  arms: Partial<Record<EvalArm, ArmEvalSummary>>;
}

/** An arm's accuracy at the run's last evaluation minus an earlier one, on the tasks both have. */
export interface PairedChange {
  arm: EvalArm;
  /** The earlier evaluation's key, and the later one's. */
  from: string;
  to: string;
  /** Tasks in both, and how they moved (compareEvaluations' counts). */
  shared: number;
  bothRight: number;
  fixed: number;
  broken: number;
  bothWrong: number;
  difference: AccuracyDifference;
}

export interface RunEvalSummary {
  runId: string;
  sets: EvalSetSummary[];
  changes: PairedChange[];
}

/** Every kept evaluation of a run, per arm: accuracy with its interval, call rate, the gold × answer grid, and each earlier evaluation against the last on the same tasks. */
export const EvalSummaryRequest = request<{ runId: string }, RunEvalSummary>()('evals/summary', (p): p is { runId: string } => hasFields(p, { runId: isString }));
