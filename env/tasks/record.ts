/**
 * One task: an image, a question, its answer, and the exact geometry the tools need.
 * Stored one per line in `tasks.jsonl`; `image` is relative to that file.
 * The JSON Schema for this record lives in `env/tasks/task-record.schema.json`.
 */
import type { ToolCall } from '../tools/types.js';
import type { ImageMetadata } from '../tools/metadata.js';

export type TaskKind = 'table' | 'vbar' | 'hbar' | 'grouped' | 'line';

export interface TaskRecord {
  id: string;
  /** Path of the image, relative to the JSONL file that holds the record. */
  image: string;
  question: string;
  answer: string | string[];
  kind: TaskKind;
  difficulty: number;
  meta: ImageMetadata;
  /** The data the image was drawn from: header and rows, as displayed. */
  table?: { columns: string[]; rows: (string | number)[][] };
  /** The tool calls a good agent makes before answering (for SFT warm-up). */
  gold?: ToolCall[];
  /** Where the task came from: 'synthetic', 'chartqa', 'refocus', ... */
  source: string;
  /** Question family (lookup, filter_sum, count, argmax, ...), when known. */
  family?: string;
}
