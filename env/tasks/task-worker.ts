/**
 * A task-pool worker (task-pool.ts): makes the tasks the data set's main thread hands it, two or
 * more at a time, so one task's waits (its PNG file being written) overlap the other's work, and
 * writes their PNGs; the main thread writes the JSONL in index order. Glyph masks this worker
 * rasterises go back with each result and reach the other workers, so a data set rasterises each
 * glyph about once, not once per worker.
 */
import { parentPort } from 'node:worker_threads';
import { addGlyphs, takeNewGlyphs, trustVerifiedStores } from './glyph-cache.js';
import type { GlyphEntry } from './glyph-store.js';
import { makeTask, type TaskOutcome, type TaskPlan } from './make-task.js';

export type WorkerRequest =
  | { type: 'task'; id: number; plan: TaskPlan; maxAttempts: number; imagesDir: string }
  | { type: 'glyphs'; glyphs: GlyphEntry[] }
  /** Digests of glyph store files the main thread re-rendered a sample of and found sound. */
  | { type: 'trust'; digests: string[] };

export type WorkerReply =
  | { type: 'done'; id: number; outcome: TaskOutcome; glyphs: GlyphEntry[] }
  | { type: 'failed'; id: number; error: { name: string; message: string; stack?: string }; glyphs: GlyphEntry[] };

const port = parentPort;
port?.on('message', (request: WorkerRequest) => {
  if (request.type === 'glyphs') {
    addGlyphs(request.glyphs);
    return;
  }
  if (request.type === 'trust') {
    trustVerifiedStores(request.digests);
    return;
  }
  makeTask(request.plan, request.maxAttempts, request.imagesDir).then(
    (outcome) => port.postMessage({ type: 'done', id: request.id, outcome, glyphs: takeNewGlyphs() } satisfies WorkerReply),
    (err: unknown) => {
      const error = err instanceof Error ? { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) } : { name: 'Error', message: String(err) };
      port.postMessage({ type: 'failed', id: request.id, error, glyphs: takeNewGlyphs() } satisfies WorkerReply);
    },
  );
});
