/**
 * Parses model messages for the env server without stalling it. Short messages (the usual case)
 * parse inline in well under a millisecond; long ones go to a small pool of worker threads, so a
 * batch of megabyte messages never holds up health checks or other clients' steps. A worker that
 * dies is replaced, and the messages it held are parsed inline: a step never fails for it.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { parseAction } from '../actions/parse.js';
import type { ParseOptions, ParsedAction } from '../actions/types.js';
import type { ParseRequest } from './parse-worker.js';

/** Messages at least this long are parsed off the event loop (about 10 ms of parsing at worst). */
export const OFF_THREAD_CHARS = 32 * 1024;

interface Pending {
  request: ParseRequest;
  resolve: (parsed: ParsedAction) => void;
}

/** The worker: the script beside the bundle in dist/, or — running from source under tsx (the
 * tests) — the TypeScript file loaded through tsx's require hook, which workers do not inherit. */
function startWorker(): Worker {
  const bundled = join(__dirname, 'parse-worker.js');
  if (existsSync(bundled)) return new Worker(bundled);
  const source = join(__dirname, 'parse-worker.ts');
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(source)});`, { eval: true });
}

export class ParserPool {
  private readonly workers: { worker: Worker; pending: Map<number, Pending> }[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly size = Math.max(1, Math.min(4, availableParallelism() - 1))) {}

  parse(text: string, options: ParseOptions = {}): Promise<ParsedAction> | ParsedAction {
    if (text.length < OFF_THREAD_CHARS || this.closed) return parseAction(text, options);
    const slot = this.leastBusy();
    const request: ParseRequest = { id: this.nextId++, text, options: { ...options, imageVariables: [...(options.imageVariables ?? [])] } };
    return new Promise((resolve) => {
      slot.pending.set(request.id, { request, resolve });
      slot.worker.postMessage(request);
    });
  }

  /** Stops the workers; later messages parse inline. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.workers.splice(0);
    for (const slot of slots) this.parseInline(slot.pending);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  private leastBusy(): { worker: Worker; pending: Map<number, Pending> } {
    if (this.workers.length < this.size) return this.spawn();
    return this.workers.reduce((best, slot) => (slot.pending.size < best.pending.size ? slot : best));
  }

  private spawn(): { worker: Worker; pending: Map<number, Pending> } {
    const worker = startWorker();
    worker.unref(); // an idle pool never keeps the process alive
    const slot = { worker, pending: new Map<number, Pending>() };
    worker.on('message', (reply: { id: number; parsed: ParsedAction }) => {
      const pending = slot.pending.get(reply.id);
      slot.pending.delete(reply.id);
      pending?.resolve(reply.parsed);
    });
    const retire = () => {
      const index = this.workers.indexOf(slot);
      if (index >= 0) this.workers.splice(index, 1);
      this.parseInline(slot.pending);
    };
    worker.on('error', retire);
    worker.on('exit', retire);
    this.workers.push(slot);
    return slot;
  }

  private parseInline(pending: Map<number, Pending>): void {
    for (const { request, resolve } of pending.values()) resolve(parseAction(request.text, request.options));
    pending.clear();
  }
}
