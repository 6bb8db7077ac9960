/**
 * Incremental reading of an append-only JSONL file that another process is writing: each
 * `read()` returns only the complete lines added since the last call, with their byte offsets.
 * A torn last line (a writer mid-append) is held back until its newline arrives. A file that
 * shrank or was replaced (the trainer rewrites metrics.jsonl atomically on resume) is read
 * again from the start, and the caller is told so it can drop what it had.
 *
 * Read-only: it never writes, truncates or locks the file.
 */
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
}

const NEWLINE = 0x0a;
/** Bytes read per system call; a larger append is read in several. */
const CHUNK = 8 << 20;

export class JsonlTail {
  private offset = 0;
  private nextLine = 0;
  private identity: string | null = null;

  constructor(readonly path: string) {}

  /** Bytes consumed so far (through the last complete line). */
  get position(): number {
    return this.offset;
  }

  async read(): Promise<TailRead> {
    let info;
    try {
      info = await stat(this.path);
    } catch {
      const reset = this.identity !== null;
      this.restart(null);
      return { reset, lines: [] };
    }
    const identity = `${info.dev}:${info.ino}`;
    let reset = false;
    if (this.identity !== identity || info.size < this.offset) {
      reset = this.identity !== null;
      this.restart(identity);
    }
    if (info.size === this.offset) return { reset, lines: [] };

    const lines: TailLine[] = [];
    const handle = await open(this.path, 'r');
    try {
      let pending = Buffer.alloc(0);
      let pendingStart = this.offset;
      let position = this.offset;
      while (position < info.size) {
        const size = Math.min(CHUNK, info.size - position);
        const chunk = Buffer.alloc(size);
        const { bytesRead } = await handle.read(chunk, 0, size, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        const data = pending.length > 0 ? Buffer.concat([pending, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
        let start = 0;
        for (let i = data.indexOf(NEWLINE); i !== -1; i = data.indexOf(NEWLINE, start)) {
          const length = i - start;
          if (length > 0) lines.push({ line: this.nextLine, offset: pendingStart + start, length, text: data.toString('utf8', start, i) });
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
    return { reset, lines };
  }

  private restart(identity: string | null): void {
    this.identity = identity;
    this.offset = 0;
    this.nextLine = 0;
  }
}
