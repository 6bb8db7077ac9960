/**
 * One task of a data set, made and checked: built, rendered, checked on its pixels; a task that
 * cannot be drawn, asked or checked is re-rolled from a derived seed (a repair) up to
 * `maxAttempts` times, then dropped. The same in the main thread and in a worker (task-worker.ts).
 */
import { checkTask } from './check.js';
import { buildTask, renderTask, type BuiltTask, type TaskSpec } from './generate.js';
import { recordLine } from './record-line.js';

export type TaskPlan = Omit<TaskSpec, 'attempt'>;

export type TaskOutcome = { line: string; png: Buffer; id: string; attempts: number } | { dropped: true; attempts: number };

export interface MadeTask {
  outcome: TaskOutcome;
  /** Why each failed attempt failed, in the order they failed. */
  failures: string[];
}

function failureKey(err: unknown): string {
  const name = err instanceof Error ? err.name : 'Error';
  const message = err instanceof Error ? err.message : String(err);
  return `${name}: ${message.replace(/\d+(\.\d+)?/g, 'N').slice(0, 160)}`;
}

/** Errors that mean "this roll cannot be drawn or asked" (re-roll); anything else is a bug and is thrown. */
const REROLLED = new Set(['LayoutError', 'LabelPoolError', 'IllPosedQuestion']);

/** The first attempt of a plan, built ahead (task-queue.ts), or what building it threw. */
export type FirstAttempt = { built: BuiltTask } | { error: unknown };

export function buildFirstAttempt(plan: TaskPlan): FirstAttempt {
  try {
    return { built: buildTask({ ...plan, attempt: 0 }) };
  } catch (error) {
    return { error };
  }
}

export async function makeTask(plan: TaskPlan, maxAttempts: number, first?: FirstAttempt): Promise<MadeTask> {
  const failures: string[] = [];
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    try {
      const ahead = attempt === 0 ? first : undefined;
      if (ahead && 'error' in ahead) throw ahead.error;
      const built = ahead ? ahead.built : buildTask({ ...plan, attempt });
      const rendered = await renderTask(built);
      const report = await checkTask(built.record, { rendered });
      if (report.ok) return { outcome: { line: recordLine(built.record), png: rendered.png, id: built.record.id, attempts: attempt + 1 }, failures };
      failures.push(`check: ${report.issues[0]?.check}: ${(report.issues[0]?.message ?? '').replace(/\d+(\.\d+)?/g, 'N').slice(0, 160)}`);
    } catch (err) {
      if (!REROLLED.has(err instanceof Error ? err.name : '')) throw err;
      failures.push(failureKey(err));
    }
  }
  return { outcome: { dropped: true, attempts: maxAttempts }, failures };
}
