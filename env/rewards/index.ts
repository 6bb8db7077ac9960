/**
 * The rewards capability: rule-based answer matching, format, tool use, repetition, efficiency,
 * their weighted sum with a per-trajectory breakdown, and the fail-soft LLM judge.
 * Import from here; the files behind it hold one concept each.
 */
export { scoreAnswer } from './answer.js';
export { answerItems, answerText, type AnswerMatch, type AnswerMethod } from './answer-match.js';
export { parseNumber, withinTolerance, type ParsedNumber } from './numbers.js';
export { normalizeAnswerText } from './normalize.js';
export { anls, levenshtein } from './anls.js';
export { scoreFormat, type FormatReport } from './format.js';
export { detectRepetition, type RepetitionReport } from './repetition.js';
export { scoreEfficiency } from './efficiency.js';
export { usedToolSuccessfully, rankGroup, GROUP_RANK } from './tool-use.js';
export { scoreTrajectory, scoreGroup, applyGroupRanking, totalReward, type ScoredTrajectory } from './score.js';
export { DEFAULT_REWARD_CONFIG, type RewardConfig, type JudgeConfig, type JudgeMode } from './config.js';
export { resolveRewardConfig, rewardConfigSchema, RewardConfigError } from './resolve-config.js';
export { combineWithJudge } from './judge-combine.js';
export { parseJudgeReply, type JudgeVerdict } from './judge-verdict.js';
export { JudgeClient, type JudgeRequest, type JudgeClientOptions } from './judge.js';
export { TrajectoryScorer } from './trajectory-scorer.js';
export { answerRuleFor, parsePoint, scorePoint, type AnswerRule, type PointRule, type PointMatch } from './point.js';
