/**
 * The rollout index of a run: which step files exist (a directory listing, no reading), and
 * for a step that is opened, the byte offset and summary of every line. A record is then read
 * by seeking to its offset, so opening a run with 100k trajectories reads one step file, and
 * opening a rollout reads one line. Indexes grow with the file while the trainer appends.
 *
 * Read-only: never writes to the run directory.
 */
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RolloutRecord, RolloutSummary, StepFileInfo, StepIndex } from '../../protocol/panel-protocol.js';
import { JsonlTail } from './jsonl-tail.js';
import { summarizeRollout } from './rollout-summary.js';

const STEP_FILE = /^step-(\d+)\.jsonl$/;

export async function listStepFiles(runDir: string): Promise<StepFileInfo[]> {
  let names: string[];
  try {
    names = await readdir(join(runDir, 'rollouts'));
  } catch {
    return [];
  }
  const steps = await Promise.all(
    names.map(async (name) => {
      const match = STEP_FILE.exec(name);
      if (!match) return null;
      const info = await stat(join(runDir, 'rollouts', name)).catch(() => null);
      return info?.isFile() ? { step: Number(match[1]), file: `rollouts/${name}`, bytes: info.size } : null;
    }),
  );
  return steps.filter((s): s is StepFileInfo => s !== null).sort((a, b) => a.step - b.step);
}

export class StepFileIndex {
  private readonly tail: JsonlTail;
  private readonly positions = new Map<number, { offset: number; length: number }>();
  private summaries: RolloutSummary[] = [];
  private skipped: { line: number; reason: string }[] = [];
  /** Index updates run one at a time: two panels asking at once must not read the same bytes twice. */
  private updating: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    readonly step: number,
  ) {
    this.tail = new JsonlTail(path);
  }

  /** Indexes the lines appended since the last call and returns the whole index. */
  index(runId: string): Promise<StepIndex> {
    const next = this.updating.then(() => this.update(runId));
    this.updating = next.catch(() => undefined);
    return next;
  }

  private async update(runId: string): Promise<StepIndex> {
    const { reset, lines } = await this.tail.read();
    if (reset) {
      this.positions.clear();
      this.summaries = [];
      this.skipped = [];
    }
    for (const { line, offset, length, text } of lines) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        this.skipped.push({ line, reason: `not JSON (${(err as Error).message})` });
        continue;
      }
      const summary = summarizeRollout(parsed, line);
      if (typeof summary === 'string') {
        this.skipped.push({ line, reason: summary });
        continue;
      }
      this.positions.set(line, { offset, length });
      this.summaries.push(summary);
    }
    return { runId, step: this.step, rollouts: this.summaries, skipped: this.skipped };
  }

  /** The full record on `line` (0-based), read by offset. */
  async record(line: number): Promise<RolloutRecord> {
    if (!this.positions.has(line)) await this.index('');
    const where = this.positions.get(line);
    if (!where) throw new Error(`step ${this.step} has no rollout on line ${line + 1} (${this.path}); refresh the index`);
    const handle = await open(this.path, 'r');
    try {
      const buffer = Buffer.alloc(where.length);
      await handle.read(buffer, 0, where.length, where.offset);
      return JSON.parse(buffer.toString('utf8')) as RolloutRecord;
    } finally {
      await handle.close();
    }
  }
}
