/**
 * What judging an answer yields, and how an answer's list items are read: shared by the text and
 * number rules (answer.ts), the point rule (point.ts), the judge and the reward. Pure.
 */

export type AnswerMethod = 'numeric' | 'exact' | 'anls' | 'list' | 'point' | 'none';

export interface AnswerMatch {
  correct: boolean;
  /** In [0, 1]. */
  score: number;
  /** Which rule decided; 'none' when there was no answer. */
  method: AnswerMethod;
}

const LIST_SEPARATOR = /\s*\|{2,}\s*/u;

/** The items of a list answer: string[] as given, or a string split on `||` / `|||`. */
export function answerItems(answer: string | readonly string[]): string[] {
  const raw = typeof answer === 'string' ? answer.split(LIST_SEPARATOR) : [...answer];
  return raw.map((item) => item.trim()).filter((item) => item.length > 0);
}

/** One line for prompts and logs: list items joined with ` || `. */
export function answerText(answer: string | readonly string[]): string {
  return typeof answer === 'string' ? answer : answer.join(' || ');
}
