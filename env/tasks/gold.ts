/**
 * Gold trajectories: the tool calls a good agent makes before answering, and the assistant
 * messages of that trajectory as text (hermes `<tool_call>` JSON, then `<answer>`), for SFT
 * warm-up. Tables: mask to the relevant columns, then box (draw) the named rows or highlight the
 * rows that match. Charts: highlight the bars or points the question is about (level questions
 * mask all the others).
 */
import { formatAnswer, formatToolCall } from '../actions/format.js';
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

/**
 * The assistant messages of the task's gold trajectory: one message with every gold call
 * (hermes form, `<tool_call>{json}</tool_call>`, one per line), then the final answer message.
 * A list answer is written joined with `||`.
 */
export function goldMessages(task: TaskRecord): string[] {
  const calls = task.gold ?? [];
  const messages: string[] = [];
  if (calls.length > 0) messages.push(calls.map((c) => formatToolCall(c, 'hermes')).join('\n'));
  messages.push(formatAnswer(task.answer, 'answer_tag'));
  return messages;
}
