/**
 * Text normalisation for exact-match grading: the rule lives in protocol/answer-text.ts, so the
 * panels' answer grids (protocol/eval-summary.ts) group answers exactly as the scorer compares them.
 */
export { normalizeAnswerText } from '../../protocol/answer-text.js';
