/**
 * A run's rollouts, step by step: which step files exist, a step's index (one summary per line),
 * one record in full, and the command and notification that open the viewer at a step.
 * The search across steps is search.ts; evaluations' rollouts are evaluations.ts.
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { hasFields, isNonNegativeInteger, isString, optional } from '../guards.js';
import type { RolloutRecord } from '../rollout-record.js';
import { type FindingName, isFindingName } from '../findings.js';
import { command, notification, request } from './messages.js';

/** A rollout record as in docs/CONTRACTS.md. */
export type { RolloutRecord };

/** The arm an evaluation ran in: with the tools offered, or without. */
export type EvalArm = 'tools' | 'no_tools';
export const EVAL_ARMS: readonly EvalArm[] = ['tools', 'no_tools'];

export interface StepFileInfo {
  step: number;
  /** Path relative to the run directory, e.g. rollouts/step-000003.jsonl. */
  file: string;
  bytes: number;
}

/** One line of a rollout file, reduced to what lists, groups and filters need. */
export interface RolloutSummary {
  /** 0-based line number in the step file: the key for `rollouts/record`. */
  line: number;
  promptId: string;
  /** Index of the rollout within its group (the trainer's `group`), null when absent. */
  group: number | null;
  /** Whether the step trained this rollout's group (the trainer's `kept`); null when the record does not say. */
  kept: boolean | null;
  /** The env server could not take one of the episode's turns or score it (the record's `env_failed`); absent when the record does not say. */
  envFailed?: boolean;
  question: string;
  gold: string | string[] | null;
  answer: string | string[] | null;
  correct: boolean | null;
  reward: number | null;
  advantage: number | null;
  /** Counted from the turns by protocol/tool-use.ts: calls that ran, calls that failed, errors of no call. */
  toolCalls: number;
  toolErrors: number;
  formatErrors: number;
  errorClasses: string[];
  toolNames: string[];
  turns: number;
  endReason: string | null;
  /** An evaluation's record: the arm it ran in (the record's `arm`); absent for training rollouts. */
  arm?: EvalArm;
  /** The labels the rollout's first tool call named (its first list argument, e.g. `x_values`); absent when it made no call. */
  callTargets?: string[];
  /** The scanners that fired on it (protocol/findings.ts, the record's `findings`); absent when the record has no findings list. */
  findings?: FindingName[];
}

export interface StepIndex {
  runId: string;
  step: number;
  rollouts: RolloutSummary[];
  /** Lines that could not be read as a rollout record, with why. */
  skipped: { line: number; reason: string }[];
}

/**
 * Where the weights of a record that has none were found (env/runs/record-weights.ts): the host
 * puts them in the record's `reward_weights` only when they reproduce its reward, and says so here.
 */
export interface InferredWeights {
  inferredWeights?: string;
}

export const RolloutStepsRequest = request<{ runId: string }, { runId: string; steps: StepFileInfo[] }>()('rollouts/steps', (p): p is { runId: string } =>
  hasFields(p, { runId: isString }),
);

export const RolloutIndexRequest = request<{ runId: string; step: number }, StepIndex>()('rollouts/index', (p): p is { runId: string; step: number } =>
  hasFields(p, { runId: isString, step: isNonNegativeInteger }),
);

export const RolloutRecordRequest = request<{ runId: string; step: number; line: number }, { runId: string; step: number; line: number; record: RolloutRecord } & InferredWeights>()(
  'rollouts/record',
  (p): p is { runId: string; step: number; line: number } => hasFields(p, { runId: isString, step: isNonNegativeInteger, line: isNonNegativeInteger }),
);

export interface ShowInViewerParams {
  /** The run's id in the sending panel, and its directory (a VS Code host opens the viewer on the directory: ids are per panel). */
  runId: string;
  path: string;
  /** A step that has a rollouts file (the dashboard picks the nearest to the clicked point). */
  step: number;
  /** Only the step's rollouts on which this scanner fired (the dashboard's findings table). */
  finding?: FindingName;
  /** Instead of the step: one kept evaluation in one arm, optionally only the tasks of one cell of its gold × answer grid (the dashboard's evaluation summary). */
  evals?: EvalCell;
}

/** One kept evaluation of a run in one arm, and optionally one cell of its answer grid (protocol/eval-summary.ts): the viewer's evaluations view of it. */
export interface EvalCell {
  key: string;
  arm: EvalArm;
  /** The grid's row and column (normalised gold answer, normalised answer given). */
  gold?: string;
  answer?: string;
  /** Only the tasks on which this scanner fired (the dashboard's findings table). */
  finding?: FindingName;
}

export const isEvalCell = (v: unknown): v is EvalCell =>
  hasFields(v, { key: isString, arm: (a) => EVAL_ARMS.includes(a as EvalArm), gold: optional(isString), answer: optional(isString), finding: optional(isFindingName) });

/** Open the rollout viewer on a run at a step (a dashboard chart point): the VS Code host opens or reveals that panel; a browser opens the viewer page itself (`viewer?run=ID&step=N`). */
export const ShowInViewerCommand = command<ShowInViewerParams>()('viewer/show', (p): p is ShowInViewerParams =>
  hasFields(p, { runId: isString, path: isString, step: isNonNegativeInteger, evals: optional(isEvalCell), finding: optional(isFindingName) }),
);

/**
 * Show a run's step (VS Code: the extension's answer to a dashboard's viewer/show, sent once the
 * viewer is ready), with the finding to filter on when one is named. In a browser the viewer page
 * takes the same from its URL: `viewer?run=ID&step=N&finding=NAME`.
 */
export const ViewerShowStepNotification = notification<{ runId: string; step: number; evals?: EvalCell; finding?: FindingName }>()('viewer/showStep', (p): p is { runId: string; step: number; evals?: EvalCell; finding?: FindingName } =>
  hasFields(p, { runId: isString, step: isNonNegativeInteger, evals: optional(isEvalCell), finding: optional(isFindingName) }),
);
