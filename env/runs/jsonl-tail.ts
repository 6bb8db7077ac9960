/**
 * Incremental reading of an append-only JSONL file that another process is writing: each
 * `read()` returns only the complete lines added since the last call, with their byte offsets.
 * A torn last line (a writer mid-append) is held back until its newline arrives. A file that
 * shrank or was replaced (the trainer rewrites metrics.jsonl atomically on resume) is read
 * again from the start, and the caller is told so it can drop what it had. A read can be
 * bounded (`maxBytes`), so a 100 MB file is taken in slices with the event loop free between
 * them instead of in one block that holds every line of it in memory at once.
 *
 * Read-only: it never writes, truncates or locks the file.
 */
import { isAscii } from 'node:buffer';
import { open, stat } from 'node:fs/promises';

export interface TailLine {
  /** 0-based physical line number in the file. */
  line: number;
  /** Byte offset of the line's first byte, and its length without the newline. */
  offset: number;
  length: number;
  text: string;
}

export interface TailRead {
  /** True when the file was replaced or shrank: everything read before is void. */
  reset: boolean;
  lines: TailLine[];
  /** True when the read stopped at `maxBytes` with complete lines still unread. */
  more: boolean;
}

const NEWLINE = 0x0a;
/** Bytes read per system call; a larger append is read in several. */
const CHUNK = 8 << 20;

export class JsonlTail {
  private offset = 0;
  private nextLine = 0;
  private identity: string | null = null;
  private lastSize = 0;

  constructor(readonly path: string) {}

  /** Bytes consumed so far (through the last complete line). */
  get position(): number {
    return this.offset;
  }

  /** Size of the file at the last read (0 before the first, or when it is absent). */
  get size(): number {
    return this.lastSize;
  }

  /**
   * The complete lines appended since the last call: all of them, or those within about
   * `maxBytes` (always at least one line, however long, so a read always makes progress).
   */
  async read(maxBytes = Infinity): Promise<TailRead> {
    let info;
    try {
      info = await stat(this.path);
    } catch {
      const reset = this.identity !== null;
      this.restart(null);
      this.lastSize = 0;
      return { reset, lines: [], more: false };
    }
    this.lastSize = info.size;
    const identity = `${info.dev}:${info.ino}`;
    let reset = false;
    if (this.identity !== identity || info.size < this.offset) {
      reset = this.identity !== null;
      this.restart(identity);
    }
    if (info.size === this.offset) return { reset, lines: [], more: false };

    const lines: TailLine[] = [];
    const limit = this.offset + maxBytes;
    const chunkSize = Math.max(1, Math.min(CHUNK, maxBytes));
    let more = false;
    const handle = await open(this.path, 'r');
    try {
      let pending = Buffer.alloc(0);
      let pendingStart = this.offset;
      let position = this.offset;
      while (position < info.size) {
        if (position >= limit && lines.length > 0) {
          more = true;
          break;
        }
        const size = Math.min(chunkSize, info.size - position);
        const chunk = Buffer.alloc(size);
        const { bytesRead } = await handle.read(chunk, 0, size, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        const data = pending.length > 0 ? Buffer.concat([pending, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
        // An ASCII chunk (Python's json.dumps writes nothing else by default) is decoded once, and
        // its lines are slices of that string: one decode of 8 MB instead of one call per line
        // (a third of the time a 100 MB metrics file took to load). Byte and string offsets agree.
        const ascii = isAscii(data) ? data.toString('latin1') : null;
        let start = 0;
        for (let i = data.indexOf(NEWLINE); i !== -1; i = data.indexOf(NEWLINE, start)) {
          const length = i - start;
          if (length > 0) lines.push({ line: this.nextLine, offset: pendingStart + start, length, text: ascii !== null ? ascii.slice(start, i) : data.toString('utf8', start, i) });
          this.nextLine += 1;
          start = i + 1;
        }
        pending = Buffer.from(data.subarray(start));
        pendingStart += start;
      }
      // Only complete lines count; the torn tail is read again next time.
      this.offset = pendingStart;
    } finally {
      await handle.close();
    }
    return { reset, lines, more };
  }

  private restart(identity: string | null): void {
    this.identity = identity;
    this.offset = 0;
    this.nextLine = 0;
  }
}
