/**
 * The result of reading one model message. Parsing never executes anything: it only recognises
 * tool calls written in one of the field's formats and a final answer.
 */
import type { ActionError } from '../core/errors.js';
import type { ToolCall } from '../tools/types.js';

export type ActionFormat = 'hermes' | 'openthinkimg' | 'refocus';

export interface ParsedAction {
  /** Calls in the order written. Calls here are syntactically well-formed; names are not yet checked against the registry. */
  calls: ToolCall[];
  /** The final answer; a list when the answer was written with `||` separators. */
  answer: string | string[] | null;
  errors: ActionError[];
  /** Which call format(s) the message used. */
  formats: ActionFormat[];
}
