/**
 * The counterfactual replay of an evaluated episode: did the tool's result change the answer?
 *
 * A tools-arm episode with at least one successful call is played again on the same task with the
 * results withheld (the engine's `withholdResults`: calls run as usual, the observation keeps its
 * text but carries the unedited image). The original assistant turns are sent word for word up to
 * and including the turn of the first successful call, so the call is the same; after it the
 * policy continues greedily to an answer. Later turns are regenerated, not forced: the policy now
 * reads another image, and its original later turns answered what it no longer sees.
 *
 * The replay's answer is scored by the relaxed rule the eval's accuracy uses, and `changed` compares
 * the normalised answers (protocol/eval-summary.ts' `gridAnswer`, the scorer's normalisation).
 */
import type { RgbImage } from '../core/image.js';
import type { EpisodeLimits } from '../episodes/episode.js';
import type { ImageStore } from '../episodes/image-store.js';
import type { AssistantTurn, Trajectory } from '../episodes/trajectory.js';
import type { PixelBounds } from '../config/qwen-image-tokens.js';
import type { Presentation } from '../presentation/presentation.js';
import type { TaskRecord } from '../tasks/record.js';
import type { PixelMetadata } from '../tools/metadata.js';
import { answerText } from '../rewards/answer-match.js';
import { gridAnswer } from '../../protocol/eval-summary.js';
import type { ChatUsage } from './chat-client.js';
import type { ChatPolicy } from './chat-policy.js';
import { EpisodeRunError, runEpisode } from './run-episode.js';

export interface Counterfactual {
  /** The replay's answer (a list answer joined with ' || '); null: it gave none. */
  answer: string | null;
  correct: boolean;
  changed: boolean;
}

/** The assistant turns of a trajectory, in order. */
function assistantTurns(trajectory: Pick<Trajectory, 'turns'>): AssistantTurn[] {
  return trajectory.turns.filter((turn): turn is AssistantTurn => turn.role === 'assistant');
}

/**
 * The assistant turns a replay forces: every turn up to and including the first with a
 * successful call (`ok`); null when no call succeeded (nothing to withhold: no replay).
 */
export function forcedTurns(trajectory: Pick<Trajectory, 'turns'>): string[] | null {
  const turns = assistantTurns(trajectory);
  const first = turns.findIndex((turn) => turn.calls.some((call) => call.ok));
  return first < 0 ? null : turns.slice(0, first + 1).map((turn) => turn.text);
}

/** Whether two answers differ once normalised as the scorer compares them. */
export function answersDiffer(a: string | string[] | null, b: string | string[] | null): boolean {
  return gridAnswer(a) !== gridAnswer(b);
}

export interface ReplayOptions {
  limits: Partial<EpisodeLimits>;
  presentation?: Presentation;
  pixelBounds?: PixelBounds;
  signal?: AbortSignal;
  /** Whether an answer is right, by the rule the real run was scored with. */
  isCorrect: (answer: string | string[] | null) => boolean;
}

/**
 * Replays `trajectory` (the real tools-arm episode) with its tool results withheld; null when it
 * had no successful call. A policy failure is an EpisodeRunError (the real run's result stands;
 * the caller records the task as failed so a rerun with --retry-failed replays it).
 */
export async function replayWithheld(
  task: TaskRecord,
  image: RgbImage,
  meta: PixelMetadata,
  store: ImageStore,
  policy: ChatPolicy,
  usage: ChatUsage,
  trajectory: Trajectory,
  options: ReplayOptions,
): Promise<Counterfactual | null> {
  return (await replayWithheldEpisode(task, image, meta, store, policy, usage, trajectory, options))?.counterfactual ?? null;
}

/**
 * replayWithheld, with the replayed episode itself: the rollout viewer's replay of a training
 * rollout (env/view/rollout-replay.ts) checks that it opened with the messages the recorded one read.
 */
export async function replayWithheldEpisode(
  task: TaskRecord,
  image: RgbImage,
  meta: PixelMetadata,
  store: ImageStore,
  policy: ChatPolicy,
  usage: ChatUsage,
  trajectory: Pick<Trajectory, 'turns' | 'answer'>,
  options: ReplayOptions,
): Promise<{ counterfactual: Counterfactual; replayed: Trajectory; forced: number } | null> {
  const forced = forcedTurns(trajectory);
  if (forced === null) return null;
  let replayed: Trajectory;
  try {
    replayed = await runEpisode(task, image, meta, store, policy, usage, {
      tools: true, withholdResults: true, forced, limits: options.limits,
      ...(options.presentation ? { presentation: options.presentation } : {}),
      ...(options.pixelBounds ? { pixelBounds: options.pixelBounds } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    if (!(err instanceof EpisodeRunError)) throw err;
    throw new EpisodeRunError(`counterfactual replay: ${err.message}`, err.turns, { cause: err.cause });
  }
  const answer = replayed.answer;
  return {
    counterfactual: {
      answer: answer === null ? null : answerText(answer),
      correct: options.isCorrect(answer),
      changed: answersDiffer(trajectory.answer, answer),
    },
    replayed,
    forced: forced.length,
  };
}
