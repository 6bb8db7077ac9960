/**
 * Text normalisation for exact-match grading (SQuAD style): case, whitespace, punctuation and
 * the articles a/an/the do not change an answer. It never touches digits or letters otherwise.
 * The scorer grades with it (env/rewards/answer.ts) and the evaluation summary groups answers by
 * it (protocol/eval-summary.ts). Pure.
 */

const ARTICLES = /\b(?:a|an|the)\b/gu;

export function normalizeAnswerText(text: string): string {
  const base = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
  const withoutArticles = base.replace(ARTICLES, ' ').replace(/\s+/gu, ' ').trim();
  // A multiple-choice answer "A" is all article; keep it rather than erase the answer.
  return withoutArticles === '' ? base : withoutArticles;
}
