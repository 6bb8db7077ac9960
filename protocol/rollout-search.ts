/**
 * The search across a run's steps (`rollouts/search`) as one rule over any source of step files:
 * the host streams each step file from disk (env/runs/rollout-search.ts), a static bundle's page
 * reads the step chunks it holds (webview/shared/static-backend.ts), and both count, list and cap
 * the same matches. Every step is read to the end, so the per-step counts and the total are
 * exact; only the list of matches is capped, and it can start at any step and line (`from`).
 *
 * Pure: no DOM, no Node; the reader passed in does the reading.
 */
import type { RolloutSummary } from './panel/rollouts.js';
import { SEARCH_LIMIT, type RolloutSearchMatch, type RolloutSearchParams, type RolloutSearchResult } from './panel/search.js';
import { matchesFacets } from './rollout-filter.js';
import { findInRecord } from './rollout-text.js';
import { FINDING_NAMES } from './findings.js';

/** One rollout of a step file: its line, its record (undefined when the source does not hold it) and its summary. */
export interface SearchedRollout {
  line: number;
  record: Record<string, unknown> | undefined;
  summary: RolloutSummary;
}

/** What a search read: step files, rollout records, and lines that are not rollout records. */
export interface SearchCounts {
  steps: number;
  rollouts: number;
  skipped: number;
}

/**
 * A step's rollouts in line order, read however the host keeps them. The reader adds the lines it
 * could not read as rollout records to `counts.skipped`; it may throw to stop the search (a
 * cancelled request).
 */
export type StepReader = (step: number, counts: SearchCounts) => AsyncIterable<SearchedRollout> | Iterable<SearchedRollout>;

/** Searches the rollouts of `steps` (read in ascending order) for the params' text and facets. */
export async function searchSteps(steps: readonly number[], read: StepReader, params: Omit<RolloutSearchParams, 'runId'>): Promise<Omit<RolloutSearchResult, 'runId'>> {
  const limit = params.limit ?? SEARCH_LIMIT;
  const from = params.from ?? { step: 0, line: 0 };
  const listable = (step: number, line: number) => step > from.step || (step === from.step && line >= from.line);
  /** Matches at or after `from`: more of them than listed means the list is capped. */
  let after = 0;
  const counts: { step: number; matches: number }[] = [];
  const matches: RolloutSearchMatch[] = [];
  const scanned: SearchCounts = { steps: 0, rollouts: 0, skipped: 0 };
  const errorClasses = new Set<string>();
  const toolNames = new Set<string>();
  const findings = new Set<string>();
  let total = 0;
  for (const step of [...steps].sort((a, b) => a - b)) {
    let count = 0;
    scanned.steps += 1;
    for await (const { line, record, summary } of read(step, scanned)) {
      scanned.rollouts += 1;
      summary.errorClasses.forEach((c) => errorClasses.add(c));
      summary.toolNames.forEach((t) => toolNames.add(t));
      summary.findings?.forEach((f) => findings.add(f));
      if (!matchesFacets(summary, params.filter)) continue;
      const found = record ? findInRecord(record, params.query) : null;
      if (!found) continue;
      count += 1;
      if (!listable(step, line)) continue;
      after += 1;
      if (matches.length < limit) matches.push({ step, line, promptId: summary.promptId, ...found });
    }
    if (count > 0) counts.push({ step, matches: count });
    total += count;
  }
  const seen = { errorClasses: [...errorClasses].sort(), toolNames: [...toolNames].sort(), findings: FINDING_NAMES.filter((f) => findings.has(f)) };
  return { query: params.query, filter: params.filter, steps: counts, total, matches, from, capped: after > matches.length, scanned, seen };
}
