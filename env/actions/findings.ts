/**
 * What the readers of one message have found so far: calls, answers, errors and the spans they
 * consumed, each with its offset so the final result can be put in written order. Shared by
 * the format readers; parse.ts turns it into a ParsedAction.
 */
import type { ErrorClass } from '../core/errors.js';
import type { ToolCall } from '../tools/types.js';
import type { ActionFormat, AnswerStyle } from './types.js';
import { DEFAULT_EXAMPLES, type ActionExamples } from './examples.js';
import type { Span } from './text-regions.js';

export interface FoundCall {
  call: ToolCall;
  offset: number;
  /**
   * Where the call sorts among the message's calls, when not at `offset`: calls of one Python
   * block all sort at the block, keeping their evaluation order (inner calls first).
   */
  sortAt?: number;
}

export interface FoundAnswer {
  answer: string | string[];
  offset: number;
  style: AnswerStyle;
}

export interface FoundError {
  class: ErrorClass;
  message: string;
  offset?: number;
  tool?: string;
}

export class Findings {
  readonly calls: FoundCall[] = [];
  readonly answers: FoundAnswer[] = [];
  readonly errors: FoundError[] = [];
  readonly consumed: Span[] = [];
  readonly formats = new Set<ActionFormat>();
  readonly imageVariables = new Set<string>();

  /** The forms error messages show (the episode's own, or the defaults). */
  constructor(readonly examples: Readonly<ActionExamples> = DEFAULT_EXAMPLES) {}

  error(errorClass: ErrorClass, message: string, offset?: number, tool?: string): void {
    const found: FoundError = { class: errorClass, message };
    if (offset !== undefined) found.offset = offset;
    if (tool !== undefined) found.tool = tool;
    this.errors.push(found);
  }

  consume(start: number, end: number): void {
    if (end > start) this.consumed.push({ start, end });
  }
}
