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

/**
 * The first task record in a tasks.jsonl that `accept` takes, with its line; null when the file
 * is missing or holds none. Lines that do not contain `needle` (a cheap test: the id or file name
 * the record must mention) are not parsed, so a 400K-task file is a stream, not a parse.
 */
export async function findInTaskFile(file: string, needle: string, accept: (record: Record<string, unknown>) => boolean | Promise<boolean>): Promise<{ record: Record<string, unknown>; line: string } | null> {
  const stream = createReadStream(file, { encoding: 'utf8' });
  const opened = await new Promise<boolean>((done) => {
    stream.once('open', () => done(true));
    stream.once('error', () => done(false));
  });
  if (!opened) return null;
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (!line.includes(needle)) continue;
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        continue;
      }
      if (isRecord(record) && isRecord(record.meta) && (await accept(record))) return { record, line };
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  return null;
}

/** The record's JSON line and the file it came from, or null when no task file holds that id. */
export async function findTaskRecord(runDir: string, promptId: string): Promise<{ line: string; file: string } | null> {
  for (const file of await taskFiles(runDir)) {
    const found = await findInTaskFile(file, JSON.stringify(promptId), (record) => record.id === promptId);
    if (found) return { line: found.line, file };
  }
  return null;
}
