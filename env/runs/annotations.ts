/**
 * A run's annotations: people's tags and comments on rollouts, in `annotations.jsonl` in the run
 * directory (schemas/annotation.schema.json). The file is append-only: saving appends the whole
 * annotation as one line (an edit is a new line with the same id, a removal one with
 * `deleted: true`), and the newest line of an id is the annotation. So a reader never sees half an
 * annotation, a killed writer loses at most the line it was writing, and the history stays.
 *
 * One writer: the panel host (env/view/panel-backend.ts), on a person's explicit save in the
 * rollout viewer. It is the one file of a run the panels ever change; nothing else in the run is
 * touched. Every line written is validated against the schema first; a line read that breaks it
 * is reported, never fatal.
 */
import { randomBytes } from 'node:crypto';
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Ajv from 'ajv';
import schema from '../../schemas/annotation.schema.json';
import type { Annotation, AnnotationTarget } from '../../protocol/annotation.js';

export const ANNOTATIONS_FILE = 'annotations.jsonl';

const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile<Annotation>(schema);

export class AnnotationError extends Error {
  override name = 'AnnotationError';
}

function problemsOf(errors: typeof validate.errors): string {
  return (errors ?? [])
    .slice(0, 4)
    .map((e) => `${e.instancePath || '(annotation)'} ${e.message ?? 'is invalid'}`)
    .join('; ');
}

/** The annotations as they stand (newest line per id, removed ones left out), in the order first written; and the lines that were not annotations. */
export async function readAnnotations(runDir: string): Promise<{ annotations: Annotation[]; problems: string[] }> {
  let text: string;
  try {
    text = await readFile(join(runDir, ANNOTATIONS_FILE), 'utf8');
  } catch {
    return { annotations: [], problems: [] };
  }
  const byId = new Map<string, Annotation>();
  const problems: string[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      // A torn last line (a writer killed mid-write) is the one expected case.
      problems.push(`${ANNOTATIONS_FILE} line ${index + 1} is not JSON; skipped`);
      return;
    }
    if (!validate(parsed)) {
      problems.push(`${ANNOTATIONS_FILE} line ${index + 1} is not an annotation (${problemsOf(validate.errors)}); skipped`);
      return;
    }
    // Map keeps the first insertion's place: an edited annotation stays where it was first written.
    byId.set(parsed.id, parsed);
  });
  return { annotations: [...byId.values()].filter((a) => a.deleted !== true), problems };
}

export interface AnnotationInput {
  /** An existing annotation's id to replace; absent: a new one. */
  id?: string;
  target: AnnotationTarget;
  tags: string[];
  comment: string;
}

/** Tags as people type them: trimmed, empty ones and repeats dropped. */
export function cleanTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((t) => t.trim()).filter((t) => t !== ''))];
}

/** Appends the annotation as one line (validated first: a bad one is refused with what is wrong) and returns it. */
export async function saveAnnotation(runDir: string, input: AnnotationInput, now = Date.now() / 1000): Promise<Annotation> {
  const annotation: Annotation = {
    id: input.id ?? randomBytes(12).toString('hex'),
    time: now,
    target: input.target,
    tags: cleanTags(input.tags),
    comment: input.comment,
  };
  if (!validate(annotation)) throw new AnnotationError(`not saved: ${problemsOf(validate.errors)}`);
  if (annotation.tags.length === 0 && annotation.comment.trim() === '') throw new AnnotationError('not saved: give a tag or a comment');
  await appendLine(runDir, annotation);
  return annotation;
}

/** Removes an annotation (appends its removal). */
export async function deleteAnnotation(runDir: string, id: string, now = Date.now() / 1000): Promise<void> {
  const current = (await readAnnotations(runDir)).annotations.find((a) => a.id === id);
  if (!current) throw new AnnotationError(`no annotation '${id}' in ${ANNOTATIONS_FILE}`);
  await appendLine(runDir, { ...current, time: now, deleted: true });
}

async function appendLine(runDir: string, annotation: Annotation): Promise<void> {
  // One write of one whole line to a file opened for appending: concurrent readers see it whole or not at all.
  await appendFile(join(runDir, ANNOTATIONS_FILE), `${JSON.stringify(annotation)}\n`, { encoding: 'utf8', flag: 'a', mode: 0o644 });
}
