/**
 * The rollout viewer's filters (outcome, tool use, error class, tool name, finding) as one pure rule, so
 * the panel narrowing a step's list and the host searching every step of a run
 * (env/runs/rollout-search.ts) keep and drop the same rollouts. Types, a guard and the rule only:
 * no DOM, no Node.
 */
import type { RolloutSummary } from './panel/rollouts.js';
import { hasFields, isString, optional } from './guards.js';
import { FINDING_LEGEND, type FindingName, isFindingName } from './findings.js';

export type Outcome = 'all' | 'correct' | 'incorrect';
export type ToolUse = 'all' | 'tools' | 'none';

/** The filters that look at a rollout's summary (the viewer's text search is apart from them). */
export interface RolloutFacets {
  outcome: Outcome;
  tools: ToolUse;
  /** An error class (E1–E6), 'none' for rollouts without errors, or null for any. */
  errorClass: string | null;
  toolName: string | null;
  /** A scanner that fired on the rollout (protocol/findings.ts), 'none' for rollouts none fired on, null or absent for any. */
  finding?: FindingName | 'none' | null;
}

export const NO_FACETS: RolloutFacets = { outcome: 'all', tools: 'all', errorClass: null, toolName: null };

const OUTCOMES: readonly Outcome[] = ['all', 'correct', 'incorrect'];
const TOOL_USES: readonly ToolUse[] = ['all', 'tools', 'none'];

export function isRolloutFacets(value: unknown): value is RolloutFacets {
  return hasFields(value, {
    outcome: (v) => OUTCOMES.includes(v as Outcome),
    tools: (v) => TOOL_USES.includes(v as ToolUse),
    errorClass: (v) => v === null || isString(v),
    toolName: (v) => v === null || isString(v),
    finding: optional((v) => v === null || v === 'none' || isFindingName(v)),
  });
}

export function matchesFacets(rollout: RolloutSummary, filter: RolloutFacets): boolean {
  if (filter.outcome === 'correct' && rollout.correct !== true) return false;
  if (filter.outcome === 'incorrect' && rollout.correct !== false) return false;
  if (filter.tools === 'tools' && rollout.toolCalls === 0) return false;
  if (filter.tools === 'none' && rollout.toolCalls > 0) return false;
  if (filter.errorClass === 'none' && rollout.errorClasses.length > 0) return false;
  if (filter.errorClass !== null && filter.errorClass !== 'none' && !rollout.errorClasses.includes(filter.errorClass)) return false;
  if (filter.toolName !== null && !rollout.toolNames.includes(filter.toolName)) return false;
  // A record without a findings list was never scanned: it passes no finding filter, 'none' included.
  if (filter.finding === 'none' && (rollout.findings === undefined || rollout.findings.length > 0)) return false;
  if (filter.finding !== undefined && filter.finding !== null && filter.finding !== 'none' && !(rollout.findings ?? []).includes(filter.finding)) return false;
  return true;
}

/** The facets in words, for a status line ("incorrect · error E4"); '' when none is set. */
export function describeFacets(filter: RolloutFacets): string {
  const words: string[] = [];
  if (filter.outcome !== 'all') words.push(filter.outcome);
  if (filter.tools === 'tools') words.push('used tools');
  if (filter.tools === 'none') words.push('no tools');
  if (filter.errorClass === 'none') words.push('no errors');
  else if (filter.errorClass !== null) words.push(`error ${filter.errorClass}`);
  if (filter.toolName !== null) words.push(`tool ${filter.toolName}`);
  if (filter.finding === 'none') words.push('no findings');
  else if (filter.finding !== undefined && filter.finding !== null) words.push(`finding ${FINDING_LEGEND[filter.finding].label}`);
  return words.join(' · ');
}
