/**
 * One TaskRecord as one JSONL line, keys in a fixed order (the order of the schema), so the
 * same record always gives the same bytes. Unknown keys are kept, after the known ones, sorted.
 */
import type { TaskRecord } from './record.js';

const KEY_ORDER = ['id', 'image', 'question', 'answer', 'kind', 'difficulty', 'family', 'source', 'meta', 'table', 'gold', 'query', 'generator'];

export function recordLine(record: TaskRecord): string {
  const source = record as unknown as Record<string, unknown>;
  const ordered: Record<string, unknown> = {};
  for (const key of KEY_ORDER) if (source[key] !== undefined) ordered[key] = source[key];
  for (const key of Object.keys(source).filter((k) => !KEY_ORDER.includes(k)).sort()) if (source[key] !== undefined) ordered[key] = source[key];
  return `${JSON.stringify(ordered)}\n`;
}
