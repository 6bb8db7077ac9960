/**
 * Gold trajectories: the tool calls a good agent makes before answering, and the assistant
 * turns of that trajectory as text (one hermes `<tool_call>` per turn, then `<answer>`), for SFT
 * warm-up. The trainer gets these turns from the env server (POST /v1/batch/gold) and never writes
 * them itself, so the text a policy is warmed up on has one definition. Tables: mask to the relevant columns, then box (draw) the named rows or highlight the
 * rows that match. Charts: highlight the bars or points the question is about (level questions
 * mask all the others).
 */
import { formatAnswer } from '../actions/format.js';
import type { BandFamily } from '../tools/metadata.js';
import type { ToolCall } from '../tools/types.js';
import type { DataTable } from './data-table.js';
import { matchingRows } from './query-answer.js';
import type { GeneratedKind, TaskQuery, TaskRecord } from './record.js';

export function focusTool(family: BandFamily, how: 'mask' | 'draw' | 'highlight'): string {
  return `focus_on_${family}_with_${how}`;
}

function call(family: BandFamily, how: 'mask' | 'draw' | 'highlight', labels: string[]): ToolCall {
  return { name: focusTool(family, how), arguments: { [family]: labels } };
}

/** The rows a question is about: named ones, matching ones, or the answer's row. */
function focusRows(data: DataTable, query: TaskQuery, answer: string | string[]): { rows: string[]; named: boolean } {
  const keys = data.rows.map((r) => String(r[0]));
  if (query.rows && !query.columns) return { rows: query.rows, named: true };
  if (query.rows && query.columns) return { rows: query.rows, named: true };
  if (query.family === 'argmax' || query.family === 'argmin') return { rows: [answer as string], named: false };
  if (query.where) return { rows: matchingRows(data, query.where).map((r) => keys[r] as string), named: false };
  return { rows: query.family === 'average' ? keys : [], named: false };
}

export function goldCalls(kind: GeneratedKind, data: DataTable, query: TaskQuery, answer: string | string[]): ToolCall[] {
  const focus = focusRows(data, query, answer);
  if (kind !== 'table') {
    const family: BandFamily = kind === 'hbar' ? 'y_values' : 'x_values';
    // A level is read off one bar: masking every other bar leaves only the evidence, where a
    // highlight would leave the distractors in view.
    const how = query.family === 'level' ? 'mask' : 'highlight';
    return focus.rows.length > 0 ? [call(family, how, focus.rows)] : [];
  }
  const asked = new Set([data.columns[0]?.name, query.column, query.where?.column].filter((c): c is string => c !== undefined));
  const columns = data.columns.map((c) => c.name).filter((name) => asked.has(name));
  const calls: ToolCall[] = [];
  // Masking every column changes nothing, so a good agent only masks when something goes away.
  if (columns.length < data.columns.length) calls.push(call('columns', 'mask', columns));
  const rows = query.family === 'average' && !query.where ? [] : focus.rows;
  if (rows.length > 0) calls.push(call('rows', focus.named ? 'draw' : 'highlight', rows));
  if (calls.length === 0 && query.column) calls.push(call('columns', 'highlight', [query.column]));
  return calls;
}

/** The assistant turns of a task's gold trajectory: one turn per gold call, then the answer's. */
export interface GoldTranscript {
  /** `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, one per turn, each answered by an observation. */
  toolTurns: string[];
  /** `<answer>...</answer>`; a list answer joined with `||`. */
  answer: string;
}

/**
 * The gold trajectory as the policy is trained to write it. Each call is its own turn, so the
 * policy sees the edited image before it calls again or answers. The call's JSON has the spacing
 * of Python's `json.dumps` and of Qwen's chat template (`", "`, `": "`), on one line; this is the
 * text the demo's measured results were trained on, so it stays byte for byte.
 * (formatToolCall's hermes form, with its line breaks, is the one prompts show.)
 */
export function goldTranscript(task: TaskRecord): GoldTranscript {
  const toolTurns = (task.gold ?? []).map((c) => `<tool_call>${spacedJson({ name: c.name, arguments: c.arguments })}</tool_call>`);
  return { toolTurns, answer: formatAnswer(task.answer, 'answer_tag') };
}

/** JSON with `", "` between items and `": "` after keys, as Python's json.dumps writes it (non-ASCII kept as is). */
export function spacedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spacedJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${spacedJson(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
