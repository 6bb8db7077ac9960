/**
 * A training run directory for the viewer's "Replay without the tool's result": real generated
 * tasks (the synthetic generator), each played through the engine's own episode with the run
 * config's presentation, by a policy that calls a tool and then answers right only when the last
 * image it was shown is the edited one (a "looking" policy). The records are written as the trainer
 * writes a step file (step, group, advantage, kept; no `arm`), with the answer, scoring and images.
 *
 * Line 0 and line 1 called a tool that ran and answered right; line 2 answered at once (no call: a
 * replay has nothing to withhold). The recording policy is in-process (it makes the fixture; it is
 * not what a test checks), and the run's config.json names the tasks file as data.train.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { decodeImage } from '../../env/core/image.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import type { ChatMessage } from '../../env/episodes/messages.js';
import type { Trajectory } from '../../env/episodes/trajectory.js';
import type { ChatPolicy } from '../../env/eval/chat-policy.js';
import { evalEpisodeSettings } from '../../env/eval/eval-settings.js';
import { runEpisode } from '../../env/eval/run-episode.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import { answerRuleFor, resolveRewardConfig, scoreAnswer } from '../../env/rewards/index.js';
import { generateTasks, goldText, hermesCall, type GeneratedTasks } from '../eval/scripted-model.js';

export const RUN_CONFIG = { name: 'replay-fixture', data: { train: '', eval: null } };

/** The image refs of a conversation's image parts, in order. */
export function imageRefs(messages: readonly ChatMessage[]): string[] {
  return messages.flatMap((m) => m.content.flatMap((p) => (p.type === 'image' ? [p.ref] : [])));
}

/** Calls a tool on its first turn (except where told to answer at once), then answers right only after seeing the edited image. */
function recordingPolicy(data: GeneratedTasks, answerAtOnce: ReadonlySet<string>): ChatPolicy {
  return {
    reply(conversation) {
      const question = conversation.flatMap((m) => m.content.flatMap((p) => (p.type === 'text' ? [p.text] : []))).join('\n');
      const task = data.tasks.find((t) => question.includes(t.question));
      if (!task) throw new Error('the recording policy was sent a conversation about no known task');
      const assistantTurns = conversation.filter((m) => m.role === 'assistant').length;
      if (assistantTurns === 0 && !answerAtOnce.has(task.id)) return Promise.resolve(hermesCall(task));
      const refs = imageRefs(conversation);
      const sawEdit = refs.length > 1 && refs[refs.length - 1] !== refs[0];
      return Promise.resolve(`<answer>${sawEdit || answerAtOnce.has(task.id) ? goldText(task) : 'Atlantis'}</answer>`);
    },
  };
}

export interface TrainingReplayRun {
  dir: string;
  data: GeneratedTasks;
  records: Trajectory[];
}

export async function writeTrainingReplayRun(dir: string): Promise<TrainingReplayRun> {
  const data = await generateTasks(3, 23);
  await mkdir(join(dir, 'rollouts'), { recursive: true });
  const config = { ...RUN_CONFIG, data: { train: data.file, eval: null } };
  await writeFile(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  const settings = evalEpisodeSettings({ path: join(dir, 'config.json'), config }, {});
  const answerConfig = resolveRewardConfig({}).answer;
  const store = new ImageStore(join(dir, 'images'));
  const third = data.tasks[2];
  if (!third) throw new Error('the generator made fewer than 3 tasks');
  const policy = recordingPolicy(data, new Set([third.id]));
  const records: Trajectory[] = [];
  for (const [group, task] of data.tasks.entries()) {
    const image = await decodeImage(resolve(join(data.file, '..'), task.image));
    const trajectory = await runEpisode(task, image, resolveMetadata(task.meta, image.width, image.height), store, policy, { requests: 0, retries: 0, promptTokens: 0, completionTokens: 0 }, {
      tools: true,
      limits: { maxTurns: settings.maxTurns, maxToolCalls: settings.maxToolCalls },
      presentation: settings.presentation,
      pixelBounds: settings.pixelBounds,
    });
    const correct = scoreAnswer(trajectory.answer, task.answer, answerConfig, answerRuleFor(task)).correct;
    records.push({ ...trajectory, correct, reward: correct ? 1 : 0, step: 1, group, advantage: 0, kept: true });
  }
  await writeFile(join(dir, 'rollouts', 'step-000001.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await writeFile(join(dir, 'metrics.jsonl'), JSON.stringify({ step: 1, stage: 'rl', reward_mean: 0.5 }) + '\n');
  return { dir, data, records };
}
