/**
 * Reads the task record a client sends to start an episode, validated against the same JSON
 * Schema that `loadTasks` uses for tasks.jsonl files — one definition of a task, everywhere.
 */
import Ajv from 'ajv';
import taskRecordSchema from '../tasks/task-record.schema.json';
import type { TaskRecord } from '../tasks/record.js';
import { HttpError } from './http-util.js';

const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile<TaskRecord>(taskRecordSchema);

export function parseTaskRecord(value: unknown): TaskRecord {
  if (value === undefined) throw new HttpError(400, 'body needs "task": a task record as in tasks.jsonl (id, image, question, answer, kind, difficulty, meta, source)');
  if (!validate(value)) {
    const problems = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `task${e.instancePath || ''} ${e.message ?? 'is invalid'}${e.params && 'additionalProperty' in e.params ? ` ('${String(e.params.additionalProperty)}')` : ''}`);
    throw new HttpError(400, `invalid task record: ${problems.join('; ')}`);
  }
  return value;
}
