/**
 * Search across every step of a run (the viewer's `rollouts/search`): a case-insensitive text in a
 * rollout's question, prompt id, answer, gold answer or turns (the model's and the observations
 * it read), and the viewer's facets (protocol/rollout-filter.ts: outcome, tool use, error class,
 * tool name), applied to each rollout record of each step file.
 *
 * Step files are streamed: each is read through a JsonlTail a slice at a time (SLICE_BYTES, or
 * one line when a line is longer), each line is parsed, judged and dropped, so memory holds one
 * slice and the matches kept, never a run's records. Every file is read to the end, so the
 * per-step counts and the total are exact; only the list of matches is capped, and it can start
 * at any step and line (`from`), for the next page or for one step's matches.
 *
 * Read-only: never writes to the run directory.
 */
import { join } from 'node:path';
import type { RolloutSearchMatch, RolloutSearchParams, RolloutSearchResult, SearchField, StepFileInfo } from '../../protocol/panel-protocol.js';
import { SEARCH_LIMIT } from '../../protocol/panel-protocol.js';
import { isRecord } from '../../protocol/guards.js';
import { matchesFacets } from '../../protocol/rollout-filter.js';
import { JsonlTail } from './jsonl-tail.js';
import { summarizeRollout } from './rollout-summary.js';

/** What one read of a step file takes: a big file is searched in slices this size. */
const SLICE_BYTES = 1 << 20;
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

/**
 * Searches the given step files of the run at `runDir` (ascending steps), reading each as a stream
 * of slices (`sliceBytes`, default 1 MiB). Once `signal` is aborted (the panel dropped the search)
 * no further slice is read, and the search rejects with the signal's reason.
 */
export async function searchRollouts(
  runDir: string,
  files: readonly StepFileInfo[],
  params: Omit<RolloutSearchParams, 'runId'>,
  options: { sliceBytes?: number; signal?: AbortSignal } = {},
): Promise<Omit<RolloutSearchResult, 'runId'>> {
  const limit = params.limit ?? SEARCH_LIMIT;
  const from = params.from ?? { step: 0, line: 0 };
  const listable = (step: number, line: number) => step > from.step || (step === from.step && line >= from.line);
  /** Matches at or after `from`: more of them than listed means the list is capped. */
  let after = 0;
  const steps: { step: number; matches: number }[] = [];
  const matches: RolloutSearchMatch[] = [];
  const scanned = { steps: 0, rollouts: 0, skipped: 0 };
  const errorClasses = new Set<string>();
  const toolNames = new Set<string>();
  let total = 0;
  for (const { step, file } of [...files].sort((a, b) => a.step - b.step)) {
    const tail = new JsonlTail(join(runDir, file));
    let count = 0;
    scanned.steps += 1;
    for (let more = true; more; ) {
      options.signal?.throwIfAborted();
      const read = await tail.read(options.sliceBytes ?? SLICE_BYTES);
      more = read.more;
      for (const { line, text } of read.lines) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          scanned.skipped += 1;
          continue;
        }
        const summary = summarizeRollout(parsed, line);
        if (typeof summary === 'string' || !isRecord(parsed)) {
          scanned.skipped += 1;
          continue;
        }
        scanned.rollouts += 1;
        summary.errorClasses.forEach((c) => errorClasses.add(c));
        summary.toolNames.forEach((t) => toolNames.add(t));
        if (!matchesFacets(summary, params.filter)) continue;
        const found = findInRecord(parsed, params.query);
        if (!found) continue;
        count += 1;
        if (!listable(step, line)) continue;
        after += 1;
        if (matches.length < limit) matches.push({ step, line, promptId: summary.promptId, ...found });
      }
    }
    if (count > 0) steps.push({ step, matches: count });
    total += count;
  }
  const seen = { errorClasses: [...errorClasses].sort(), toolNames: [...toolNames].sort() };
  return { query: params.query, filter: params.filter, steps, total, matches, from, capped: after > matches.length, scanned, seen };
}
