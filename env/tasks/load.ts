/**
 * Reads tasks.jsonl: every line is validated against task-record.schema.json (ajv). A bad file
 * is an error, never a silently shorter list: the TaskFileError names the file, the line, the
 * field and what was expected, for every problem found (up to a limit).
 */
import { readFile } from 'node:fs/promises';
import Ajv, { type ErrorObject } from 'ajv';
import type { TaskRecord } from './record.js';
import taskRecordSchema from './task-record.schema.json';

export class TaskFileError extends Error {
  override name = 'TaskFileError';
  constructor(readonly problems: string[], total: number) {
    super(`${problems.join('\n')}${total > problems.length ? `\n... and ${total - problems.length} more problem(s)` : ''}`);
  }
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validateRecord = ajv.compile<TaskRecord>(taskRecordSchema);

const MAX_REPORTED = 20;

/** One ajv error as "field: what was expected". */
export function describeSchemaError(e: ErrorObject): string {
  const field = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '(record)';
  switch (e.keyword) {
    case 'required':
      return `${field === '(record)' ? '' : `${field}: `}missing field '${String((e.params as { missingProperty: string }).missingProperty)}'`;
    case 'additionalProperties':
      return `${field}: unexpected field '${String((e.params as { additionalProperty: string }).additionalProperty)}'`;
    case 'enum':
      return `${field}: expected one of ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`;
    case 'type':
      return `${field}: expected ${String((e.params as { type: string }).type)}`;
    default:
      return `${field}: ${e.message ?? 'is invalid'}`;
  }
}

/** Validates one parsed value; returns problems as "field: expected ...", empty when valid. */
export function validateTaskRecord(value: unknown): string[] {
  if (validateRecord(value)) return [];
  const errors = validateRecord.errors ?? [];
  // oneOf failures repeat their branches' errors; the branch errors say more, keep those.
  const useful = errors.filter((e) => e.keyword !== 'oneOf' || errors.length === 1);
  return [...new Set(useful.map(describeSchemaError))];
}

/** One bad line of a task file: where it is and what is wrong ("field: expected ..."). */
export interface TaskLineProblem {
  line: number;
  message: string;
}

/**
 * Reads JSONL text line by line, keeping every good record and every problem: `data check`
 * reports each bad line and still checks the rest. `file` names the source in messages.
 */
export function readTaskLines(text: string, file: string): { tasks: { line: number; task: TaskRecord }[]; problems: TaskLineProblem[] } {
  const problems: TaskLineProblem[] = [];
  const tasks: { line: number; task: TaskRecord }[] = [];
  const seen = new Map<string, number>();
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const where = `${file}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      problems.push({ line: i + 1, message: `${where}: not valid JSON (${(err as Error).message}); each line must be one task record object` });
      return;
    }
    const found = validateTaskRecord(value);
    if (found.length > 0) {
      for (const p of found) problems.push({ line: i + 1, message: `${where}: ${p}` });
      return;
    }
    const record = value as TaskRecord;
    const first = seen.get(record.id);
    if (first !== undefined) {
      problems.push({ line: i + 1, message: `${where}: id: '${record.id}' was already used on line ${first}; ids must be unique` });
      return;
    }
    seen.set(record.id, i + 1);
    tasks.push({ line: i + 1, task: record });
  });
  return { tasks, problems };
}

/** Parses JSONL text; any bad line makes the whole file an error (a silently shorter list is worse). */
export function parseTasks(text: string, file: string): TaskRecord[] {
  const { tasks, problems } = readTaskLines(text, file);
  if (problems.length > 0) throw new TaskFileError(problems.slice(0, MAX_REPORTED).map((p) => p.message), problems.length);
  return tasks.map((t) => t.task);
}

export async function readTaskFileText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read task file ${path}: ${(err as Error).message}`, { cause: err });
  }
}

export async function loadTasks(path: string): Promise<TaskRecord[]> {
  return parseTasks(await readTaskFileText(path), path);
}
