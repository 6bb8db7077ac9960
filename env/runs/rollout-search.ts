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
import type { StepFileInfo } from '../../protocol/panel/rollouts.js';
import type { RolloutSearchParams, RolloutSearchResult } from '../../protocol/panel/search.js';
import { searchSteps } from '../../protocol/rollout-search.js';
import { scanRollouts } from './rollout-scan.js';

// Where a text is found in a record is protocol/rollout-text.ts's rule (a static bundle's page applies it too).
export { findInRecord, snippetAround, SNIPPET_CHARS } from '../../protocol/rollout-text.js';

/**
 * Searches the given step files of the run at `runDir` (ascending steps), reading each as a stream
 * of slices (`sliceBytes`, default 1 MiB). Once `signal` is aborted (the panel dropped the search)
 * no further slice is read, and the search rejects with the signal's reason. The counting and
 * listing are protocol/rollout-search.ts's, which a static bundle's page runs on its own chunks.
 */
export function searchRollouts(
  runDir: string,
  files: readonly StepFileInfo[],
  params: Omit<RolloutSearchParams, 'runId'>,
  options: { sliceBytes?: number; signal?: AbortSignal } = {},
): Promise<Omit<RolloutSearchResult, 'runId'>> {
  const fileOf = new Map(files.map((f) => [f.step, f.file]));
  return searchSteps([...fileOf.keys()], (step, counts) => scanRollouts(join(runDir, fileOf.get(step) as string), counts, options), params);
}
