/**
 * Repetition detection (VISTA: the repetition penalty dominates every other term). Two signals:
 * the same word n-gram written too often within one assistant turn (a generation loop), and the
 * same tool called with the same arguments more than allowed across the episode (a call loop).
 * N-grams are counted per turn because a phrase that opens every turn ("Let me focus on the
 * columns") is style, not a loop, and a dominating penalty must not fire on style. Only words
 * count, so the fixed JSON punctuation of tool-call blocks never adds up to a repetition.
 */
import type { Trajectory } from '../episodes/trajectory.js';
import { DEFAULT_REWARD_CONFIG, type RepetitionConfig } from './config.js';
import { assistantTurns } from './format.js';

export interface RepetitionReport {
  fired: boolean;
  /** Occurrences of the most frequent n-gram within one turn. */
  maxNgramOccurrences: number;
  /** Occurrences of the most repeated (tool, arguments) pair. */
  maxIdenticalCalls: number;
  /** Why it fired, for people reading rollouts; null when it did not. */
  reason: string | null;
}

/** JSON with object keys sorted, so {a, b} and {b, a} are the same call. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function mostFrequent(counts: Map<string, number>): [string, number] {
  let best: [string, number] = ['', 0];
  for (const entry of counts) if (entry[1] > best[1]) best = entry;
  return best;
}

export function detectRepetition(trajectory: Pick<Trajectory, 'turns'>, config: RepetitionConfig = DEFAULT_REWARD_CONFIG.repetition): RepetitionReport {
  const calls = new Map<string, number>();
  const n = Math.max(1, Math.floor(config.ngram_size));
  let [ngram, ngramCount] = ['', 0];
  for (const turn of assistantTurns(trajectory)) {
    const ngrams = new Map<string, number>();
    const words = turn.text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
    for (let i = 0; i + n <= words.length; i++) {
      const key = words.slice(i, i + n).join(' ');
      ngrams.set(key, (ngrams.get(key) ?? 0) + 1);
    }
    const [turnNgram, turnCount] = mostFrequent(ngrams);
    if (turnCount > ngramCount) [ngram, ngramCount] = [turnNgram, turnCount];
    for (const call of turn.calls) {
      const key = `${call.name}(${canonicalJson(call.arguments)})`;
      calls.set(key, (calls.get(key) ?? 0) + 1);
    }
  }
  const [call, callCount] = mostFrequent(calls);
  let reason: string | null = null;
  if (config.enabled && callCount > config.max_identical_calls) {
    reason = `the call ${call} was made ${callCount} times (at most ${config.max_identical_calls} allowed)`;
  } else if (config.enabled && ngramCount > config.max_ngram_occurrences) {
    reason = `the ${n}-word phrase "${ngram}" was written ${ngramCount} times (at most ${config.max_ngram_occurrences} allowed)`;
  }
  return { fired: reason !== null, maxNgramOccurrences: ngramCount, maxIdenticalCalls: callCount, reason };
}
