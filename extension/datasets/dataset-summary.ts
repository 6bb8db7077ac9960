/**
 * What the Datasets view says about a task folder: how many tasks its tasks.jsonl holds, of
 * which kinds and sources, and the first task (for Open Sample). Lines that are not JSON
 * objects are counted, not fatal: `vistool data check` is the place for a full check.
 *
 * Editor-free (unit-tested under plain Node). Read-only.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface DatasetSummary {
  /** Absolute path of tasks.jsonl. */
  file: string;
  folder: string;
  tasks: number;
  /** Task count per kind, e.g. {table: 380, vbar: 20}. */
  kinds: Record<string, number>;
  sources: Record<string, number>;
  /** Task count per split the generator recorded (`generator.split`: train, test, …), e.g. {test: 300}; empty for tasks that do not say. */
  splits: Record<string, number>;
  badLines: number;
  /** The first task's id and absolute image path (for Open Sample), when there is one. */
  sample: { id: string; image: string; question: string; answer: string } | null;
}

function bump(counts: Record<string, number>, key: unknown): void {
  const name = typeof key === 'string' && key !== '' ? key : 'unknown';
  counts[name] = (counts[name] ?? 0) + 1;
}

export function summarizeTasks(file: string, text: string): DatasetSummary {
  const summary: DatasetSummary = { file, folder: dirname(file), tasks: 0, kinds: {}, sources: {}, splits: {}, badLines: 0, sample: null };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      summary.badLines++;
      continue;
    }
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      summary.badLines++;
      continue;
    }
    const task = record as Record<string, unknown>;
    summary.tasks++;
    bump(summary.kinds, task.kind);
    bump(summary.sources, task.source);
    const generator = task.generator as Record<string, unknown> | undefined;
    if (typeof generator === 'object' && generator !== null && typeof generator.split === 'string') bump(summary.splits, generator.split);
    if (summary.sample === null && typeof task.image === 'string') {
      summary.sample = {
        id: typeof task.id === 'string' ? task.id : `line ${summary.tasks}`,
        image: join(summary.folder, task.image),
        question: typeof task.question === 'string' ? task.question : '',
        answer: Array.isArray(task.answer) ? task.answer.join(', ') : String(task.answer ?? ''),
      };
    }
  }
  return summary;
}

/** `400 tasks · table 380, vbar 20` */
export function datasetDescription(summary: DatasetSummary): string {
  const kinds = Object.entries(summary.kinds)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
  const bad = summary.badLines > 0 ? ` · ${summary.badLines} unreadable line(s)` : '';
  return `${summary.tasks} task${summary.tasks === 1 ? '' : 's'}${kinds ? ` · ${kinds}` : ''}${bad}`;
}

/** Summaries cached by file stamp, so a refresh re-reads only folders that changed. */
export class DatasetSummaries {
  private readonly cache = new Map<string, { stamp: string; summary: DatasetSummary }>();

  async summarize(file: string): Promise<DatasetSummary | null> {
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) {
      this.cache.delete(file);
      return null;
    }
    const stamp = `${info.size}:${info.mtimeMs}`;
    const cached = this.cache.get(file);
    if (cached?.stamp === stamp) return cached.summary;
    const summary = summarizeTasks(file, await readFile(file, 'utf8'));
    this.cache.set(file, { stamp, summary });
    return summary;
  }
}
