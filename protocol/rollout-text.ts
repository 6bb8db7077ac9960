/**
 * Where a text occurs in a rollout record, for the viewer's search across steps: a case-insensitive
 * text in the question, prompt id, answer, gold answer or turns (the model's and the observations
 * it read), in that order, with a snippet of about SNIPPET_CHARS around it. The panel host applies
 * it to step files it streams (env/runs/rollout-search.ts) and a static bundle's page to the
 * records it holds (webview/shared/static-backend.ts). Pure; snippets are model text, shown as
 * text only.
 */
import type { RolloutSearchMatch, SearchField } from './panel/search.js';
import { isRecord } from './guards.js';

/** About how long a snippet is, and how much of it comes before the found text. */
export const SNIPPET_CHARS = 120;
const SNIPPET_BEFORE = 40;

/** The text a search looks in, in the order it looks. */
interface Field {
  field: SearchField;
  turn: number | null;
  role: string | null;
  text: string;
}

function answerText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(' || ');
  return null;
}

function fieldsOf(record: Record<string, unknown>): Field[] {
  const task = isRecord(record.task) ? record.task : {};
  const fields: Field[] = [];
  const add = (field: SearchField, text: string | null, turn: number | null = null, role: string | null = null) => {
    if (text !== null && text !== '') fields.push({ field, turn, role, text });
  };
  add('question', typeof task.question === 'string' ? task.question : null);
  add('prompt id', typeof record.prompt_id === 'string' ? record.prompt_id : null);
  add('answer', answerText(record.answer));
  add('gold', answerText(task.answer));
  const turns = Array.isArray(record.turns) ? record.turns : [];
  turns.forEach((turn, i) => {
    if (isRecord(turn) && typeof turn.text === 'string') add('turn', turn.text, i, typeof turn.role === 'string' ? turn.role : null);
  });
  return fields;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whitespace runs (newlines included) as one space, so a snippet reads as one line. */
function fold(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `text` cut to about SNIPPET_CHARS around [at, at + length), with … where it was cut. */
export function snippetAround(text: string, at: number, length: number): { snippet: string; start: number; end: number } {
  let from = Math.max(0, at - SNIPPET_BEFORE);
  let to = Math.min(text.length, Math.max(at + length, from + SNIPPET_CHARS));
  // Never split a surrogate pair.
  if (from > 0 && /[\uDC00-\uDFFF]/.test(text.charAt(from))) from -= 1;
  if (to < text.length && /[\uDC00-\uDFFF]/.test(text.charAt(to))) to += 1;
  const head = from > 0 ? '…' : '';
  const tail = to < text.length ? '…' : '';
  return { snippet: `${head}${text.slice(from, to)}${tail}`, start: head.length + at - from, end: head.length + at - from + length };
}

/**
 * Where `query` first occurs in a rollout record (null: nowhere). An empty query matches every
 * record, at the start of its question.
 */
export function findInRecord(record: Record<string, unknown>, query: string): Omit<RolloutSearchMatch, 'step' | 'line' | 'promptId'> | null {
  const fields = fieldsOf(record);
  const needle = fold(query);
  if (needle === '') {
    const question = fields.find((f) => f.field === 'question');
    const { snippet } = snippetAround(fold(question?.text ?? ''), 0, 0);
    return { field: 'question', turn: null, role: null, snippet, start: 0, end: 0 };
  }
  const pattern = new RegExp(escapeRegExp(needle), 'iu');
  for (const { field, turn, role, text } of fields) {
    const folded = fold(text);
    const found = pattern.exec(folded);
    if (!found) continue;
    return { field, turn, role, ...snippetAround(folded, found.index, found[0].length) };
  }
  return null;
}

