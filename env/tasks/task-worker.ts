/**
 * A worker thread of `generateDataset` (task-pool.ts): makes the tasks it is sent, one message
 * per task, and answers with the task's line and PNG (the PNG's memory transferred, not copied).
 * The glyphs it draws go to the other workers through the pool, so each is drawn once.
 */
import { parentPort } from 'node:worker_threads';
import { addGlyphs, onGlyphsDrawn, type GlyphEntry } from './glyph-cache.js';
import type { MadeTask, TaskPlan } from './make-task.js';
import { TaskQueue } from './task-queue.js';

export interface TaskRequest {
  index: number;
  plan: TaskPlan;
  maxAttempts: number;
}

export type TaskReply = { index: number; made: MadeTask } | { index: number; error: string };

/** Glyphs drawn by one thread, for the others (both ways through the pool). */
export interface GlyphShare {
  glyphs: GlyphEntry[];
}

const port = parentPort;
if (!port) throw new Error('task-worker.ts runs as a worker thread (task-pool.ts starts it)');
onGlyphsDrawn((glyphs) => port.postMessage({ glyphs } satisfies GlyphShare));
let queue: TaskQueue | undefined;
port.on('message', (message: TaskRequest | GlyphShare) => {
  if ('glyphs' in message) {
    addGlyphs(message.glyphs);
    return;
  }
  const request = message;
  queue ??= new TaskQueue(request.maxAttempts);
  queue.make(request.plan).then(
    (made) => {
      const reply: TaskReply = { index: request.index, made };
      const transfer = 'png' in made.outcome && made.outcome.png.byteLength === made.outcome.png.buffer.byteLength ? [made.outcome.png.buffer as ArrayBuffer] : [];
      port.postMessage(reply, transfer);
    },
    (err: unknown) => port.postMessage({ index: request.index, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies TaskReply),
  );
});
