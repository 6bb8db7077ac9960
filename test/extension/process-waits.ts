/** What the managed-process tests wait on: a run's run.json, and a condition that comes true. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function runJson(runDir: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(runDir, 'run.json'), 'utf8')) as Record<string, unknown>;
}

/** Polls `condition` every 25 ms for up to 10 s; fails naming `what` when it never holds. */
export async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}
