/**
 * `vistool data show PATH --id ID --out PNG`: draws one task with its bands outlined and
 * labelled and its question, answer and gold calls underneath — for a person checking data.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { decodeImage } from '../core/image.js';
import { resolveMetadata } from '../tools/metadata.js';
import { taskDirOf } from '../tasks/check.js';
import { loadTasks } from '../tasks/load.js';
import { renderTaskOverview } from '../tasks/show.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';
import { taskFileOf } from './task-file.js';
import type { CliStreams } from './data-gen.js';

const usage = `vistool data show PATH --id ID --out PNG

  PATH     a tasks.jsonl, or the folder holding it
  --id     the task's id
  --out    where to write the annotated PNG`;

export function createDataShowCommand(io: CliStreams = { stdout: process.stdout, stderr: process.stderr }): CliCommand {
  return {
    path: ['data', 'show'],
    summary: 'Draw one task with its bands outlined and labelled, for a person',
    usage,
    async run(argv) {
      const parsed = parseCommandArgs({ args: argv, options: { id: { type: 'string' }, out: { type: 'string' } }, allowPositionals: true, strict: true });
      const [given, ...extra] = parsed.positionals;
      if (given === undefined || extra.length > 0) throw new UsageError('give exactly one PATH: a tasks.jsonl or the folder holding it');
      const path = taskFileOf(given);
      if (!parsed.values.id) throw new UsageError('--id is required');
      if (!parsed.values.out) throw new UsageError('--out is required');
      const tasks = await loadTasks(path);
      const task = tasks.find((t) => t.id === parsed.values.id);
      if (!task) {
        const sample = tasks.slice(0, 5).map((t) => t.id).join(', ');
        throw new Error(`no task with id '${parsed.values.id}' in ${path} (${tasks.length} tasks, e.g. ${sample})`);
      }
      const imagePath = resolve(taskDirOf(path), task.image);
      const image = await decodeImage(imagePath).catch((err: Error) => {
        throw new Error(`cannot read the task's image ${imagePath}: ${err.message}`, { cause: err });
      });
      const meta = resolveMetadata(task.meta, image.width, image.height);
      const png = await renderTaskOverview(task, image, meta);
      const out = resolve(parsed.values.out);
      await mkdir(dirname(out), { recursive: true });
      await writeFile(out, png);
      io.stdout.write(`${out}\n`);
      return 0;
    },
  };
}

export const dataShowCommand = createDataShowCommand();
