/**
 * `results.json`: an eval's summary as one document — what was evaluated (policy, tasks,
 * arms), whether every task has a result, the per-arm breakdowns, and an `evaluations` map in
 * the shape the dashboard reads (env/runs/evaluations.ts: `{"evaluations": {label: {step,
 * metrics}}}`), so `vistool view DIR` shows the eval beside training runs.
 * The shape is documented in README.md in this folder. Written whole, through a temp file.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Presentation } from '../presentation/presentation.js';
import type { Arm } from './task-result.js';
import type { ArmBreakdown } from './summary.js';

export const RESULTS_FORMAT = 'vistool-eval-results';
export const RESULTS_VERSION = 1;

export interface ResultsDocument {
  format: typeof RESULTS_FORMAT;
  version: number;
  label: string;
  policy: string;
  tasks_file: string;
  /** SHA-256 of the tasks file's bytes: one file reached by two paths is the same tasks (eval compare). Absent in older documents. */
  tasks_sha256?: string;
  /** The presentation the policy read (system turn, image view); absent in older documents, which used the env's default. */
  presentation?: Presentation;
  /** Tasks selected for this eval (after --limit). */
  tasks: number;
  arms_requested: Arm[];
  /** True when every selected task has a result line in every requested arm. */
  complete: boolean;
  /** False for checkpoint evals run whole by the trainer (no per-task lines, no breakdowns). */
  per_task: boolean;
  /** The checkpoint's optimizer step, when known. */
  step: number | null;
  updated_at: number;
  evaluations: Record<string, { step: number | null; metrics: Record<string, number> }>;
  arms: Partial<Record<Arm, ArmBreakdown>>;
}

export async function writeResultsDocument(dir: string, document: ResultsDocument): Promise<string> {
  const path = join(dir, 'results.json');
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(document, null, 2) + '\n');
  await rename(temp, path);
  return path;
}

export class ResultsDocumentError extends Error {
  override name = 'ResultsDocumentError';
}

export async function readResultsDocument(dir: string): Promise<ResultsDocument> {
  const path = join(dir, 'results.json');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new ResultsDocumentError(`${path} does not exist: is '${dir}' an eval output folder (vistool eval --out)? A killed eval writes it when rerun.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ResultsDocumentError(`${path} is not JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || (value as { format?: unknown }).format !== RESULTS_FORMAT) {
    throw new ResultsDocumentError(`${path} is not a vistool eval results document (no "format": "${RESULTS_FORMAT}")`);
  }
  return value as ResultsDocument;
}
