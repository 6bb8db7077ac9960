/**
 * The judge's verdict cache: an in-memory LRU, optionally backed by an append-only JSONL file
 * so verdicts survive restarts. Only real verdicts are stored — never failures, which must be
 * asked again. The key covers the model and the prompt template as well as (question, gold,
 * prediction): a verdict given under another judge or another prompt is not reused.
 * A broken file line is skipped, and a failed write only costs persistence: the judge goes on.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LruCache } from '../core/lru-cache.js';

export interface VerdictKeyParts {
  model: string;
  promptHash: string;
  question: string;
  gold: string;
  prediction: string;
}

export function verdictKey(parts: VerdictKeyParts): string {
  return createHash('sha256')
    .update(JSON.stringify([parts.model, parts.promptHash, parts.question, parts.gold, parts.prediction]))
    .digest('hex');
}

interface FileLine {
  key: string;
  correct: boolean;
}

export class VerdictCache {
  private readonly memory: LruCache<string, boolean>;
  private loaded: Promise<void> | null = null;
  private writes: Promise<void> = Promise.resolve();
  /** File lines that could not be read, and writes that failed: for diagnostics. */
  skippedLines = 0;
  writeErrors = 0;

  constructor(capacity: number, private readonly file: string | null) {
    this.memory = new LruCache(capacity);
  }

  /** Reads the file once (lazily, on first use). */
  private load(): Promise<void> {
    this.loaded ??= (async () => {
      if (this.file === null || !existsSync(this.file)) return;
      const text = await readFile(this.file, 'utf8');
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        try {
          const entry = JSON.parse(line) as Partial<FileLine>;
          if (typeof entry.key === 'string' && typeof entry.correct === 'boolean') this.memory.set(entry.key, entry.correct);
          else this.skippedLines++;
        } catch {
          this.skippedLines++;
        }
      }
    })();
    return this.loaded;
  }

  async get(key: string): Promise<boolean | undefined> {
    await this.load();
    return this.memory.get(key);
  }

  /** Stores a verdict; `record` (question, gold, ...) is written next to it in the file for people reading it. */
  async set(key: string, correct: boolean, record: Record<string, unknown> = {}): Promise<void> {
    await this.load();
    this.memory.set(key, correct);
    const file = this.file;
    if (file === null) return;
    const line = JSON.stringify({ key, correct, ...record, at: new Date().toISOString() }) + '\n';
    // One append per line, one after another: a reader never sees two lines interleaved.
    this.writes = this.writes
      .then(async () => {
        await mkdir(dirname(file), { recursive: true });
        await appendFile(file, line, 'utf8');
      })
      .catch(() => {
        this.writeErrors++;
      });
  }

  /** Resolves when every verdict stored so far is on disk. */
  flush(): Promise<void> {
    return this.writes;
  }
}
