/**
 * A training rollout replayed with its tool results withheld, for the viewer's "Replay without the
 * tool's result": the eval's counterfactual replay (env/eval/counterfactual.ts, the code path of
 * `vistool eval --counterfactual`), on a record the trainer wrote, against the policy the host was
 * given (replay-policy.ts). The record's assistant turns are forced up to and including the first
 * successful call, the engine runs that call and shows its unedited input image with the same text,
 * and the policy goes on greedily.
 *
 * What the replay is built from, all read from the run directory, never from the panel:
 *   - the record itself, by its step and line (the panel sends only where it is);
 *   - the task, by the record's prompt id, in the run's task files (run-task-record.ts), with its
 *     image and metadata, as the trainer's env server read them;
 *   - what the policy reads and how long it may go on: the run's config.json (presentation, turn
 *     and call limits, eval.max_new_tokens, pixel bounds), as `vistool eval` reads a checkpoint's;
 *   - how an answer is scored: the run config's `rewards.answer`, the relaxed rule.
 * The replayed episode's opening is compared with the record's, so a run whose config or task file
 * changed since says so instead of answering another prompt in silence.
 *
 * Never writes in the run directory: the replay's images go to a temporary folder, removed after.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { decodeImage, type RgbImage } from '../core/image.js';
import { DEFAULT_LIMITS } from '../episodes/episode.js';
import { ImageStore } from '../episodes/image-store.js';
import type { Trajectory } from '../episodes/trajectory.js';
import { OpenAIChatPolicy } from '../eval/chat-policy.js';
import type { ChatUsage } from '../eval/chat-client.js';
import { replayWithheldEpisode } from '../eval/counterfactual.js';
import { evalEpisodeSettings, readRunConfigFile } from '../eval/eval-settings.js';
import { answerRuleFor, answerText, resolveRewardConfig, scoreAnswer } from '../rewards/index.js';
import { validateTaskRecord } from '../tasks/load.js';
import type { TaskRecord } from '../tasks/record.js';
import { resolveMetadata } from '../tools/metadata.js';
import { findTaskRecord } from '../runs/run-task-record.js';
import type { WithheldReplayResult } from '../../protocol/panel/replay.js';
import type { ReplayPolicy } from './replay-policy.js';

/** The reply budget when the run config has none to give (it always does through its defaults). */
const DEFAULT_MAX_TOKENS = 1024;

export interface RolloutReplayOptions {
  signal?: AbortSignal;
  /** Per request, covering the body (default 300 s: a checkpoint on a CPU is slow). */
  timeoutMs?: number;
  /** Retries of a failed request (default 2: a person is waiting on the button). */
  maxRetries?: number;
  backoffMs?: number;
  /** The environment the API key is read from (tests); default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The task a rollout played, its image and metadata, from the run's task files. */
async function taskOf(runDir: string, promptId: string): Promise<{ task: TaskRecord; image: RgbImage; file: string }> {
  const found = await findTaskRecord(runDir, promptId);
  if (found === null) {
    throw new Error(`task '${promptId}' is in none of the run's task files (its config.json's data.train and data.eval, and data/train, data/eval in ${runDir}): the replay needs the task's image and metadata`);
  }
  const value: unknown = JSON.parse(found.line);
  const problems = validateTaskRecord(value);
  if (problems.length > 0) throw new Error(`task '${promptId}' in ${found.file} is not a valid task record: ${problems.slice(0, 3).join('; ')}`);
  const task = value as TaskRecord;
  const path = resolve(dirname(found.file), task.image);
  let image: RgbImage;
  try {
    image = await decodeImage(path, { maxPixels: DEFAULT_LIMITS.maxPixels });
  } catch (err) {
    throw new Error(`cannot decode the image of task '${promptId}', ${path} (${(err as Error).message})`, { cause: err });
  }
  return { task, image, file: found.file };
}

/** Replays the rollout `record` of the run in `runDir` with its tool results withheld. */
export async function replayRolloutWithheld(
  runDir: string,
  record: Trajectory,
  policy: ReplayPolicy,
  options: RolloutReplayOptions = {},
): Promise<Omit<WithheldReplayResult, 'runId' | 'step' | 'line'>> {
  if (record.arm !== undefined) {
    throw new Error(`this is an evaluation's record (arm ${record.arm}): evaluations are replayed as they run, by \`vistool eval --counterfactual\` or the trainer's own evaluation, and their records show the replay`);
  }
  const runConfig = await readRunConfigFile(join(runDir, 'config.json'), false, 'config.json');
  if (runConfig === null) {
    throw new Error(`${runDir} has no config.json: a replay shows the policy what its training run showed it (the presentation, the limits), which that file says`);
  }
  const settings = evalEpisodeSettings(runConfig, {});
  const answerConfig = resolveRewardConfig(runConfig.config.rewards ?? {}, 'config.json rewards').answer;
  const { task, image } = await taskOf(runDir, record.prompt_id);
  const meta = resolveMetadata(task.meta, image.width, image.height);
  const chat = new OpenAIChatPolicy(
    {
      baseUrl: policy.baseUrl,
      model: policy.model,
      apiKeyEnv: policy.apiKeyEnv,
      // Greedy: the replay is compared with what the policy did, one run of it, not a sample.
      temperature: 0,
      maxTokens: settings.maxNewTokens ?? DEFAULT_MAX_TOKENS,
      timeoutMs: options.timeoutMs ?? 300_000,
      maxRetries: options.maxRetries ?? 2,
      backoffInitialMs: options.backoffMs ?? 1000,
      backoffMaxMs: Math.max(options.backoffMs ?? 1000, 10_000),
      retryAfterMaxMs: 30_000,
      ...(options.env ? { env: options.env } : {}),
    },
    { observationRole: policy.observationRole },
  );
  const usage: ChatUsage = { requests: 0, retries: 0, promptTokens: 0, completionTokens: 0 };
  const scratch = await mkdtemp(join(tmpdir(), 'vistool-replay-'));
  const started = performance.now();
  try {
    const rule = answerRuleFor(task);
    const outcome = await replayWithheldEpisode(task, image, meta, new ImageStore(scratch), chat, usage, record, {
      limits: { maxTurns: settings.maxTurns, maxToolCalls: settings.maxToolCalls },
      presentation: settings.presentation,
      pixelBounds: settings.pixelBounds,
      ...(options.signal ? { signal: options.signal } : {}),
      isCorrect: (answer) => scoreAnswer(answer, task.answer, answerConfig, rule).correct,
    });
    if (outcome === null) throw new Error('this rollout made no successful tool call: there is no tool result to withhold');
    return {
      policy: policy.description,
      recordedAnswer: record.answer === null ? null : answerText(record.answer),
      replay: outcome.counterfactual,
      forcedTurns: outcome.forced,
      turns: outcome.replayed.turns.filter((turn) => turn.role === 'assistant').length,
      openingMatches: record.opening === undefined ? null : JSON.stringify(record.opening) === JSON.stringify(outcome.replayed.opening),
      requests: usage.requests,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
