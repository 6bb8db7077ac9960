/**
 * Matching the labels a model writes ("wins", "Country ") to the labels in the metadata ("Wins",
 * "Country"). Levels are tried in order and the first level with any match decides:
 *   exact → case-insensitive → whitespace-normalised → punctuation-insensitive.
 * Each level includes the ones before it (the whitespace level also ignores case, ...).
 * Two labels matching at the deciding level is an ambiguity, never a guess.
 * This module only compares strings; it never sees pixels or boxes.
 */
import type { LabelMatch } from './types.js';

export type MatchLevel = LabelMatch['how'];

const LEVELS: readonly { how: MatchLevel; key: (label: string) => string; explained: string }[] = [
  { how: 'exact', key: (s) => s, explained: 'exactly' },
  { how: 'case', key: (s) => s.normalize('NFKC').toLowerCase(), explained: 'ignoring case' },
  { how: 'whitespace', key: (s) => s.normalize('NFKC').toLowerCase().trim().replace(/\s+/gu, ' '), explained: 'ignoring case and spacing' },
  { how: 'punctuation', key: (s) => s.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ''), explained: 'ignoring case, spacing and punctuation' },
];

export type LabelLookup =
  | { kind: 'found'; match: LabelMatch }
  | { kind: 'unknown' }
  | { kind: 'ambiguous'; candidates: string[]; explained: string };

/** Finds the one label in `labels` that `requested` names, or says why there is none. */
export function lookupLabel(requested: string, labels: readonly string[]): LabelLookup {
  for (const level of LEVELS) {
    const wanted = level.key(requested);
    // A label made only of punctuation has an empty key at the last level: it must not match everything.
    if (wanted === '') continue;
    const hits = labels.filter((label) => level.key(label) === wanted);
    if (hits.length === 1) return { kind: 'found', match: { requested, matched: hits[0] as string, how: level.how } };
    if (hits.length > 1) return { kind: 'ambiguous', candidates: hits, explained: level.explained };
  }
  return { kind: 'unknown' };
}

export type SelectionResult =
  | { ok: true; /** Distinct matched labels, in the order first requested. */ selected: string[]; matches: LabelMatch[] }
  | { ok: false; message: string };

/**
 * Matches every requested label; the first unknown or ambiguous one makes the whole selection fail,
 * with a message for the model that lists the valid labels. `noun` is singular ('column'),
 * `plural` names the family ('columns').
 */
export function selectLabels(requested: readonly string[], labels: readonly string[], noun: string, plural: string): SelectionResult {
  const matches: LabelMatch[] = [];
  const selected: string[] = [];
  for (const label of requested) {
    const found = lookupLabel(label, labels);
    if (found.kind === 'unknown') {
      const near = closestLabel(label, labels);
      const hint = near === null ? '' : ` (did you mean ${quote(near)}?)`;
      return { ok: false, message: `unknown ${noun} ${quote(label)}${hint} — ${plural} are: ${listLabels(labels)}` };
    }
    if (found.kind === 'ambiguous') {
      const names = found.candidates.map(quote).join(' and ');
      return { ok: false, message: `${noun} ${quote(label)} is ambiguous — it matches ${names} (${found.explained}); write the label exactly as shown` };
    }
    matches.push(found.match);
    if (!selected.includes(found.match.matched)) selected.push(found.match.matched);
  }
  return { ok: true, selected, matches };
}

/**
 * The label nearest to a misspelt one (edit distance on the punctuation-level keys, at most 2
 * edits and less than a third of the label), or null when none is close or two tie.
 * Only ever a suggestion in a message: a near miss is never applied.
 */
export function closestLabel(requested: string, labels: readonly string[]): string | null {
  const key = (s: string): string => s.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
  const wanted = key(requested);
  if (wanted === '') return null;
  let best: string | null = null;
  let bestDistance = Infinity;
  let tie = false;
  for (const label of labels) {
    const candidate = key(label);
    const limit = Math.min(2, Math.floor(Math.max(wanted.length, candidate.length) / 3));
    const distance = editDistance(wanted, candidate);
    if (distance > limit) continue;
    if (distance < bestDistance) {
      best = label;
      bestDistance = distance;
      tie = false;
    } else if (distance === bestDistance) {
      tie = true;
    }
  }
  return tie ? null : best;
}

/** Levenshtein distance (insertions, deletions, substitutions), by code unit. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

const MAX_LISTED = 40;

/** Labels joined for a message, shortened when a chart has very many ticks. */
export function listLabels(labels: readonly string[]): string {
  const shown = labels.slice(0, MAX_LISTED).join(', ');
  return labels.length > MAX_LISTED ? `${shown}, ... (${labels.length - MAX_LISTED} more)` : shown;
}

function quote(label: string): string {
  return `'${label}'`;
}
