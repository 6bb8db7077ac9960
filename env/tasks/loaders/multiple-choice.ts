/**
 * What the geometry benchmarks share: four-choice questions answered with a letter. The question
 * is the problem text, then the choices lettered A–D, then how to answer; the answer is the letter.
 * Pure text building; no file access.
 */
import { fail, type Where } from './common.js';

export const CHOICE_LETTERS = ['A', 'B', 'C', 'D', 'E', 'F'] as const;

/** The choices as strings (numbers are written as they are), or a ConvertError naming the field. */
export function readChoices(value: unknown, where: Where, field: string): string[] {
  if (!Array.isArray(value) || value.length < 2 || value.length > CHOICE_LETTERS.length) return fail(where, field, `a list of 2 to ${CHOICE_LETTERS.length} choices`, value);
  return value.map((choice, i) => {
    if (typeof choice === 'number' && Number.isFinite(choice)) return String(choice);
    if (typeof choice === 'string' && choice.trim() !== '') return choice.trim();
    return fail(where, `${field}[${i}]`, 'a non-empty string or a number', choice);
  });
}

/** "problem\nChoices: A. 30  B. 40 ...\nAnswer with the letter of the correct choice." */
export function choiceQuestion(problem: string, choices: readonly string[]): string {
  const lettered = choices.map((c, i) => `${CHOICE_LETTERS[i]}. ${c}`).join('  ');
  return `${problem.trim()}\nChoices: ${lettered}\nAnswer with the letter of the correct choice.`;
}
