/**
 * Where `generateDataset` makes its tasks: in this thread, or in worker threads (dataset.ts
 * decides how many), each with its queue (task-queue.ts). Which thread makes a task never changes it:
 * a task is a pure function of its plan, and the writer puts lines in index order. Workers pass
 * each other the glyph rasters they draw (task-worker.ts), which are the same whoever draws them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { MadeTask, TaskPlan } from './make-task.js';
import { BATCH, TaskQueue } from './task-queue.js';
import type { GlyphShare, TaskReply, TaskRequest } from './task-worker.js';

/** Tasks a thread holds: a batch being made and the next one waiting. */
const QUEUED_PER_THREAD = 2 * BATCH;

export interface TaskRunner {
  /** How many tasks it can usefully hold at once. */
  readonly capacity: number;
  run(index: number, plan: TaskPlan): Promise<MadeTask>;
  close(): Promise<void>;
}

export function inThreadRunner(maxAttempts: number): TaskRunner {
  const queue = new TaskQueue(maxAttempts);
  return { capacity: QUEUED_PER_THREAD, run: (_index, plan) => queue.make(plan), close: async () => {} };
}

const BUNDLED = join(__dirname, 'task-worker.js');
const SOURCE = join(__dirname, 'task-worker.ts');

/** Whether a worker can be started here (a bundle built without the worker's file cannot). */
export function workersAvailable(): boolean {
  return existsSync(BUNDLED) || existsSync(SOURCE);
}

/** The worker: the script beside the bundle in dist/, or — from source under tsx (the tests) — the TypeScript file through tsx's require hook, which workers do not inherit. */
function startWorker(): Worker {
  if (existsSync(BUNDLED)) return new Worker(BUNDLED);
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(SOURCE)});`, { eval: true });
}

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: (made: MadeTask) => void; reject: (err: Error) => void }>;
}

export class WorkerPool implements TaskRunner {
  readonly capacity: number;
  private readonly slots: Slot[];

  constructor(size: number, private readonly maxAttempts: number) {
    this.capacity = size * QUEUED_PER_THREAD;
    this.slots = Array.from({ length: size }, () => this.spawn());
  }

  run(index: number, plan: TaskPlan): Promise<MadeTask> {
    const slot = this.slots.reduce((best, s) => (s.pending.size < best.pending.size ? s : best));
    return new Promise((resolve, reject) => {
      slot.pending.set(index, { resolve, reject });
      slot.worker.postMessage({ index, plan, maxAttempts: this.maxAttempts } satisfies TaskRequest);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    const slot: Slot = { worker: startWorker(), pending: new Map() };
    slot.worker.on('message', (reply: TaskReply | GlyphShare) => {
      if ('glyphs' in reply) {
        for (const other of this.slots) if (other !== slot) other.worker.postMessage(reply);
        return;
      }
      const waiting = slot.pending.get(reply.index);
      slot.pending.delete(reply.index);
      if (!waiting) return;
      if ('error' in reply) waiting.reject(new Error(`task ${reply.index} failed in a worker: ${reply.error}`));
      else {
        const { outcome } = reply.made;
        // A transferred Buffer arrives as a plain Uint8Array over the same memory.
        if ('png' in outcome) outcome.png = Buffer.from(outcome.png.buffer, outcome.png.byteOffset, outcome.png.byteLength);
        waiting.resolve(reply.made);
      }
    });
    const fail = (err: Error) => {
      for (const waiting of slot.pending.values()) waiting.reject(err);
      slot.pending.clear();
    };
    slot.worker.on('error', fail);
    slot.worker.on('exit', (code) => fail(new Error(`a data-gen worker exited (code ${code}) with tasks in hand`)));
    return slot;
  }
}
