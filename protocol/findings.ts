/**
 * The words for how an episode used its tools (issue 43), shared by the host that summarises a
 * record and every panel that shows one: the scanners' names (a trajectory's `findings`, the
 * metrics' `scan/<name>`), a short label and a sentence for each, and a call's target (`on`,
 * `partly`, `off`, `unknown`). The scanners themselves run in the env (env/episodes/scanners);
 * here is only how their results are named and read back from a record.
 *
 * Pure: no DOM, no Node.
 */
import { isRecord } from './guards.js';
import type { CallRecord, RolloutRecord } from './rollout-record.js';

export type FindingName = NonNullable<RolloutRecord['findings']>[number];

/** Every scanner, in the order the panels list them (docs/CONTRACTS.md, the rollout record's `findings`). */
export const FINDING_NAMES: readonly FindingName[] = ['off_target_call', 'repeated_call', 'ignored_tool_error', 'degenerate_edit', 'format_collapse', 'answered_without_looking'];

/** A badge's label and its tooltip: what the scanner saw, in words a reader of one rollout needs. */
export const FINDING_LEGEND: Readonly<Record<FindingName, { label: string; meaning: string }>> = {
  off_target_call: { label: 'off target', meaning: 'a call acted on something other than what the task asks about (another bar, row or point than the gold call names)' },
  repeated_call: { label: 'repeated call', meaning: 'the same call with the same arguments was made again in the episode' },
  ignored_tool_error: { label: 'ignored error', meaning: 'a call failed (E1–E6) and the episode answered after it without trying again' },
  degenerate_edit: { label: 'degenerate edit', meaning: 'an edit that shows nothing new: a mask hiding everything or nothing, a zoom on empty space' },
  format_collapse: { label: 'format collapse', meaning: 'the replies lost the expected format (no answer tag, or text that parses as no action)' },
  answered_without_looking: { label: 'answered without looking', meaning: "replayed with the tool's result withheld, the policy gave the same answer: the tool did not change it" },
};

export function isFindingName(value: unknown): value is FindingName {
  return FINDING_NAMES.includes(value as FindingName);
}

/** The metric a step's count of one scanner is logged as. */
export function scanMetric(name: FindingName): string {
  return `scan/${name}`;
}

/** A record's findings, known names only, each once, in FINDING_NAMES order; null when the record has no `findings` list (written before the scanners, or by another writer). */
export function findingsOf(record: unknown): FindingName[] | null {
  if (!isRecord(record) || !Array.isArray(record.findings)) return null;
  const found = new Set(record.findings.filter(isFindingName));
  return FINDING_NAMES.filter((name) => found.has(name));
}

export type CallTarget = NonNullable<CallRecord['target']>;

export const CALL_TARGETS: readonly CallTarget[] = ['on', 'partly', 'off', 'unknown'];

/** A call's target in words (the badge beside a call) and why. */
export const CALL_TARGET_LEGEND: Readonly<Record<CallTarget, { label: string; meaning: string }>> = {
  on: { label: 'on target', meaning: "the call acted on the task's target (the gold call's arguments, the named points, a search scene's target box held and legible)" },
  partly: { label: 'partly on target', meaning: "the call acted on the task's target and on other things too, or on part of it, or (a search crop) held it too small to read" },
  off: { label: 'off target', meaning: "the call missed the task's target" },
  unknown: { label: 'target unknown', meaning: 'the task carries no target to score the call against (a loader without metadata)' },
};

export function isCallTarget(value: unknown): value is CallTarget {
  return CALL_TARGETS.includes(value as CallTarget);
}

/** What a counterfactual replay found, read back from a record; null without a well-formed `counterfactual`. */
export function counterfactualOf(record: unknown): { answer: string | null; correct: boolean; changed: boolean } | null {
  if (!isRecord(record) || !isRecord(record.counterfactual)) return null;
  const { answer, correct, changed } = record.counterfactual;
  if ((answer !== null && typeof answer !== 'string') || typeof correct !== 'boolean' || typeof changed !== 'boolean') return null;
  return { answer, correct, changed };
}
