/**
 * A worker thread of `generateDataset` (task-pool.ts): makes the tasks it is sent, one message
 * per task, and answers with the task's line and PNG (the PNG's memory transferred, not copied).
 */
import { parentPort } from 'node:worker_threads';
import { makeTask, type MadeTask, type TaskPlan } from './make-task.js';

export interface TaskRequest {
  index: number;
  plan: TaskPlan;
  maxAttempts: number;
}

export type TaskReply = { index: number; made: MadeTask } | { index: number; error: string };

const port = parentPort;
if (!port) throw new Error('task-worker.ts runs as a worker thread (task-pool.ts starts it)');
port.on('message', (request: TaskRequest) => {
  makeTask(request.plan, request.maxAttempts).then(
    (made) => {
      const reply: TaskReply = { index: request.index, made };
      const transfer = 'png' in made.outcome && made.outcome.png.byteLength === made.outcome.png.buffer.byteLength ? [made.outcome.png.buffer as ArrayBuffer] : [];
      port.postMessage(reply, transfer);
    },
    (err: unknown) => port.postMessage({ index: request.index, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies TaskReply),
  );
});
