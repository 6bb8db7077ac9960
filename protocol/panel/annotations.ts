/**
 * Tags and comments on rollouts, in the run's annotations.jsonl (env/runs/annotations.ts;
 * schemas/annotation.schema.json): listed everywhere, saved and removed only where a host can
 * write (not in a static bundle).
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import type { Annotation, AnnotationTarget } from '../annotation.js';
import { hasFields, isNonNegativeInteger, isString, isStringArray, optional } from '../guards.js';
import { request } from './messages.js';

export type { Annotation, AnnotationTarget };

export const AnnotationsListRequest = request<{ runId: string }, { runId: string; annotations: Annotation[]; problems: string[] }>()('annotations/list', (p): p is { runId: string } =>
  hasFields(p, { runId: isString }),
);

const isTarget = (v: unknown): v is AnnotationTarget =>
  hasFields(v, {
    kind: (k) => k === 'step' || k === 'eval',
    step: optional((s) => s === null || isNonNegativeInteger(s)),
    key: optional(isString),
    line: isNonNegativeInteger,
    prompt_id: isString,
  });

export interface AnnotationSaveParams {
  runId: string;
  /** The annotation to replace; absent: a new one. */
  id?: string;
  target: AnnotationTarget;
  tags: string[];
  comment: string;
}

/** Saves an annotation (appends it to annotations.jsonl; the host validates it against the schema). Not available in a bundle. */
export const AnnotationSaveRequest = request<AnnotationSaveParams, { runId: string; annotation: Annotation }>()('annotations/save', (p): p is AnnotationSaveParams =>
  hasFields(p, { runId: isString, id: optional(isString), target: isTarget, tags: isStringArray, comment: isString }),
);

/** Removes an annotation (appends its removal). */
export const AnnotationDeleteRequest = request<{ runId: string; id: string }, { runId: string; id: string; deleted: true }>()('annotations/delete', (p): p is { runId: string; id: string } =>
  hasFields(p, { runId: isString, id: isString }),
);
