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

/**
 * What a client may leave out, and what it then means. A Gym-style env takes the minimal record
 * any data source has (id, image, question, answer): `kind` "chart" (no assumption about the
 * layout), `difficulty` 0 (unknown), `source` "client", and `meta` {} (no bands: OCR grounding
 * finds them when the image is a table or a bar chart). tasks.jsonl files still need every field.
 */
export const TASK_DEFAULTS = { kind: 'chart', difficulty: 0, source: 'client', meta: {} } as const;

export function parseTaskRecord(value: unknown): TaskRecord {
  if (value === undefined) throw new HttpError(400, 'body needs "task": a task record with at least id, image, question and answer (as in tasks.jsonl)');
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) value = { ...TASK_DEFAULTS, ...value };
  if (!validate(value)) {
    const problems = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `task${e.instancePath || ''} ${e.message ?? 'is invalid'}${e.params && 'additionalProperty' in e.params ? ` ('${String(e.params.additionalProperty)}')` : ''}`);
    throw new HttpError(400, `invalid task record: ${problems.join('; ')}`);
  }
  return value;
}
