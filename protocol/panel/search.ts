/**
 * The search across every step of a run (`rollouts/search`): text and the viewer's facets, with
 * per-step counts and a capped, pageable list of matches. The rule that finds text in a record is
 * protocol/rollout-text.ts, the facets protocol/rollout-filter.ts, and the search itself, over
 * any source of step files, protocol/rollout-search.ts.
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { hasFields, isNonNegativeInteger, isString, optional } from '../guards.js';
import { isRolloutFacets, type RolloutFacets } from '../rollout-filter.js';
import { request } from './messages.js';
import type { FindingName } from '../findings.js';

/** Where a search found its text in a rollout record. */
export type SearchField = 'question' | 'prompt id' | 'answer' | 'gold' | 'turn';

/** One rollout a run-wide search found: enough to name it and jump to it (`rollouts/record` by step and line). */
export interface RolloutSearchMatch {
  step: number;
  /** 0-based line in the step file, as in RolloutSummary. */
  line: number;
  promptId: string;
  /** The first field that holds the text (question, prompt id, answer, gold, then the turns in order); with no text, 'question'. */
  field: SearchField;
  /** Index into `turns` when `field` is 'turn', with that turn's role. */
  turn: number | null;
  role: string | null;
  /** Up to about SNIPPET_CHARS of the field around the first occurrence, whitespace folded: model text, to be shown as text only. */
  snippet: string;
  /** Where the found text starts and ends in `snippet` (both 0 with no text). */
  start: number;
  end: number;
}

export interface RolloutSearchParams {
  runId: string;
  /** Case-insensitive text to find; '' matches every rollout the facets let through. */
  query: string;
  filter: RolloutFacets;
  /** Most matches to return (default SEARCH_LIMIT); the per-step counts always cover the whole run. */
  limit?: number;
  /** List matches from this step and line on (the next page, or one step's matches); default the run's start. */
  from?: { step: number; line: number };
}

export interface RolloutSearchResult {
  runId: string;
  query: string;
  filter: RolloutFacets;
  /** Matching rollouts per step file, every step that has one, ascending. */
  steps: { step: number; matches: number }[];
  /** Matching rollouts in the whole run. */
  total: number;
  /** The first matches in step and line order at or after `from`, at most `limit`. */
  matches: RolloutSearchMatch[];
  /** Where the listing starts (`from`, or step 0 line 0). */
  from: { step: number; line: number };
  /** True when more matches lie at or after `from` than are listed: ask again from after the last one for more. */
  capped: boolean;
  /** What was read: step files, rollout records, and lines that are not rollout records. */
  scanned: { steps: number; rollouts: number; skipped: number };
  /** The error classes, tool names and findings of every rollout read (matching or not), so the facets can offer what other steps hold. */
  seen: { errorClasses: string[]; toolNames: string[]; findings: FindingName[] };
}

/** Most characters a search query may have, and the default and largest number of matches a search returns. */
export const SEARCH_QUERY_MAX = 200;
export const SEARCH_LIMIT = 200;
export const SEARCH_LIMIT_MAX = 1000;

/** Text and facets searched in every step file of a run by the host, which streams the files (env/runs/rollout-search.ts). */
export const RolloutSearchRequest = request<RolloutSearchParams, RolloutSearchResult>()('rollouts/search', (p): p is RolloutSearchParams =>
  hasFields(p, {
    runId: isString,
    query: (v) => isString(v) && v.length <= SEARCH_QUERY_MAX,
    filter: isRolloutFacets,
    limit: optional((v) => isNonNegativeInteger(v) && v >= 1 && v <= SEARCH_LIMIT_MAX),
    from: optional((v) => hasFields(v, { step: isNonNegativeInteger, line: isNonNegativeInteger })),
  }),
);
