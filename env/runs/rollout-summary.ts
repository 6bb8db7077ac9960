/**
 * Reduces one rollout record (docs/CONTRACTS.md) to the few fields the viewer's lists, groups
 * and filters need, so a step's index stays small however long its transcripts are. Tolerant:
 * a record from an older writer with fields missing still gets a summary; only a line that is
 * not a JSON object with a `turns` list is refused.
 */
import type { RolloutSummary } from '../../protocol/panel-protocol.js';
import { isRecord } from '../../protocol/guards.js';
import { countToolUse } from '../../protocol/tool-use.js';
import { findingsOf } from '../../protocol/findings.js';

function answerOf(value: unknown): string | string[] | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  if (typeof value === 'number') return String(value);
  return null;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function summarizeRollout(record: unknown, line: number): RolloutSummary | string {
  if (!isRecord(record)) return 'not a JSON object';
  if (!Array.isArray(record.turns)) return 'has no "turns" list';
  const task = isRecord(record.task) ? record.task : {};
  const errorClasses = new Set<string>();
  const toolNames = new Set<string>();
  for (const turn of record.turns) {
    if (!isRecord(turn)) continue;
    if (Array.isArray(turn.errors)) for (const e of turn.errors) if (isRecord(e) && typeof e.class === 'string') errorClasses.add(e.class);
    if (Array.isArray(turn.calls)) {
      for (const call of turn.calls) {
        if (!isRecord(call)) continue;
        if (typeof call.name === 'string') toolNames.add(call.name);
        if (isRecord(call.error) && typeof call.error.class === 'string') errorClasses.add(call.error.class);
      }
    }
  }
  const counts = countToolUse(record.turns);
  const targets = firstCallTargets(record.turns);
  const findings = findingsOf(record);
  return {
    line,
    promptId: typeof record.prompt_id === 'string' ? record.prompt_id : `line-${line + 1}`,
    group: numberOrNull(record.group),
    kept: typeof record.kept === 'boolean' ? record.kept : null,
    ...(typeof record.env_failed === 'boolean' ? { envFailed: record.env_failed } : {}),
    question: typeof task.question === 'string' ? task.question : '',
    gold: answerOf(task.answer),
    answer: answerOf(record.answer),
    correct: typeof record.correct === 'boolean' ? record.correct : null,
    reward: numberOrNull(record.reward),
    advantage: numberOrNull(record.advantage),
    toolCalls: counts.ran,
    toolErrors: counts.failed,
    formatErrors: counts.formatErrors,
    errorClasses: [...errorClasses].sort(),
    toolNames: [...toolNames].sort(),
    turns: record.turns.length,
    endReason: typeof record.end_reason === 'string' ? record.end_reason : null,
    ...(record.arm === 'tools' || record.arm === 'no_tools' ? { arm: record.arm } : {}),
    ...(targets ? { callTargets: targets } : {}),
    ...(findings ? { findings } : {}),
  };
}

/** The labels the first call of a record's turns named: the values of its first list argument (columns, x_values, ...); null when it made no call. */
function firstCallTargets(turns: unknown[]): string[] | null {
  for (const turn of turns) {
    if (!isRecord(turn) || !Array.isArray(turn.calls)) continue;
    const call = turn.calls.find(isRecord);
    if (!call) continue;
    const list = Object.values(isRecord(call.arguments) ? call.arguments : {}).find(Array.isArray);
    return (list ?? []).map((v) => String(v)).slice(0, 16);
  }
  return null;
}
