/**
 * Worker threads that make tasks (task-worker.ts), so a data set uses every core: painting,
 * checking and building are JavaScript, which one thread runs on one core. Tasks go to the worker
 * with the fewest in flight; what a task becomes depends only on its plan, never on the worker
 * (the glyph masks they share are pure functions of their keys), so output does not depend on the
 * pool's size. A worker that dies fails the tasks it held, and the data set with them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { GlyphEntry } from './glyph-store.js';
import type { TaskOutcome, TaskPlan } from './make-task.js';
import type { WorkerReply, WorkerRequest } from './task-worker.js';

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: (outcome: TaskOutcome) => void; reject: (err: Error) => void }>;
  dead: Error | null;
}

/** Node options that load code into every thread: a worker inherits them, and the bundle needs none. */
const LOADER_FLAGS = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader']);

/**
 * The parent's Node options without its loaders (and their values). A parent run under tsx (the
 * bench runs the bundle from TypeScript) would otherwise start tsx's resolve hooks in each worker,
 * about 250 CPU ms more per worker, for a bundle that is plain CommonJS.
 */
export function workerExecArgv(parent: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    const arg = parent[i] as string;
    if (LOADER_FLAGS.has(arg)) i++;
    else if (!LOADER_FLAGS.has(arg.split('=')[0] as string)) kept.push(arg);
  }
  return kept;
}

/** The worker script beside the bundle in dist/, or, running from source under tsx (tests, bench), the TypeScript file through tsx's require hook, which workers do not inherit. */
function startWorker(): Worker {
  const bundled = join(__dirname, 'task-worker.js');
  if (existsSync(bundled)) return new Worker(bundled, { execArgv: workerExecArgv(process.execArgv) });
  const source = join(__dirname, 'task-worker.ts');
  if (!existsSync(source)) throw new Error(`the task generator's worker script ${bundled} is missing: rebuild with \`npm run build\``);
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(source)});`, { eval: true });
}

/**
 * Old-generation size (MB) a worker's heap may reach before its first full collection. V8's
 * default suits a heap that grows: with a task's few MB of live data it keeps the old generation's
 * limit so close that the headroom is smaller than a grown young generation, and V8 then starts
 * incremental marking at once after every collection — a full mark-compact every ~50 ms, about a
 * third of a worker's CPU (measured: 109 → 16 mark-compacts per 1000 mixed tasks, user CPU
 * 11.2 → 7.7 s). V8 reads the flag when an isolate is created, so it applies to the workers
 * started after it is set; the main thread's heap is left as it is.
 */
const WORKER_INITIAL_OLD_SPACE_MB = 64;

export class TaskPool {
  private readonly slots: Slot[];
  private nextId = 0;
  /** Every glyph mask the workers rasterised (for the store on disk). */
  readonly rendered: GlyphEntry[] = [];

  constructor(readonly size: number) {
    setFlagsFromString(`--initial-old-space-size=${WORKER_INITIAL_OLD_SPACE_MB}`);
    this.slots = Array.from({ length: size }, () => this.spawn());
  }

  /**
   * Tells every worker which glyph store files this thread has verified (glyph-cache.ts
   * verifyStoreForWorkers), so they need not re-check them. Sent before any task, it arrives
   * before any task does; the workers load meanwhile.
   */
  trustGlyphStores(digests: readonly string[]): void {
    for (const slot of this.slots) slot.worker.postMessage({ type: 'trust', digests: [...digests] } satisfies WorkerRequest);
  }

  run(plan: TaskPlan, maxAttempts: number, imagesDir: string): Promise<TaskOutcome> {
    const slot = this.slots.reduce((best, s) => (s.pending.size < best.pending.size ? s : best));
    if (slot.dead) return Promise.reject(slot.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ type: 'task', id, plan, maxAttempts, imagesDir } satisfies WorkerRequest);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    const slot: Slot = { worker: startWorker(), pending: new Map(), dead: null };
    slot.worker.on('message', (reply: WorkerReply) => {
      if (reply.glyphs.length > 0) {
        this.rendered.push(...reply.glyphs);
        for (const other of this.slots) if (other !== slot) other.worker.postMessage({ type: 'glyphs', glyphs: reply.glyphs } satisfies WorkerRequest);
      }
      const waiting = slot.pending.get(reply.id);
      slot.pending.delete(reply.id);
      if (!waiting) return;
      if (reply.type === 'done') waiting.resolve(reply.outcome);
      else waiting.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name, stack: reply.error.stack ?? reply.error.message }));
    });
    const die = (err: Error) => {
      slot.dead ??= err;
      for (const waiting of slot.pending.values()) waiting.reject(slot.dead);
      slot.pending.clear();
    };
    slot.worker.on('error', die);
    slot.worker.on('exit', (code) => die(new Error(`a task worker stopped (exit code ${code})`)));
    return slot;
  }
}
