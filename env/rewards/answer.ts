/**
 * Answer correctness by rule: ChartQA relaxed accuracy for numbers, normalised exact match for
 * short text, ANLS for long text, and order-insensitive matching for list answers.
 * Pure and synchronous; the LLM judge (judge.ts) is the second, optional channel.
 *
 * Lists: a gold written as string[] or with `||` (ReFocus writes `||`, its ground truth `|||`)
 * is a multiset. Items are paired by maximum bipartite matching with the scalar rule (so 100 and
 * 104 pair correctly against 104 and 99); the score is F1 over the pairs (or all-or-nothing with
 * list_score 'exact') and `correct` needs the whole set. A list answer to a one-item gold is
 * hedging and scores 0. When the gold is a list and the answer a single string without `||`,
 * the answer is also read as a prose list (split on ", ", ";", "and").
 */
import { anls } from './anls.js';
import { answerItems, type AnswerMatch } from './answer-match.js';
import { DEFAULT_REWARD_CONFIG, type AnswerConfig } from './config.js';
import { normalizeAnswerText } from './normalize.js';
import { parseNumber, withinTolerance } from './numbers.js';
import { scorePoint, type AnswerRule } from './point.js';

/** `rule`: how the task asks to be judged when not by these rules (a point answer, point.ts). */
export function scoreAnswer(
  prediction: string | readonly string[] | null | undefined,
  gold: string | readonly string[],
  config: AnswerConfig = DEFAULT_REWARD_CONFIG.answer,
  rule?: AnswerRule,
): AnswerMatch {
  if (rule?.kind === 'point') return scorePoint(prediction, gold, rule);
  const goldItems = answerItems(gold);
  if (prediction === null || prediction === undefined || goldItems.length === 0) return { correct: false, score: 0, method: 'none' };
  const predictionItems = answerItems(prediction);
  if (predictionItems.length === 0) return { correct: false, score: 0, method: 'none' };

  if (goldItems.length === 1) {
    const [onlyGold] = goldItems as [string];
    if (predictionItems.length > 1) return { correct: false, score: 0, method: 'list' };
    return scoreScalar(predictionItems[0] as string, onlyGold, config);
  }
  // A model often writes a list in prose ("Belgium, France and Italy"): when the gold is a list
  // and the answer one item, also read it split on commas, semicolons and "and"; keep the best.
  const readings = predictionItems.length > 1 ? [predictionItems] : proseListReadings(predictionItems[0] as string);
  let best: AnswerMatch = { correct: false, score: 0, method: 'list' };
  for (const items of readings) {
    const match = scoreList(items, goldItems, config);
    if (match.score > best.score || (match.correct && !best.correct)) best = match;
  }
  return best;
}

function proseListReadings(text: string): string[][] {
  // ", " (with a space) so that "1,234" stays one number.
  const bySeparators = text.split(/\s*;\s*|,\s+/u);
  const byConjunctions = text.split(/\s*;\s*|,\s+(?:and\s+)?|\s+and\s+|\s+&\s+/u);
  return [[text], bySeparators, byConjunctions].map((items) => items.map((i) => i.trim()).filter((i) => i.length > 0));
}

function scoreScalar(prediction: string, gold: string, config: AnswerConfig): AnswerMatch {
  const goldNumber = parseNumber(gold);
  const predictionNumber = goldNumber ? parseNumber(prediction) : null;
  if (goldNumber && predictionNumber) {
    const isYear = config.exact_years && goldNumber.plainInteger && goldNumber.value >= 1000 && goldNumber.value <= 2100;
    const correct = isYear
      ? predictionNumber.readings.some((p) => p === goldNumber.value)
      : predictionNumber.readings.some((p) => goldNumber.readings.some((g) => withinTolerance(p, g, config.relative_tolerance)));
    return { correct, score: correct ? 1 : 0, method: 'numeric' };
  }
  const normalizedGold = normalizeAnswerText(gold);
  const normalizedPrediction = normalizeAnswerText(prediction);
  if (normalizedPrediction === '') return { correct: false, score: 0, method: 'none' };
  if (normalizedPrediction === normalizedGold) return { correct: true, score: 1, method: goldNumber ? 'numeric' : 'exact' };
  if (!goldNumber && [...normalizedGold].length >= config.anls_min_length) {
    const score = anls(normalizedPrediction, normalizedGold, config.anls_threshold);
    return { correct: score >= config.anls_correct_at, score, method: 'anls' };
  }
  return { correct: false, score: 0, method: goldNumber ? 'numeric' : 'exact' };
}

function scoreList(predictionItems: string[], goldItems: string[], config: AnswerConfig): AnswerMatch {
  const pairs = maximumMatching(predictionItems, goldItems, (p, g) => scoreScalar(p, g, config).correct);
  const complete = pairs === goldItems.length && pairs === predictionItems.length;
  if (config.list_score === 'exact') return { correct: complete, score: complete ? 1 : 0, method: 'list' };
  const precision = pairs / predictionItems.length;
  const recall = pairs / goldItems.length;
  const f1 = pairs === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { correct: complete, score: f1, method: 'list' };
}

/** Size of a maximum matching between two small item lists (Kuhn's augmenting paths). */
function maximumMatching(left: string[], right: string[], matches: (l: string, r: string) => boolean): number {
  const adjacency = left.map((l) => right.flatMap((r, j) => (matches(l, r) ? [j] : [])));
  const owner = new Array<number>(right.length).fill(-1);
  const augment = (i: number, seen: boolean[]): boolean => {
    for (const j of adjacency[i] ?? []) {
      if (seen[j]) continue;
      seen[j] = true;
      const current = owner[j] ?? -1;
      if (current === -1 || augment(current, seen)) {
        owner[j] = i;
        return true;
      }
    }
    return false;
  };
  let size = 0;
  for (let i = 0; i < left.length; i++) if (augment(i, new Array<boolean>(right.length).fill(false))) size++;
  return size;
}
