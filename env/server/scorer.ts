/**
 * The env server's scorer: the reward module's TrajectoryScorer behind the server's `Scorer`
 * signature, with the judge's counters attached to each score so a trainer can log them.
 */
import { answerRuleFor } from '../rewards/point.js';
import { TrajectoryScorer } from '../rewards/trajectory-scorer.js';
import type { Scorer } from './server.js';

/**
 * `rewardConfig` is a user's (partial) reward config; invalid config throws before the server
 * starts. `log` gets one warning per failed judgement, with its reason (the server's log).
 */
export function createScorer(rewardConfig: unknown, log?: (entry: Record<string, unknown>) => void): Scorer {
  const scorer = new TrajectoryScorer(rewardConfig ?? {});
  return async (trajectory, task) => {
    const scored = await scorer.score(trajectory, task.answer, answerRuleFor(task));
    if (log && scored.components.judge_failed === 1) {
      log({ level: 'warn', msg: 'judge failed; rule reward used', task: task.id, reason: scored.notes.find((n) => n.startsWith('judge unavailable')) ?? null });
    }
    const metrics = scorer.metrics();
    return Object.keys(metrics).length > 0 ? { ...scored, metrics } : { ...scored };
  };
}
