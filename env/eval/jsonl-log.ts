/**
 * An append-only JSONL file written one whole line per `write` on a descriptor opened for
 * appending, then synced to disk: a reader (the dashboard, a resumed eval) never sees half a
 * line from a live writer, and a killed writer leaves at most one torn last line, which
 * `repairTornTail` cuts off before anything else is appended.
 *
 * Appends from one process go through a queue, in call order. Never rewrites existing lines
 * except through `rewriteJsonl` (temp file + rename).
 */
import { open, readFile, rename, truncate, writeFile, type FileHandle } from 'node:fs/promises';

/** Cuts a torn last line (no newline at the end) off the file. Returns the bytes removed. */
export async function repairTornTail(path: string): Promise<number> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  if (bytes.length === 0 || bytes[bytes.length - 1] === 0x0a) return 0;
  const keep = bytes.lastIndexOf(0x0a) + 1;
  await truncate(path, keep);
  return bytes.length - keep;
}

/** Parsed lines of a JSONL file (empty when the file does not exist). A bad line is an error naming the file and line. */
export async function readJsonl(path: string): Promise<unknown[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const lines = text.split('\n');
  // A torn last line (no newline yet) is an append in progress or a killed writer's: not data.
  if (!text.endsWith('\n')) lines.pop();
  const values: unknown[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      values.push(JSON.parse(line));
    } catch (err) {
      throw new Error(`${path}:${i + 1} is not JSON (${(err as Error).message}); the file was edited or corrupted — remove that line to continue`, { cause: err });
    }
  });
  return values;
}

/** Replaces a JSONL file with `values`, atomically. */
export async function rewriteJsonl(path: string, values: readonly unknown[]): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, values.map((v) => JSON.stringify(v) + '\n').join(''));
  await rename(temp, path);
}

export class JsonlAppender {
  private handle: Promise<FileHandle> | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  /** Appends the values as consecutive lines in one write. Resolves once they are on disk. */
  append(...values: unknown[]): Promise<void> {
    const text = values.map((v) => {
      const line = JSON.stringify(v);
      if (line === undefined) throw new Error(`cannot append ${String(v)} to ${this.path}: not JSON`);
      return line + '\n';
    }).join('');
    const next = this.queue.then(() => this.write(Buffer.from(text, 'utf8')));
    this.queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.queue;
    if (this.handle) await (await this.handle).close();
    this.handle = undefined;
  }

  private async write(bytes: Buffer): Promise<void> {
    this.handle ??= open(this.path, 'a');
    const handle = await this.handle;
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
      offset += bytesWritten;
    }
    await handle.datasync();
  }
}
