/**
 * Search across every step of a run (the viewer's `rollouts/search`): a case-insensitive text in a
 * rollout's question, prompt id, answer, gold answer or turns (the model's and the observations
 * it read), and the viewer's facets (protocol/rollout-filter.ts: outcome, tool use, error class,
 * tool name), applied to each rollout record of each step file.
 *
 * Step files are streamed (rollout-scan.ts): each is read through a JsonlTail a slice at a time (a MiB, or
 * one line when a line is longer), each line is parsed, judged and dropped, so memory holds one
 * slice and the matches kept, never a run's records. Every file is read to the end, so the
 * per-step counts and the total are exact; only the list of matches is capped, and it can start
 * at any step and line (`from`), for the next page or for one step's matches.
 *
 * Read-only: never writes to the run directory.
 */
import { join } from 'node:path';
import type { RolloutSearchMatch, RolloutSearchParams, RolloutSearchResult, StepFileInfo } from '../../protocol/panel-protocol.js';
import { SEARCH_LIMIT } from '../../protocol/panel-protocol.js';
import { matchesFacets } from '../../protocol/rollout-filter.js';
import { scanRollouts } from './rollout-scan.js';
import { findInRecord } from '../../protocol/rollout-text.js';

// Where a text is found in a record is protocol/rollout-text.ts's rule (a static bundle's page applies it too).
export { findInRecord, snippetAround, SNIPPET_CHARS } from '../../protocol/rollout-text.js';

/**
 * Searches the given step files of the run at `runDir` (ascending steps), reading each as a stream
 * of slices (`sliceBytes`, default 1 MiB). Once `signal` is aborted (the panel dropped the search)
 * no further slice is read, and the search rejects with the signal's reason.
 */
export async function searchRollouts(
  runDir: string,
  files: readonly StepFileInfo[],
  params: Omit<RolloutSearchParams, 'runId'>,
  options: { sliceBytes?: number; signal?: AbortSignal } = {},
): Promise<Omit<RolloutSearchResult, 'runId'>> {
  const limit = params.limit ?? SEARCH_LIMIT;
  const from = params.from ?? { step: 0, line: 0 };
  const listable = (step: number, line: number) => step > from.step || (step === from.step && line >= from.line);
  /** Matches at or after `from`: more of them than listed means the list is capped. */
  let after = 0;
  const steps: { step: number; matches: number }[] = [];
  const matches: RolloutSearchMatch[] = [];
  const scanned = { steps: 0, rollouts: 0, skipped: 0 };
  const errorClasses = new Set<string>();
  const toolNames = new Set<string>();
  let total = 0;
  for (const { step, file } of [...files].sort((a, b) => a.step - b.step)) {
    let count = 0;
    scanned.steps += 1;
    for await (const { line, record, summary } of scanRollouts(join(runDir, file), scanned, options)) {
      scanned.rollouts += 1;
      summary.errorClasses.forEach((c) => errorClasses.add(c));
      summary.toolNames.forEach((t) => toolNames.add(t));
      if (!matchesFacets(summary, params.filter)) continue;
      const found = findInRecord(record, params.query);
      if (!found) continue;
      count += 1;
      if (!listable(step, line)) continue;
      after += 1;
      if (matches.length < limit) matches.push({ step, line, promptId: summary.promptId, ...found });
    }
    if (count > 0) steps.push({ step, matches: count });
    total += count;
  }
  const seen = { errorClasses: [...errorClasses].sort(), toolNames: [...toolNames].sort() };
  return { query: params.query, filter: params.filter, steps, total, matches, from, capped: after > matches.length, scanned, seen };
}
