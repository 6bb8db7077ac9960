/**
 * One way to count and name a rollout's tool use, shared by the viewer's list (through the env's
 * rollout summary) and its rollout header, so the two can never disagree. Counted from the turns
 * themselves, which every writer records, not from totals a writer may or may not keep:
 *
 * - calls that ran: calls marked `ok`;
 * - failed calls: calls the env refused or that failed (unknown tool, bad argument, tool error);
 * - format errors: errors in a turn that belong to no call (a malformed message, no action).
 *
 * Also the legend of the error classes (VISTA-Gym's E1–E6), for the badges that show them.
 */
import { isRecord } from './guards.js';

export interface ToolUseCounts {
  ran: number;
  failed: number;
  formatErrors: number;
}

export const ERROR_CLASS_LEGEND: Readonly<Record<'E1' | 'E2' | 'E3' | 'E4' | 'E5' | 'E6', string>> = {
  E1: 'malformed call or unknown tool',
  E2: 'missing or extra argument',
  E3: 'argument of the wrong type',
  E4: 'unknown label or out-of-range value',
  E5: 'tool failure',
  E6: 'wrong reasoning after the tool output',
};

export function countToolUse(turns: unknown): ToolUseCounts {
  const counts: ToolUseCounts = { ran: 0, failed: 0, formatErrors: 0 };
  if (!Array.isArray(turns)) return counts;
  for (const turn of turns) {
    if (!isRecord(turn)) continue;
    const calls = Array.isArray(turn.calls) ? turn.calls.filter(isRecord) : [];
    for (const call of calls) {
      if (call.ok === true) counts.ran += 1;
      else counts.failed += 1;
    }
    // A failed call's error is also in the turn's errors: the rest belong to no call.
    const errors = Array.isArray(turn.errors) ? turn.errors.length : 0;
    counts.formatErrors += Math.max(0, errors - calls.filter((call) => call.ok !== true).length);
  }
  return counts;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** "2 calls ran · 1 failed · 1 format error"; "no tool calls" when nothing was tried. */
export function toolUseWords(counts: ToolUseCounts): string {
  const parts = [];
  if (counts.ran > 0 || counts.failed > 0) parts.push(plural(counts.ran, 'call ran', 'calls ran'));
  else parts.push('no tool calls');
  if (counts.failed > 0) parts.push(`${counts.failed} failed`);
  if (counts.formatErrors > 0) parts.push(plural(counts.formatErrors, 'format error', 'format errors'));
  return parts.join(' · ');
}

/** "E1: malformed call or unknown tool; E4: …" for the classes shown (a badge's tooltip). */
export function errorLegend(classes: readonly string[]): string {
  return classes.map((name) => `${name}: ${(ERROR_CLASS_LEGEND as Record<string, string>)[name] ?? 'unknown class'}`).join('; ');
}
