/**
 * Generated from schemas/annotation.schema.json by scripts/generate-record-types.ts (npm run gen:types).
 * Do not edit: change the schema and regenerate.
 */

/**
 * One line of a run's annotations.jsonl: a person's tags and comment on one rollout (a training step's or an evaluation's). The file is append-only and has one writer, the panel host (env/runs/annotations.ts); an edit appends a line with the same id, and the newest line of an id is the annotation (deleted: true removes it).
 */
export interface Annotation {
  /**
   * Names the annotation across its edits: random hex, made by the host.
   */
  id: string;
  /**
   * When this line was written, Unix seconds.
   */
  time: number;
  target: AnnotationTarget;
  /**
   * Short labels to filter by (letters, digits, space, _ . : -; up to 40 characters each).
   *
   * @maxItems 16
   */
  tags: string[];
  /**
   * Free text. Panels show it as text only.
   */
  comment: string;
  /**
   * true: the annotation with this id was removed.
   */
  deleted?: boolean;
}
/**
 * This interface was referenced by `Annotation`'s JSON-Schema
 * via the `definition` "AnnotationTarget".
 */
export interface AnnotationTarget {
  /**
   * A training step's rollout (rollouts/step-NNNNNN.jsonl) or an evaluation's (rollouts/eval-<label>.jsonl, or a vistool eval folder's rollouts).
   */
  kind: 'step' | 'eval';
  /**
   * The training step (kind step), or the step the evaluation evaluated (null when unknown).
   */
  step?: number | null;
  /**
   * The evaluation's key in the run (kind eval): eval-<label>, or 'eval' for a vistool eval folder.
   */
  key?: string;
  /**
   * The rollout's 0-based line in its file.
   */
  line: number;
  /**
   * The rollout's prompt id, so an annotation still names its task if the file is rewritten.
   */
  prompt_id: string;
}
