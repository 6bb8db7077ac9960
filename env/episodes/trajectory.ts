/**
 * The record of one episode, in the rollout format of docs/CONTRACTS.md. Episodes write it,
 * rewards read it, the trainer adds step/group/advantage, the viewer shows it.
 */
import type { ActionError } from '../core/errors.js';
import type { TaskKind } from '../tasks/record.js';

export interface CallRecord {
  name: string;
  arguments: Record<string, unknown>;
  ok: boolean;
  /** Content hash of the image the tool read, and of the image it produced (when ok). */
  image_in?: string;
  image_out?: string;
  summary?: string;
  error?: ActionError;
}

export interface AssistantTurn {
  role: 'assistant';
  text: string;
  calls: CallRecord[];
  /** Parse errors and tool errors of this turn. */
  errors: ActionError[];
  answer: string | string[] | null;
}

export interface ObservationTurn {
  role: 'tool' | 'user';
  text: string;
  /** Content hashes of the images shown in this turn. */
  images: string[];
}

export type Turn = AssistantTurn | ObservationTurn;

/** One assistant turn's tokens as the trainer scored them (trainer/vistool_trainer/token_view.py). */
export interface TokenViewTurn {
  /** Index into the trajectory's `turns`. */
  turn: number;
  tokens: string[];
  /** Log-probability of each token under the policy that sampled it, at the sampling temperature. */
  logprob: number[];
  /** Entropy (nats) of the next-token distribution each token was drawn from. */
  entropy: number[];
  /** 1 where the loss reads the token. */
  mask: number[];
}

export interface Trajectory {
  prompt_id: string;
  task: { question: string; answer: string | string[]; kind: TaskKind; difficulty: number; image: string };
  turns: Turn[];
  /** The final answer given, or null when the episode ended without one. */
  answer: string | string[] | null;
  /** Why the episode ended: 'answer', 'max_turns', 'max_tool_calls', 'max_images', 'closed'. */
  end_reason: string | null;
  tool_calls: number;
  tool_errors: number;
  /** Filled in by scoring. */
  correct?: boolean;
  reward?: number;
  reward_breakdown?: Record<string, number>;
  /** The weight of each additive breakdown key; the other keys are modifiers and checks (protocol/reward-breakdown.ts). */
  reward_weights?: Record<string, number>;
  /** The score's notes, as the trainer records them (docs/CONTRACTS.md). */
  reward_notes?: string[];
  /** Filled in by the trainer. */
  step?: number;
  /** Per assistant turn the update trained on: its sampled tokens with log-prob, entropy and loss mask (docs/CONTRACTS.md). */
  token_view?: TokenViewTurn[];
  group?: number;
  advantage?: number;
}
