/**
 * The result of reading one model message. Parsing never executes anything: it only recognises
 * tool calls written in one of the field's formats and a final answer.
 *
 * Fields added after the first four are optional so that code which builds a ParsedAction by
 * hand (a structured call from a client) stays valid; `parseAction` always sets them.
 */
import type { ActionError } from '../core/errors.js';
import type { ToolCall } from '../tools/types.js';
import type { ActionExamples } from './examples.js';

export type ActionFormat = 'hermes' | 'openthinkimg' | 'refocus';

/** How a final answer was written. */
export type AnswerStyle = 'answer_tag' | 'final_answer' | 'boxed' | 'terminate';

/** A parse error: an ActionError with where in the message it was (`offset`, `line`) when that is known. */
export type ParseError = ActionError;

export interface ParsedAction {
  /** Calls in the order written. Calls here are syntactically well-formed; names are not yet checked against the registry. */
  calls: ToolCall[];
  /** The final answer; a list when the answer was written with `||` separators. */
  answer: string | string[] | null;
  errors: ParseError[];
  /** Which call format(s) the message used. */
  formats: ActionFormat[];
  /** Character offset where each call was written; parallel to `calls`. */
  callOffsets?: number[];
  /** How the final answer was written; null when there is none. */
  answerStyle?: AnswerStyle | null;
  /** How many final answers the message held. When more than one, `answer` is the last written. */
  answerCount?: number;
  /** Calls written inside <think>…</think>: recognised and counted, never returned in `calls`. */
  ignoredInThink?: number;
  /**
   * Python variables this message bound to edited images (ReFocus style). Pass them back in
   * `ParseOptions.imageVariables` on the next turn: the notebook the model imagines keeps them.
   */
  imageVariables?: string[];
}

export interface ParseOptions {
  /** Extra Python names that hold images (variables bound in earlier turns). */
  imageVariables?: readonly string[];
  /** The forms error messages show; an episode passes ones made from its own image (default: a table's). */
  examples?: Readonly<ActionExamples>;
}
