/**
 * Every well-formed rollout record of a JSONL file, read through a JsonlTail a slice at a time so a
 * file of any size streams in bounded memory. The search (rollout-search.ts) and a task's timeline
 * (eval-sets.ts) both walk files this way. A line that is not JSON or not a rollout record is
 * counted in `counts.skipped` and passed over; `mayMatch` lets a caller pass over lines it can rule
 * out from their text, before they are parsed (those are not counted).
 */
import type { RolloutSummary } from '../../protocol/panel-protocol.js';
import { isRecord } from '../../protocol/guards.js';
import { JsonlTail } from './jsonl-tail.js';
import { summarizeRollout } from './rollout-summary.js';

const SLICE_BYTES = 1 << 20;

export interface ScannedRollout {
  line: number;
  record: Record<string, unknown>;
  summary: RolloutSummary;
}

export async function* scanRollouts(
  path: string,
  counts: { skipped: number },
  options: { signal?: AbortSignal; sliceBytes?: number; mayMatch?: (text: string) => boolean } = {},
): AsyncGenerator<ScannedRollout> {
  const tail = new JsonlTail(path);
  for (let more = true; more; ) {
    options.signal?.throwIfAborted();
    const read = await tail.read(options.sliceBytes ?? SLICE_BYTES);
    more = read.more;
    for (const { line, text } of read.lines) {
      if (options.mayMatch && !options.mayMatch(text)) continue;
      let record: unknown;
      try {
        record = JSON.parse(text);
      } catch {
        counts.skipped += 1;
        continue;
      }
      const summary = summarizeRollout(record, line);
      if (typeof summary === 'string' || !isRecord(record)) {
        counts.skipped += 1;
        continue;
      }
      yield { line, record, summary };
    }
  }
}
