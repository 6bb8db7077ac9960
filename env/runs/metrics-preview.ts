/**
 * A preview of the part of a big metrics.jsonl not read yet: lines sampled at evenly spaced byte
 * offsets of the unread range, parsed into a small store of their own. While the metrics store
 * reads a 100 MB file slice by slice (about a second of JSON parsing on two cores), the charts
 * can show the whole run at once: exact up to where reading got, sampled beyond it, and exact
 * everywhere once the reading is done (metric-series.ts merges the two, the dashboard says which
 * part is sampled).
 *
 * A sample is one complete line inside a window read at its offset: the partial line the window
 * starts in is skipped, and a line longer than the window is not sampled. Sampled lines are in
 * file order, each one at most once. Lines that are not JSON objects, and evaluation lines, add
 * nothing (the store ignores the first and files the second as an evaluation, which a preview
 * does not show).
 *
 * Read-only, like the store.
 */
import { open } from 'node:fs/promises';
import { MetricsStore } from './metrics-store.js';

/** Bytes read at each sampled offset: holds a whole line of up to about half of it. */
const WINDOW_BYTES = 16 << 10;
const NEWLINE = 0x0a;

/**
 * Up to `count` complete lines of `path` spread evenly over the bytes [from, to); `from` must be
 * the start of a line (where a JsonlTail stopped).
 */
export async function sampleLines(path: string, from: number, to: number, count: number): Promise<string[]> {
  const lines: string[] = [];
  if (to <= from || count <= 0) return lines;
  const handle = await open(path, 'r');
  try {
    const window = Buffer.alloc(WINDOW_BYTES);
    let takenUpTo = from;
    for (let i = 0; i < count; i++) {
      const offset = from + Math.floor((i * (to - from)) / count);
      // A window that starts inside a line already taken starts at that line's end instead.
      const at = Math.max(offset, takenUpTo);
      if (at >= to) break;
      const { bytesRead } = await handle.read(window, 0, Math.min(WINDOW_BYTES, to - at), at);
      const read = window.subarray(0, bytesRead);
      // At `from`, or right after a line taken, the window starts at a line's first byte;
      // elsewhere it starts inside a line, which is skipped.
      let start = 0;
      if (at !== from && at !== takenUpTo) {
        const newline = read.indexOf(NEWLINE);
        if (newline === -1) continue;
        start = newline + 1;
      }
      const end = read.indexOf(NEWLINE, start);
      if (end === -1) continue;
      if (end > start) lines.push(read.toString('utf8', start, end));
      takenUpTo = at + end + 1;
    }
  } finally {
    await handle.close();
  }
  return lines;
}

/** The preview store of `count` lines sampled from [from, to) of the metrics file at `path`. */
export async function previewStore(path: string, from: number, to: number, count: number): Promise<MetricsStore> {
  const store = new MetricsStore(path);
  store.addLines(await sampleLines(path, from, to, count));
  return store;
}
