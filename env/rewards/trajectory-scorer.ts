/**
 * One object that scores trajectories the way a run config says: resolves the reward config,
 * asks the judge when judge.enabled (for answered, not overlong trajectories only), and falls
 * back to the rule reward whenever the judge fails. This is what the env server's scorer wraps.
 */
import type { Trajectory } from '../episodes/trajectory.js';
import { answerText } from './answer-match.js';
import type { RewardConfig } from './config.js';
import { JudgeClient, type JudgeClientOptions } from './judge.js';
import type { AnswerRule } from './point.js';
import type { JudgeVerdict } from './judge-verdict.js';
import { resolveRewardConfig } from './resolve-config.js';
import { scoreTrajectory, type ScoredTrajectory } from './score.js';

export class TrajectoryScorer {
  readonly config: RewardConfig;
  readonly judge: JudgeClient | null;

  /** `config` is a user's (partial) reward config; it is validated here and throws RewardConfigError when wrong. */
  constructor(config: unknown = {}, judgeOptions: JudgeClientOptions = {}) {
    this.config = resolveRewardConfig(config);
    this.judge = this.config.judge.enabled ? new JudgeClient(this.config.judge, judgeOptions) : null;
  }

  /**
   * The verdict for one trajectory, or undefined when there is no judge or nothing worth judging
   * (a point answer is measured, never judged).
   */
  async verdict(trajectory: Trajectory, gold: string | string[], rule?: AnswerRule): Promise<JudgeVerdict | undefined> {
    if (this.judge === null || trajectory.answer === null || rule !== undefined) return undefined;
    const limit = this.config.answer.max_answer_chars;
    if (limit > 0 && [...answerText(trajectory.answer)].length >= limit) return undefined;
    return this.judge.judge({ question: trajectory.task.question, gold, prediction: trajectory.answer });
  }

  /** `rule`: the task's answer rule (point.ts `answerRuleFor`), when it asks for one. */
  async score(trajectory: Trajectory, gold: string | string[] = trajectory.task.answer, rule?: AnswerRule): Promise<ScoredTrajectory> {
    return scoreTrajectory(trajectory, gold, this.config, await this.verdict(trajectory, gold, rule), rule);
  }

  /** Judge metrics (judge/requests, judge/failures, judge/cache_hits, judge/latency_ms, judge/retries); empty without a judge. */
  metrics(): Record<string, number> {
    return this.judge?.metrics() ?? {};
  }
}
