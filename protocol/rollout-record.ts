/**
 * Generated from schemas/rollout-record.schema.json by scripts/generate-record-types.ts (npm run gen:types).
 * Do not edit: change the schema and regenerate.
 */

/**
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "TaskKind".
 */
export type TaskKind = 'table' | 'vbar' | 'hbar' | 'grouped' | 'line' | 'chart' | 'geometry' | 'search';
/**
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "Turn".
 */
export type Turn = AssistantTurn | ObservationTurn;
/**
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "ErrorClass".
 */
export type ErrorClass = 'E1' | 'E2' | 'E3' | 'E4' | 'E5' | 'E6';
/**
 * A final answer: one string, several (a list answer), or null when there was none.
 *
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "Answer".
 */
export type Answer = string | string[] | null;

/**
 * One trajectory: a line of a run's rollouts/step-NNNNNN.jsonl (docs/CONTRACTS.md, Rollout record). Episodes write the task, turns, answer and counts; scoring adds correct and the reward fields; the trainer adds step, group, advantage, kept and token_view. The TypeScript types in protocol/rollout-record.ts are generated from this file (npm run gen:types); the trainer's tests validate what it writes against it.
 */
export interface RolloutRecord {
  /**
   * The task's id.
   */
  prompt_id: string;
  task: TaskSummary;
  /**
   * The messages the policy read before its first turn, exactly as the env rendered them for the episode's presentation (docs/CONTRACTS.md, Presentation): the system turn when there is one, then the user turn, with their parts in the order the policy read them and images by content hash. Episodes write it; records written before it existed lack it.
   */
  opening?: OpeningMessage[];
  turns: Turn[];
  answer: Answer;
  /**
   * Why the episode ended: 'answer', 'max_turns', 'max_tool_calls', 'max_images', 'closed'; 'env_error' when the env server could not take one of its turns and the trainer wrote the record itself (env_failed); null when the env server had not ended it (the trainer stopped it early, the reason in reward_notes).
   */
  end_reason: string | null;
  tool_calls: number;
  tool_errors: number;
  /**
   * Filled in by scoring.
   */
  correct?: boolean;
  /**
   * The scanners that fired on this trajectory (env/episodes/scanners): how the episode used its tools, beyond whether it called one. Empty when none fired; 'answered_without_looking' only where a counterfactual replay exists.
   */
  findings?: (
    | 'off_target_call'
    | 'repeated_call'
    | 'ignored_tool_error'
    | 'degenerate_edit'
    | 'format_collapse'
    | 'answered_without_looking'
  )[];
  /**
   * An evaluated episode replayed with its tool results withheld (the same calls; each observation carries the unedited image and the same text), the policy continuing greedily. Absent when the episode had no successful call or the evaluation ran without --counterfactual.
   */
  counterfactual?: {
    /**
     * The replay's final answer (null: it gave none).
     */
    answer: string | null;
    correct: boolean;
    /**
     * The replay's normalised answer differs from the real run's.
     */
    changed: boolean;
  };
  reward?: number;
  reward_breakdown?: {
    [k: string]: number;
  };
  /**
   * The weight of each additive breakdown key; the other keys are modifiers and checks (protocol/reward-breakdown.ts).
   */
  reward_weights?: {
    [k: string]: number;
  };
  /**
   * The score's notes, as the trainer records them.
   */
  reward_notes?: string[];
  /**
   * Filled in by the trainer.
   */
  step?: number;
  group?: number;
  advantage?: number;
  /**
   * Whether the step trained this record's group: false for a group dynamic sampling dropped (no spread in its metric), one dropped because an episode of it failed at the env server (rl.failed_groups 'drop'; env_failed), and one drawn after the step had enough groups.
   */
  kept?: boolean;
  /**
   * The env server could not take one of this episode's turns or score it (an expired episode, a lost server, a tool that broke): the episode ended there or scored 0, the reason in reward_notes. rl.failed_groups decides whether its group is trained. Written by vistool's trainer on every record, training and evaluation; absent in records written before it existed and in the veRL agent loop's, which write no record of a failed episode.
   */
  env_failed?: boolean;
  /**
   * Per assistant turn the update trained on: its sampled tokens with log-prob, entropy and loss mask.
   */
  token_view?: TokenViewTurn[];
  /**
   * Who wrote the record when it was not vistool's trainer: 'verl' for the veRL bridge (its smoke, and its agent loop while veRL trains; docs/VERL.md).
   */
  engine?: string;
  /**
   * veRL's uid of the record's group (one per prompt and step); written by the veRL agent loop, which leaves advantage and kept out.
   */
  group_uid?: string;
  /**
   * The policy's tokens in the episode (response_mask 1), as the veRL bridge counts them.
   */
  response_tokens?: number;
  /**
   * An evaluation's record: whether the episode ran with the tools on or off (the trainer's rollouts/eval-<label>.jsonl and vistool eval's rollouts; group is 0 for tools, 1 for no_tools).
   */
  arm?: 'tools' | 'no_tools';
  /**
   * An evaluation's record: the evaluation's label ('before', 'after_sft', 'rl_step_10', 'after_rl' in the trainer; vistool eval's --label).
   */
  label?: string;
}
/**
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "TaskSummary".
 */
export interface TaskSummary {
  question: string;
  answer: string | string[];
  kind: TaskKind;
  difficulty: number;
  /**
   * Content hash of the task image.
   */
  image: string;
}
/**
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "OpeningMessage".
 */
export interface OpeningMessage {
  role: 'system' | 'user';
  content: (OpeningText | OpeningImage)[];
}
export interface OpeningText {
  type: 'text';
  text: string;
}
export interface OpeningImage {
  type: 'image';
  /**
   * Content hash of the image (the run's images/<ref>.png).
   */
  ref: string;
}
/**
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "AssistantTurn".
 */
export interface AssistantTurn {
  role: 'assistant';
  text: string;
  calls: CallRecord[];
  /**
   * Parse errors and tool errors of this turn.
   */
  errors: ActionError[];
  answer: Answer;
}
/**
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "CallRecord".
 */
export interface CallRecord {
  name: string;
  /**
   * The call's arguments as parsed from the model's text.
   */
  arguments: {
    [k: string]: unknown;
  };
  ok: boolean;
  /**
   * Content hash of the image the tool read.
   */
  image_in?: string;
  /**
   * Content hash of the image it produced (when ok).
   */
  image_out?: string;
  summary?: string;
  error?: ActionError;
  /**
   * Whether the call acted on the task's target (the gold call's arguments, geometry's named points, a search scene's target box, a converted benchmark photo's target boxes): on, partly, off, or unknown where the task carries no target. Set on calls that ran (ok).
   */
  target?: 'on' | 'partly' | 'off' | 'unknown';
  /**
   * A zoom_in that ran on a task with a target box (a chart or table with gold calls: the box around the gold bands in the image the call read), or a zoom_in or crop on a search scene (its rectangle of the task image, through earlier zooms and crops, against meta.target_bbox), or a zoom_in or crop on a converted benchmark photo whose record carries target boxes (V*'s meta.targets; the same rectangle against the union box of the targets): the intersection over union of its crop with that box, 0 when an earlier zoom cropped the target away (env/episodes/call-target.ts, zoomTargetIou). Absent for other calls and tasks without a target box. The trainer averages it as tools/crop_iou.
   */
  target_iou?: number;
}
/**
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "ActionError".
 */
export interface ActionError {
  class: ErrorClass;
  message: string;
  /**
   * Name of the tool involved, when the call named one: the tool whose call failed, or for an unknown tool (E1) the name as the policy wrote it.
   */
  tool?: string;
  /**
   * Parse errors: the character offset (UTF-16 code units) into the turn's text, when it is known.
   */
  offset?: number;
  /**
   * Parse errors: the 1-based line of offset.
   */
  line?: number;
}
/**
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "ObservationTurn".
 */
export interface ObservationTurn {
  role: 'tool' | 'user';
  text: string;
  /**
   * Content hashes of the images shown in this turn.
   */
  images: string[];
}
/**
 * This interface was referenced by `RolloutRecord`'s JSON-Schema
 * via the `definition` "TokenViewTurn".
 */
export interface TokenViewTurn {
  /**
   * Index into the trajectory's turns.
   */
  turn: number;
  tokens: string[];
  /**
   * Log-probability of each token under the policy that sampled it, at the sampling temperature.
   */
  logprob: number[];
  /**
   * Entropy (nats) of the next-token distribution each token was drawn from.
   */
  entropy: number[];
  /**
   * 1 where the loss reads the token.
   */
  mask: (0 | 1)[];
}
