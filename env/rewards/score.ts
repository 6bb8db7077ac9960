/**
 * The reward of one trajectory, with its breakdown. The total is
 *
 *   base   = Σ_k weights[k] · components[k]         k ∈ accuracy, format, tool_bonus, tool_use, efficiency
 *            (tool_bonus: 1 when correct and a call ran — on target, with tool.tool_bonus_requires 'on_target')
 *   base  := base · no_tool_factor   when base > 0   (no successful tool call; positive part only)
 *   reward = min(base, repetition.penalty)            when the repetition check fired
 *
 * Every term is kept in `components` (the additive ones, which have a weight, and the modifiers
 * and diagnostics, which do not), so the rollout viewer can show why a trajectory earned what it
 * did and `totalReward` can recompute the total from the breakdown alone.
 * Synchronous and pure: the judge verdict, when there is one, is fetched by the caller.
 */
import type { Trajectory } from '../episodes/trajectory.js';
import { answerText, type AnswerMatch } from './answer-match.js';
import { scoreAnswer } from './answer.js';
import type { AnswerRule } from './point.js';
import { DEFAULT_REWARD_CONFIG, type RewardConfig, type RewardWeights } from './config.js';
import { scoreEfficiency } from './efficiency.js';
import { scoreFormat } from './format.js';
import { combineWithJudge } from './judge-combine.js';
import type { JudgeVerdict } from './judge-verdict.js';
import { detectRepetition } from './repetition.js';
import { rankGroup, toolBonusEarned, usedToolSuccessfully } from './tool-use.js';

export interface ScoredTrajectory {
  reward: number;
  /**
   * Additive: accuracy, format, tool_bonus, tool_use, efficiency.
   * Modifiers: no_tool_factor (1 or tool.no_tool_factor), repetition (1 when it fired), overlong (1 when the answer was too long).
   * Diagnostics: accuracy_rule, accuracy_judge (1/0, only with a usable verdict), judge_failed (1 when a verdict was an error, 0 when it was not; absent without a judge), group_rank, point_distance_px (point answers: the distance from the true point).
   */
  components: Record<string, number>;
  weights: Record<string, number>;
  correct: boolean;
  /** Human-readable reasons for anything that lowered the reward. */
  notes: string[];
}

const ADDITIVE: readonly (keyof RewardWeights)[] = ['accuracy', 'format', 'tool_bonus', 'tool_use', 'efficiency'];

/** Recomputes the total from a breakdown (see the formula at the top of this file). */
export function totalReward(components: Readonly<Record<string, number>>, weights: Readonly<Record<string, number>>, config: RewardConfig): number {
  let total = 0;
  for (const [key, weight] of Object.entries(weights)) total += weight * (components[key] ?? 0);
  if (total > 0) total *= components.no_tool_factor ?? 1;
  if (components.repetition === 1) total = Math.min(total, config.repetition.penalty);
  return total;
}

/**
 * Scores one finished (or cut-off) trajectory against its gold answer. A judge verdict, when
 * given, is combined with the rule score according to config.judge.mode, whatever
 * config.judge.enabled says (that flag tells the caller whether to ask the judge at all).
 */
export function scoreTrajectory(
  trajectory: Trajectory,
  gold: string | string[],
  config: RewardConfig = DEFAULT_REWARD_CONFIG,
  judge?: JudgeVerdict,
  rule?: AnswerRule,
): ScoredTrajectory {
  const notes: string[] = [];
  const format = scoreFormat(trajectory, config.format);
  notes.push(...format.problems);

  const answerLength = trajectory.answer === null ? 0 : [...answerText(trajectory.answer)].length;
  const overlong = config.answer.max_answer_chars > 0 && answerLength >= config.answer.max_answer_chars;
  if (overlong) notes.push(`the answer has ${answerLength} characters (scores 0 at ${config.answer.max_answer_chars} or more)`);
  const matched: AnswerMatch = overlong ? { correct: false, score: 0, method: 'none' } : scoreAnswer(trajectory.answer, gold, config.answer, rule);
  if (trajectory.answer === null) notes.push(`no final answer (episode ended: ${trajectory.end_reason ?? 'unknown'})`);

  // A judge cannot rescue a missing or overlong answer: there is nothing acceptable to judge.
  const usableVerdict = trajectory.answer === null || overlong ? undefined : judge;
  const accuracy = combineWithJudge(matched, usableVerdict, config.judge.mode);
  if (judge?.status === 'error') notes.push(`judge unavailable, rule reward used: ${judge.reason}`);
  if (usableVerdict?.status === 'ok' && usableVerdict.correct !== matched.correct && config.judge.mode !== 'replace') {
    notes.push(
      `the judge says ${usableVerdict.correct ? 'correct' : 'wrong'} and the rule ${matched.correct ? 'correct' : 'wrong'}: ` +
        `accuracy ${accuracy.score} (judge.mode ${config.judge.mode})`,
    );
  }
  let accuracyScore = accuracy.score;
  let correct = accuracy.correct;
  if (config.answer.require_well_formed && format.wellFormedTurns < format.assistantTurns) {
    accuracyScore = 0;
    correct = false;
    notes.push('accuracy withheld: answer.require_well_formed is on and a turn was malformed');
  }

  const tool = usedToolSuccessfully(trajectory);
  const bonus = toolBonusEarned(trajectory, config.tool.tool_bonus_requires);
  if (bonus.why !== null && correct) notes.push(bonus.why);
  const repetition = detectRepetition(trajectory, config.repetition);
  if (repetition.reason !== null) notes.push(`repetition: ${repetition.reason}`);
  if (!tool && config.tool.no_tool_factor !== 1) notes.push(`no successful tool call: positive reward × ${config.tool.no_tool_factor}`);

  const components: Record<string, number> = {
    accuracy: accuracyScore,
    format: format.score,
    tool_bonus: bonus.earned && correct ? 1 : 0,
    tool_use: tool ? 1 : 0,
    efficiency: scoreEfficiency(trajectory, config.efficiency),
    no_tool_factor: tool ? 1 : config.tool.no_tool_factor,
    repetition: repetition.fired ? 1 : 0,
    overlong: overlong ? 1 : 0,
    accuracy_rule: matched.score,
  };
  // A point answer's distance (px) from the true point, when one was read (point.ts).
  if ('distance' in matched && typeof matched.distance === 'number') components.point_distance_px = matched.distance;
  if (usableVerdict?.status === 'ok') components.accuracy_judge = usableVerdict.correct ? 1 : 0;
  // 0 or 1 on every judged trajectory, so its mean over a step is the share of failed judgements.
  if (judge !== undefined) components.judge_failed = judge.status === 'error' ? 1 : 0;

  const weights: Record<string, number> = {};
  for (const key of ADDITIVE) weights[key] = config.weights[key];
  return { reward: totalReward(components, weights, config), components, weights, correct, notes };
}

/**
 * Chain-of-Focus group re-ranking (tool.group_ranking): within one group, accuracy becomes the
 * trajectory's rank (direct-correct 1 > tool-correct 0.8 > tool-wrong 0.5 > direct-wrong 0).
 * The rank already encodes the tool preference, so the tool bonus and the no-tool factor are
 * switched off for the group; format, efficiency and the repetition cap still apply.
 */
export function applyGroupRanking(results: readonly ScoredTrajectory[], trajectories: readonly Trajectory[], config: RewardConfig): ScoredTrajectory[] {
  if (results.length !== trajectories.length) {
    throw new Error(`applyGroupRanking: ${results.length} results for ${trajectories.length} trajectories; pass one result per trajectory, in order`);
  }
  const ranks = rankGroup(trajectories.map((t, i) => ({ turns: t.turns, prompt_id: t.prompt_id, correct: results[i]?.correct })));
  return results.map((result, i) => {
    const rank = ranks[i] ?? 0;
    const components = { ...result.components, accuracy: rank, group_rank: rank, no_tool_factor: 1 };
    const weights = { ...result.weights, tool_bonus: 0, tool_use: 0 };
    return { ...result, components, weights, reward: totalReward(components, weights, config) };
  });
}

/** Scores a group of trajectories of one prompt, re-ranking them when tool.group_ranking is on. */
export function scoreGroup(
  trajectories: readonly Trajectory[],
  gold: string | string[],
  config: RewardConfig = DEFAULT_REWARD_CONFIG,
  verdicts: readonly (JudgeVerdict | undefined)[] = [],
): ScoredTrajectory[] {
  const results = trajectories.map((t, i) => scoreTrajectory(t, gold, config, verdicts[i]));
  return config.tool.group_ranking ? applyGroupRanking(results, trajectories, config) : results;
}
