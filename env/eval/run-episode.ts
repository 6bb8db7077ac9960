/**
 * Plays one episode between a task and a chat policy, in process, through the engine's own
 * `Episode`: the policy's text goes to `episode.step({text})`, which parses it (hermes,
 * OpenThinkIMG JSON, ReFocus python — never executed), runs the tools, and returns the
 * observation with the edited image; the loop ends when the episode does (an answer, or the
 * turn limit). Each turn the policy is sent the episode's `prompt`: the conversation exactly as
 * the presentation shows it, the same messages the env server gives the trainer and the veRL loop.
 * Nothing here parses model text, applies a tool or writes text the policy reads.
 */
import type { RgbImage } from '../core/image.js';
import { Episode, type EpisodeLimits } from '../episodes/episode.js';
import type { ImageStore } from '../episodes/image-store.js';
import type { ChatMessage } from '../episodes/messages.js';
import type { PixelBounds } from '../config/qwen-image-tokens.js';
import type { Presentation } from '../presentation/presentation.js';
import type { Trajectory } from '../episodes/trajectory.js';
import type { PixelMetadata } from '../tools/metadata.js';
import type { TaskRecord } from '../tasks/record.js';
import type { ChatUsage } from './chat-client.js';
import type { ChatPolicy } from './chat-policy.js';

export interface EpisodeRunOptions {
  tools: boolean;
  limits?: Partial<EpisodeLimits>;
  /** The system turn and image view (the env's own and every image when absent). */
  presentation?: Presentation;
  signal?: AbortSignal;
  /** Show each call its input image, unedited (the counterfactual replay, counterfactual.ts). */
  withholdResults?: boolean;
  /** The policy's image processor bounds (crop reads boxes through them); absent: Qwen2.5-VL's defaults. */
  pixelBounds?: PixelBounds;
  /** Assistant replies taken as the first turns, exactly as given, before the policy writes any. */
  forced?: readonly string[];
}

/** A failure part-way through an episode: how many assistant turns were done before it. */
export class EpisodeRunError extends Error {
  override name = 'EpisodeRunError';
  constructor(
    message: string,
    readonly turns: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export async function runEpisode(
  task: TaskRecord,
  image: RgbImage,
  meta: PixelMetadata,
  store: ImageStore,
  policy: ChatPolicy,
  usage: ChatUsage,
  options: EpisodeRunOptions,
): Promise<Trajectory> {
  const { episode, observation } = await Episode.start(task, image, meta, store, {
    tools: options.tools,
    ...(options.withholdResults ? { withholdResults: true } : {}),
    inlineImages: true,
    limits: options.limits ?? {},
    ...(options.presentation ? { presentation: options.presentation } : {}),
    ...(options.pixelBounds ? { pixelBounds: options.pixelBounds } : {}),
  });
  let prompt: ChatMessage[] | undefined = observation.prompt;
  for (const text of options.forced ?? []) {
    if (episode.isDone) break;
    prompt = (await episode.step({ text })).observation.prompt;
  }
  let turns = options.forced?.length ?? 0;
  while (!episode.isDone && prompt !== undefined) {
    let text: string;
    try {
      text = await policy.reply(prompt, usage, options.signal);
    } catch (err) {
      episode.close('failed');
      throw new EpisodeRunError(err instanceof Error ? err.message : String(err), turns, { cause: err });
    }
    turns++;
    const step = await episode.step({ text });
    prompt = step.observation.prompt;
  }
  return episode.trajectory();
}
