/**
 * The task record behind a rollout, found by its prompt id in the run's task files: the ones its
 * config.json names (data.train, data.eval) and the ones the trainer generated into the run
 * (data/train, data/eval). The record carries the task image's bands, so the playground can open
 * a rollout's image with its real metadata instead of OCR grounding.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { isRecord } from '../../protocol/guards.js';

async function taskFiles(runDir: string): Promise<string[]> {
  const files = [join(runDir, 'data', 'train', 'tasks.jsonl'), join(runDir, 'data', 'eval', 'tasks.jsonl')];
  try {
    const config: unknown = JSON.parse(await readFile(join(runDir, 'config.json'), 'utf8'));
    const data = isRecord(config) && isRecord(config.data) ? config.data : {};
    for (const key of ['train', 'eval']) {
      const path = data[key];
      if (typeof path === 'string' && path !== '') files.unshift(isAbsolute(path) ? path : resolve(runDir, path));
    }
  } catch {
    // No readable config.json: the run's own data folders are all there is to look in.
  }
  return [...new Set(files)];
}

/** The record's JSON line and the file it came from, or null when no task file holds that id. */
export async function findTaskRecord(runDir: string, promptId: string): Promise<{ line: string; file: string } | null> {
  const needle = JSON.stringify(promptId);
  for (const file of await taskFiles(runDir)) {
    const stream = createReadStream(file, { encoding: 'utf8' });
    const opened = await new Promise<boolean>((done) => {
      stream.once('open', () => done(true));
      stream.once('error', () => done(false));
    });
    if (!opened) continue;
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (!line.includes(needle)) continue;
        try {
          const record: unknown = JSON.parse(line);
          if (isRecord(record) && record.id === promptId && isRecord(record.meta)) return { line, file };
        } catch {
          continue;
        }
      }
    } finally {
      lines.close();
      stream.destroy();
    }
  }
  return null;
}
