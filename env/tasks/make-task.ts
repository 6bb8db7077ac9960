/**
 * One task of a data set, made, checked and written: built from its plan, drawn, checked on its
 * pixels, and re-rolled from a derived seed (the next attempt) when it cannot be drawn, asked or
 * checked, up to `maxAttempts` tries; its PNG is written to the data set's images folder here, so
 * a task-pool worker (task-worker.ts) hands back only its JSONL line. What it returns is plain
 * data, the same whether it ran on the main thread or in a worker.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { releaseBuffers } from '../core/pixel-pool.js';
import { checkTask } from './check.js';
import { buildTask, renderTask, type TaskSpec } from './generate.js';
import { recordLine } from './record-line.js';

export type TaskPlan = Omit<TaskSpec, 'attempt'>;

/** A made task (its JSONL line; its PNG is written), or a dropped one; `failures` says why each failed attempt failed. */
export type TaskOutcome =
  | { line: string; id: string; attempts: number; failures: string[] }
  | { dropped: true; attempts: number; failures: string[] };

/** A failure's text without its numbers, so that like failures count together in the summary. */
function withoutNumbers(message: string): string {
  return message.replace(/\d+(\.\d+)?/g, 'N').slice(0, 160);
}

function failureKey(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${withoutNumbers(err.message)}` : `Error: ${withoutNumbers(String(err))}`;
}

/** Layout, vocabulary and question failures are bad rolls (re-rolled); anything else is a bug and is thrown. */
const REROLLED = new Set(['LayoutError', 'LabelPoolError', 'IllPosedQuestion']);

export async function makeTask(plan: TaskPlan, maxAttempts: number, imagesDir: string): Promise<TaskOutcome> {
  const failures: string[] = [];
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    try {
      const built = buildTask({ ...plan, attempt });
      const rendered = await renderTask(built);
      const report = await checkTask(built.record, { rendered });
      // Checked: nothing reads the pixels or the label map again, so the next task may paint over them.
      releaseBuffers(rendered.image.data, rendered.labelMap.ids);
      if (report.ok) {
        await writeFile(join(imagesDir, `${built.record.id}.png`), rendered.png);
        return { line: recordLine(built.record), id: built.record.id, attempts: attempt + 1, failures };
      }
      failures.push(`check: ${report.issues[0]?.check}: ${withoutNumbers(report.issues[0]?.message ?? '')}`);
    } catch (err) {
      if (!REROLLED.has(err instanceof Error ? err.name : '')) throw err;
      failures.push(failureKey(err));
    }
  }
  return { dropped: true, attempts: maxAttempts, failures };
}
