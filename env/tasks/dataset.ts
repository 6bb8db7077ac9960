/**
 * Generates a whole data set: DIR/tasks.jsonl (one record per line, in index order) and
 * DIR/images/<id>.png. Every task is checked on its pixels as it is made; a task that cannot be
 * drawn, asked or checked is re-rolled from a derived seed (a repair) up to `maxAttempts` times,
 * then dropped, and both are counted (make-task.ts). Tasks are made on worker threads
 * (task-pool.ts), one per core, and written here in index order. Output is written to a temporary
 * sibling folder and renamed into place at the end, so a reader never sees half a data set.
 */
import { createWriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { once } from 'node:events';
import { writeDirAtomically } from './atomic-dir.js';
import { isDifficulty, type Difficulty } from './difficulty.js';
import { GENERATED_KINDS } from './generate.js';
import { saveToStore, takeNewGlyphs, verifyStoreForWorkers } from './glyph-cache.js';
import { makeTask, type TaskOutcome, type TaskPlan } from './make-task.js';
import { taskStream, type Split } from './prng.js';
import type { GeneratedKind, QuestionFamily } from './record.js';
import { TaskPool } from './task-pool.js';

export interface DatasetOptions {
  kind: GeneratedKind | 'mixed';
  n: number;
  seed: number;
  split: Split;
  /** Inclusive range; each task draws its difficulty uniformly from it. */
  difficulty: [Difficulty, Difficulty];
  imageSize: [number, number] | null;
  /** Tries per task before it is dropped (default 4). */
  maxAttempts?: number;
  /**
   * Worker threads making tasks (default: the cores os.availableParallelism() reports, at least
   * 2). Each holds two tasks in flight, so one task's waits (file writes) overlap the other's
   * work. 1, or fewer than MIN_TASKS_FOR_WORKERS tasks, makes them on the main thread (two in
   * flight), without workers.
   */
  concurrency?: number;
  /** Ask only these question families (absent: all). */
  families?: readonly QuestionFamily[];
  /** Category labels / row keys to use in this order instead of the vocabulary. */
  labels?: readonly string[];
  /** argmax / argmin: least lead of the extreme over the runner-up, as a fraction (absent: 0). */
  minTopGap?: number;
  /** Charts: the category count range (absent: the difficulty's). */
  categories?: readonly [number, number];
  /** With `labels`: a random selection of them, in a random order, on each chart. */
  shuffleLabels?: boolean;
  /** Search: the policy budget of the need-for-zoom criterion (absent: its default). */
  maxPixels?: number;
  /** Search: the legible feature size of that criterion, px (absent: its default). */
  legiblePx?: number;
}

export interface DatasetProgress {
  done: number;
  total: number;
  generated: number;
  repaired: number;
  dropped: number;
}

export interface DatasetSummary extends DatasetProgress {
  seconds: number;
  /** Worker threads that made the tasks (0: the main thread made them). */
  workers: number;
  /** Glyph masks rasterised for this data set (the rest came from memory or the store on disk). */
  glyphsRasterised: number;
  tasksPerSecond: number;
  /** Why attempts failed, counted (a repaired task counts its failed attempts here too). */
  failures: Record<string, number>;
  out: string;
}

/** The kind and difficulty of task `index`: fixed by the seed, independent of repairs. */
export function planTask(options: Pick<DatasetOptions, 'kind' | 'seed' | 'split' | 'difficulty' | 'imageSize' | 'families' | 'labels' | 'minTopGap' | 'categories' | 'shuffleLabels' | 'maxPixels' | 'legiblePx'>, index: number): TaskPlan {
  const rng = taskStream(options.seed, options.split, index, 0).fork('plan');
  const kind = options.kind === 'mixed' ? rng.pick(GENERATED_KINDS) : options.kind;
  const d = rng.int(options.difficulty[0], options.difficulty[1]);
  if (!isDifficulty(d)) throw new Error(`difficulty ${d} is outside 1–5`);
  return {
    seed: options.seed, split: options.split, index, kind, difficulty: d, imageSize: options.imageSize,
    ...(options.families ? { families: options.families } : {}),
    ...(options.labels ? { labels: options.labels } : {}),
    ...(options.minTopGap ? { minTopGap: options.minTopGap } : {}),
    ...(options.categories ? { categories: options.categories } : {}),
    ...(options.shuffleLabels ? { shuffleLabels: true } : {}),
    ...(options.maxPixels !== undefined ? { maxPixels: options.maxPixels } : {}),
    ...(options.legiblePx !== undefined ? { legiblePx: options.legiblePx } : {}),
  };
}

/**
 * Fewest tasks for which worker threads pay: a worker's start (loading the generator and sharp,
 * warming its JIT) costs about 250 CPU ms, some 40 tasks' worth, so below this the main thread
 * alone finishes first.
 */
export const MIN_TASKS_FOR_WORKERS = 100;

/** What the cores allow: one worker per core, at least 2. */
export function defaultConcurrency(): number {
  return Math.max(2, availableParallelism());
}

export async function generateDataset(outDir: string, options: DatasetOptions, onProgress?: (p: DatasetProgress) => void): Promise<DatasetSummary> {
  const out = resolve(outDir);
  const maxAttempts = options.maxAttempts ?? 4;
  const concurrency = Math.max(1, options.concurrency ?? defaultConcurrency());
  const workers = options.n >= MIN_TASKS_FOR_WORKERS ? concurrency : 0;
  const started = process.hrtime.bigint();
  const failures = new Map<string, number>();
  const progress: DatasetProgress = { done: 0, total: options.n, generated: 0, repaired: 0, dropped: 0 };
  const pool = workers >= 2 ? new TaskPool(workers) : null;
  try {
    // The glyph store is checked once here, not once in each worker, while the workers load.
    pool?.trustGlyphStores(await verifyStoreForWorkers());
    await writeDirAtomically(out, async (tmp) => {
      const jsonl = createWriteStream(join(tmp, 'tasks.jsonl'));
      const images = join(tmp, 'images');
      const make = (plan: TaskPlan): Promise<TaskOutcome> => (pool ? pool.run(plan, maxAttempts, images) : makeTask(plan, maxAttempts, images));
      // Lines are written in index order whatever order the tasks finish in.
      const pending = new Map<number, string | null>();
      let nextToWrite = 0;
      const flush = async () => {
        while (pending.has(nextToWrite)) {
          const line = pending.get(nextToWrite);
          pending.delete(nextToWrite);
          nextToWrite++;
          if (line !== null && line !== undefined && !jsonl.write(line)) await once(jsonl, 'drain');
        }
      };
      let nextIndex = 0;
      let abort: Error | null = null;
      const lane = async () => {
        while (nextIndex < options.n && !abort) {
          const index = nextIndex++;
          const outcome = await make(planTask(options, index));
          for (const reason of outcome.failures) failures.set(reason, (failures.get(reason) ?? 0) + 1);
          if ('dropped' in outcome) {
            progress.dropped++;
            pending.set(index, null);
          } else {
            progress.generated++;
            if (outcome.attempts > 1) progress.repaired++;
            pending.set(index, outcome.line);
          }
          progress.done++;
          if (progress.generated === 0 && progress.dropped >= Math.min(options.n, 20)) {
            const [reason] = [...failures.entries()].sort((a, b) => b[1] - a[1])[0] ?? ['unknown'];
            abort = new Error(`the first ${progress.dropped} tasks could all not be made (most common reason — ${reason}). Try a larger --image-size or a lower --difficulty.`);
          }
          await flush();
          onProgress?.({ ...progress });
        }
      };
      try {
        await Promise.all(Array.from({ length: Math.min(2 * (pool?.size ?? 1), options.n) }, lane));
        if (abort) throw abort;
      } catch (err) {
        jsonl.destroy();
        throw err;
      }
      jsonl.end();
      await once(jsonl, 'finish');
    });
  } finally {
    await pool?.close();
  }
  // The masks rasterised for this data set go to the store on disk, for the next one.
  const rasterised = pool ? pool.rendered : takeNewGlyphs();
  await saveToStore(rasterised);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { ...progress, seconds, workers: pool?.size ?? 0, glyphsRasterised: rasterised.length, tasksPerSecond: progress.generated / seconds, failures: Object.fromEntries(failures), out };
}
