/**
 * How a judge verdict combines with the rule score (judge.mode):
 * - 'replace': the judge decides alone (VTool-R1); the rule is the fallback when it fails.
 * - 'average' (default): score = (rule + judge) / 2; correct only when both say so. The rule
 *   misses paraphrases ("the Kingdom of Belgium") and the judge can be fooled or noisy; when they
 *   disagree the answer earns half credit, which keeps a learning signal without trusting either
 *   channel fully, and `correct` — which pays the tool bonus — stays conservative.
 * - 'either': score = max(rule, judge); correct when either says so (most lenient).
 * A failed or missing verdict leaves the rule result untouched: training goes on without a judge.
 */
import type { AnswerMatch } from './answer-match.js';
import type { JudgeMode } from './config.js';
import type { JudgeVerdict } from './judge-verdict.js';

export interface CombinedAccuracy {
  score: number;
  correct: boolean;
  /** Whether a judge verdict took part. */
  judged: boolean;
}

export function combineWithJudge(rule: AnswerMatch, verdict: JudgeVerdict | undefined, mode: JudgeMode): CombinedAccuracy {
  if (verdict === undefined || verdict.status !== 'ok') return { score: rule.score, correct: rule.correct, judged: false };
  const judge = verdict.correct ? 1 : 0;
  switch (mode) {
    case 'replace':
      return { score: judge, correct: verdict.correct, judged: true };
    case 'average':
      return { score: (rule.score + judge) / 2, correct: rule.correct && verdict.correct, judged: true };
    case 'either':
      return { score: Math.max(rule.score, judge), correct: rule.correct || verdict.correct, judged: true };
  }
}
