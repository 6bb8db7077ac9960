/**
 * The distance reward for point answers (the geometry generator's `locate` family: "where is
 * point C?", answered with pixel coordinates). A task asks for it through its answer rule
 * (`answerRuleFor`): the gold is "(x, y)" and the task carries its tolerance τ in pixels.
 *
 *   d = distance between the answered and the true point (px)
 *   score = 1                       d ≤ τ      (correct)
 *         = 1 − (d − τ) / (2τ)      τ < d < 3τ (partial credit, a gradient toward the point)
 *         = 0                       d ≥ 3τ, or no point could be read
 *
 * The generator sets τ to 3 % of the image's longer side (at least 4 px) and keeps every other
 * labelled point at least 3τ from the asked one, so an answer that earns anything is nearer the
 * asked point than any other. Readable forms: "(x, y)", "[x, y]", "x, y", "x=12 y=34", "12 34";
 * anything else, or more than two numbers, reads as no point.
 */
import { answerItems, type AnswerMatch } from './answer-match.js';

/** How a task's answer is judged, when not by the text and number rules. */
export interface PointRule {
  kind: 'point';
  tolerance_px: number;
}

export type AnswerRule = PointRule;

/** The answer rule a task asks for: a point rule for `locate` questions with a tolerance, else none. */
export function answerRuleFor(task: { query?: { family?: string; tolerance_px?: number } | undefined }): AnswerRule | undefined {
  const q = task.query;
  if (q?.family === 'locate' && typeof q.tolerance_px === 'number' && q.tolerance_px > 0) return { kind: 'point', tolerance_px: q.tolerance_px };
  return undefined;
}

const NUMBER = /-?\d+(?:\.\d+)?/g;

/** The point an answer names, or null when it does not name exactly one. */
export function parsePoint(text: string): { x: number; y: number } | null {
  const cleaned = text.replace(/\b[xy]\s*[=:]\s*/gi, ' ').trim();
  if (!/^[([{]?\s*-?\d+(?:\.\d+)?\s*[,;\s]\s*-?\d+(?:\.\d+)?\s*[)\]}]?$/.test(cleaned)) return null;
  const numbers = cleaned.match(NUMBER)?.map(Number) ?? [];
  return numbers.length === 2 ? { x: numbers[0] as number, y: numbers[1] as number } : null;
}

export interface PointMatch extends AnswerMatch {
  /** The distance (px) from the true point, when a point was read. */
  distance: number | null;
}

export function scorePoint(prediction: string | readonly string[] | null | undefined, gold: string | readonly string[], rule: PointRule): PointMatch {
  const none: PointMatch = { correct: false, score: 0, method: 'point', distance: null };
  const truth = parsePoint(answerItems(gold).join(' '));
  if (!truth || prediction === null || prediction === undefined) return none;
  const items = answerItems(prediction);
  if (items.length !== 1) return none;
  const said = parsePoint(items[0] as string);
  if (!said) return none;
  const d = Math.hypot(said.x - truth.x, said.y - truth.y);
  const tau = rule.tolerance_px;
  const score = d <= tau ? 1 : Math.max(0, 1 - (d - tau) / (2 * tau));
  return { correct: d <= tau, score, method: 'point', distance: d };
}
