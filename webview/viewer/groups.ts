/**
 * Data shaping for the rollout viewer, pure and DOM-free: rollouts of a step grouped by prompt,
 * sorted by reward, with the group's reward spread and whether dynamic sampling kept it; the
 * filters (outcome, tool use, error class, tool name, search in questions); and the flat order
 * that keyboard navigation walks.
 *
 * Grouping follows the rollout file: consecutive lines of one prompt form a group, and a group
 * index that does not increase starts a new group (the same prompt drawn twice in one step).
 * A group counts as kept when the trainer says so (its records' `kept`), else when its rewards
 * differ: DAPO's dynamic sampling drops groups whose rollouts all score the same, since they carry
 * no advantage signal. A group the trainer did not train with an episode the env server failed
 * (the records' `env_failed`) was dropped for that (rl.failed_groups 'drop').
 */
import type { RolloutSummary } from '../../protocol/panel-protocol.js';
import { matchesFacets, NO_FACETS, type RolloutFacets } from '../../protocol/rollout-filter.js';

export interface PromptGroup {
  /** Unique within the step: prompt id and first line. */
  key: string;
  promptId: string;
  question: string;
  gold: string | string[] | null;
  /** Sorted by reward, best first (unscored last), then by line. */
  rollouts: RolloutSummary[];
  rewardMin: number | null;
  rewardMax: number | null;
  rewardMean: number | null;
  kept: boolean;
  /** Rollouts whose episode failed at the env server (the records' `env_failed`). */
  envFailed: number;
  correct: number;
  /** Rollouts in the group before filtering. */
  size: number;
}

export type { Outcome, ToolUse } from '../../protocol/rollout-filter.js';

/** The facets (protocol/rollout-filter.ts, the same rule the host's run-wide search applies) and the text search in questions. */
export interface RolloutFilter extends RolloutFacets {
  search: string;
}

export const NO_FILTER: RolloutFilter = { ...NO_FACETS, search: '' };

function byReward(a: RolloutSummary, b: RolloutSummary): number {
  if (a.reward === null && b.reward === null) return a.line - b.line;
  if (a.reward === null) return 1;
  if (b.reward === null) return -1;
  return b.reward - a.reward || a.line - b.line;
}

function makeGroup(members: RolloutSummary[]): PromptGroup {
  const first = members[0] as RolloutSummary;
  const rewards = members.map((m) => m.reward).filter((r): r is number => r !== null);
  const min = rewards.length ? Math.min(...rewards) : null;
  const max = rewards.length ? Math.max(...rewards) : null;
  return {
    key: `${first.promptId}@${first.line}`,
    promptId: first.promptId,
    question: first.question,
    gold: first.gold,
    rollouts: [...members].sort(byReward),
    rewardMin: min,
    rewardMax: max,
    rewardMean: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null,
    // The trainer's flag when it wrote one; otherwise a group with reward spread is what dynamic sampling keeps.
    kept: members.some((m) => m.kept !== null) ? members.every((m) => m.kept === true) : min !== null && max !== null && max - min > 1e-9,
    envFailed: members.filter((m) => m.envFailed === true).length,
    correct: members.filter((m) => m.correct === true).length,
    size: members.length,
  };
}

/** The group's badge: its word and what the word means. */
export interface GroupBadge {
  status: 'kept' | 'filtered' | 'dropped' | 'extra';
  title: string;
}

/**
 * Why the group was or was not trained. Not trained: an episode failed at the env server
 * (rl.failed_groups 'drop'); else, when its rewards or its correctness are all the same, dynamic
 * sampling's metric (reward or accuracy) had no spread; else neither stopped it, so the step had
 * its groups before this one was drawn.
 */
export function groupBadge(group: Pick<PromptGroup, 'kept' | 'envFailed' | 'rewardMin' | 'rewardMax' | 'correct' | 'size'>): GroupBadge {
  if (group.kept) return { status: 'kept', title: 'rewards differ: the group carries advantage signal' };
  if (group.envFailed > 0) return { status: 'dropped', title: 'dropped: an episode failed at the env server (its reward notes say why)' };
  const rewardsDiffer = group.rewardMin !== null && group.rewardMax !== null && group.rewardMax - group.rewardMin > 1e-9;
  const correctnessDiffers = group.correct > 0 && group.correct < group.size;
  if (rewardsDiffer && correctnessDiffers) return { status: 'extra', title: 'not trained: the step had its groups before this one was drawn' };
  return { status: 'filtered', title: 'every rollout scored the same: dynamic sampling drops this group' };
}

export function groupRollouts(rollouts: RolloutSummary[]): PromptGroup[] {
  const groups: PromptGroup[] = [];
  let current: RolloutSummary[] = [];
  for (const rollout of [...rollouts].sort((a, b) => a.line - b.line)) {
    const previous = current[current.length - 1];
    const samePrompt = previous !== undefined && previous.promptId === rollout.promptId;
    const restarts = previous !== undefined && previous.group !== null && rollout.group !== null && rollout.group <= previous.group;
    if (previous !== undefined && (!samePrompt || restarts)) {
      groups.push(makeGroup(current));
      current = [];
    }
    current.push(rollout);
  }
  if (current.length > 0) groups.push(makeGroup(current));
  return groups;
}

export function matchesFilter(rollout: RolloutSummary, filter: RolloutFilter): boolean {
  return matchesFacets(rollout, filter);
}

/** Groups whose question (or prompt id) contains the search text, holding only the rollouts that pass the filter. */
export function filterGroups(groups: PromptGroup[], filter: RolloutFilter): PromptGroup[] {
  const needle = filter.search.trim().toLowerCase();
  return groups.flatMap((group) => {
    if (needle !== '' && !group.question.toLowerCase().includes(needle) && !group.promptId.toLowerCase().includes(needle)) return [];
    const rollouts = group.rollouts.filter((r) => matchesFilter(r, filter));
    return rollouts.length > 0 ? [{ ...group, rollouts }] : [];
  });
}

/** The values the error-class and tool-name filters can take for this step. */
export function filterChoices(rollouts: RolloutSummary[]): { errorClasses: string[]; toolNames: string[] } {
  const errorClasses = new Set<string>();
  const toolNames = new Set<string>();
  for (const r of rollouts) {
    r.errorClasses.forEach((c) => errorClasses.add(c));
    r.toolNames.forEach((t) => toolNames.add(t));
  }
  return { errorClasses: [...errorClasses].sort(), toolNames: [...toolNames].sort() };
}

/** A step's filter choices, with the run's (from a search across steps) and the chosen values, so a select never hides what it is set to. */
export function mergeChoices(step: { errorClasses: string[]; toolNames: string[] }, run: { errorClasses: string[]; toolNames: string[] } | null, filter: RolloutFilter): { errorClasses: string[]; toolNames: string[] } {
  const union = (...lists: (string | null)[][]) => [...new Set(lists.flat().filter((v): v is string => v !== null && v !== 'none'))].sort();
  return {
    errorClasses: union(step.errorClasses, run?.errorClasses ?? [], [filter.errorClass]),
    toolNames: union(step.toolNames, run?.toolNames ?? [], [filter.toolName]),
  };
}

/** Lines of the visible rollouts in display order: what j and k step through. */
export function navigationOrder(groups: PromptGroup[]): number[] {
  return groups.flatMap((g) => g.rollouts.map((r) => r.line));
}

/** The line `delta` places from `current` in `order` (clamped); the first line when `current` is not shown. */
export function stepThrough(order: number[], current: number | null, delta: number): number | null {
  if (order.length === 0) return null;
  const at = current === null ? -1 : order.indexOf(current);
  if (at === -1) return order[0] ?? null;
  return order[Math.max(0, Math.min(order.length - 1, at + delta))] ?? null;
}

/** How the list orders prompt groups; rollouts inside a group stay best reward first. */
export type GroupOrder = 'file' | 'reward-desc' | 'reward-asc' | 'spread-desc';

export const GROUP_ORDERS: readonly [GroupOrder, string][] = [
  ['file', 'file order'],
  ['reward-desc', 'mean reward, high first'],
  ['reward-asc', 'mean reward, low first'],
  // The reward spread is where GRPO's advantage signal is: a flat group teaches nothing.
  ['spread-desc', 'reward spread, widest first'],
];

export function isGroupOrder(value: unknown): value is GroupOrder {
  return GROUP_ORDERS.some(([order]) => order === value);
}

function spread(group: PromptGroup): number | null {
  return group.rewardMin === null || group.rewardMax === null ? null : group.rewardMax - group.rewardMin;
}

/** A stable sort by the chosen key; groups without a reward go last, in file order. */
export function sortGroups(groups: PromptGroup[], order: GroupOrder): PromptGroup[] {
  if (order === 'file') return groups;
  const key = (g: PromptGroup): number | null => (order === 'spread-desc' ? spread(g) : g.rewardMean);
  const sign = order === 'reward-asc' ? 1 : -1;
  return groups
    .map((group, index) => ({ group, index, value: key(group) }))
    .sort((a, b) => {
      if (a.value === null || b.value === null) return a.value === b.value ? a.index - b.index : a.value === null ? 1 : -1;
      return sign * (a.value - b.value) || a.index - b.index;
    })
    .map((entry) => entry.group);
}

export interface Histogram {
  /** bins + 1 edges, from the lowest value to the highest. */
  edges: number[];
  counts: number[];
  /** Values that were null (unscored rollouts), not binned. */
  missing: number;
}

/**
 * Equal-width bins over [min, max], the last one closed so the maximum is counted. All values
 * equal make one bin: a width-zero range has nothing to split.
 */
export function histogram(values: readonly (number | null)[], bins = 10): Histogram {
  const present = values.filter((v): v is number => v !== null && Number.isFinite(v));
  const missing = values.length - present.length;
  if (present.length === 0) return { edges: [], counts: [], missing };
  const lo = Math.min(...present);
  const hi = Math.max(...present);
  if (hi - lo < 1e-12) return { edges: [lo, hi], counts: [present.length], missing };
  const width = (hi - lo) / bins;
  const edges = Array.from({ length: bins + 1 }, (_, i) => (i === bins ? hi : lo + i * width));
  const counts = new Array<number>(bins).fill(0);
  for (const v of present) counts[Math.min(bins - 1, Math.floor((v - lo) / width))]! += 1;
  return { edges, counts, missing };
}
