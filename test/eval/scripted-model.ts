/**
 * Real tasks for the eval tests (the synthetic generator, in process) and scripted "models"
 * that know them: the script recognises a task by the content hash of the first image it is
 * sent (the episode re-encodes the task image, so the hash is computed the same way here) and
 * answers in a chosen action format — hermes tool calls, ReFocus python blocks, structured
 * `tool_calls`, or garbage.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { contentHash, decodeImage, encodePng } from '../../env/core/image.js';
import { generateDataset } from '../../env/tasks/dataset.js';
import { loadTasks } from '../../env/tasks/load.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { BAND_FAMILIES, bandKey } from '../../env/tools/metadata.js';
import type { ScriptReply, SeenRequest } from './scripted-chat-server.js';

export interface GeneratedTasks {
  file: string;
  tasks: TaskRecord[];
  /** Task by the content hash of its image as an episode stores it. */
  byImage: Map<string, TaskRecord>;
}

export async function generateTasks(n: number, seed = 11): Promise<GeneratedTasks> {
  const dir = join(await mkdtemp(join(tmpdir(), 'vistool-eval-tasks-')), 'data');
  await generateDataset(dir, { kind: 'mixed', n, seed, split: 'test', difficulty: [1, 2], imageSize: null, concurrency: 2 });
  const file = join(dir, 'tasks.jsonl');
  const tasks = await loadTasks(file);
  const byImage = new Map<string, TaskRecord>();
  for (const task of tasks) byImage.set(contentHash(await encodePng(await decodeImage(resolve(dir, task.image)))), task);
  return { file, tasks, byImage };
}

export function taskOf(request: SeenRequest, data: GeneratedTasks): TaskRecord {
  const first = request.images[0];
  if (!first) throw new Error('the request holds no image');
  const task = data.byImage.get(contentHash(Buffer.from(first.replace(/^data:image\/png;base64,/u, ''), 'base64')));
  if (!task) throw new Error('the first image of the request is not a task image');
  return task;
}

export function goldText(task: TaskRecord): string {
  return typeof task.answer === 'string' ? task.answer : task.answer.join('||');
}

/** A call that is valid for the task: highlight the first label of its first band family. */
export function validCall(task: TaskRecord): { name: string; family: string; labels: string[] } {
  for (const family of BAND_FAMILIES) {
    const bands = task.meta[bandKey(family)];
    const first = bands ? Object.keys(bands)[0] : undefined;
    if (first !== undefined) return { name: `focus_on_${family}_with_highlight`, family, labels: [first] };
  }
  throw new Error(`task ${task.id} has no bands`);
}

export function hermesCall(task: TaskRecord): string {
  const call = validCall(task);
  return `<think>Focus first.</think>\n<tool_call>{"name": "${call.name}", "arguments": {"${call.family}": ${JSON.stringify(call.labels)}}}</tool_call>`;
}

export function refocusCall(task: TaskRecord): string {
  const call = validCall(task);
  return `THOUGHT 0: I should look at ${call.labels[0]}.\nACTION 0:\n\`\`\`python\nimage_with_focus = ${call.name}(image_1, ${JSON.stringify(call.labels)}, ${call.family}_bbox)\ndisplay(image_with_focus)\n\`\`\``;
}

/**
 * A model that calls one tool in the tools arm and then answers right; without tools it answers
 * right only for tasks at even positions of the file, so the arms' accuracies differ in a known way.
 */
export function answeringModel(data: GeneratedTasks, format: 'hermes' | 'refocus' | 'structured'): (r: SeenRequest) => ScriptReply {
  return (request) => {
    const task = taskOf(request, data);
    if (request.tools && request.turn === 0) {
      if (format === 'structured') {
        const call = validCall(task);
        return { toolCalls: [{ name: call.name, arguments: JSON.stringify({ [call.family]: call.labels }) }] };
      }
      return { text: format === 'hermes' ? hermesCall(task) : refocusCall(task) };
    }
    const right = request.tools || data.tasks.indexOf(task) % 2 === 0;
    const answer = right ? goldText(task) : 'Atlantis';
    return { text: format === 'refocus' ? `THOUGHT 1: Now I can read it.\nACTION 1: No action needed.\nANSWER: ${answer}. FINAL ANSWER: ${answer}. TERMINATE` : `<answer>${answer}</answer>` };
  };
}
