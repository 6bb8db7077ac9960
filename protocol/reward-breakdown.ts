/**
 * How a rollout's reward is read back from its breakdown, so the viewer can show the arithmetic:
 * each additive component times its weight, the modifiers applied in order, the total, and the
 * checks that explain a component without adding to it. It mirrors the formula in
 * env/rewards/score.ts (docs/CONTRACTS.md, "reward_breakdown"):
 *
 *   sum    = Σ_k weight_k · component_k
 *   sum   := sum · no_tool_factor    when sum > 0
 *   reward = min(sum, repetition.penalty)    when repetition = 1
 *
 * A breakdown key is one of three kinds. Additive keys are those the record's `reward_weights`
 * names. MODIFIERS change the sum. Every other key is a check: it explains a value (the rule's own
 * verdict beside a judge's, an overlong answer scored 0) and never adds to the total.
 */

export const REWARD_MODIFIERS = ['no_tool_factor', 'repetition'] as const;

/** What each known check means, for the viewer's tooltips; other keys are shown without one. */
export const REWARD_CHECKS: Readonly<Record<string, string>> = {
  accuracy_rule: 'the rule-based answer check (before any judge or format rule changed accuracy)',
  accuracy_judge: 'the judge model’s verdict, 1 correct, 0 wrong',
  judge_failed: '1 when the judge could not answer and the rule score was used',
  group_rank: 'Chain-of-Focus rank within the group (direct-correct 1 > tool-correct 0.8 > tool-wrong 0.5 > direct-wrong 0); it replaces accuracy',
  overlong: '1 when the answer was too long; accuracy is then 0',
  point_distance_px: 'a point answer’s distance in pixels from the true point; accuracy is 1 within the task’s tolerance, falling to 0 at three tolerances',
};

export interface WeightedTerm {
  name: string;
  value: number;
  weight: number;
  contribution: number;
}

export interface ModifierStep {
  name: (typeof REWARD_MODIFIERS)[number];
  /** What was done, e.g. "× 0.5: no successful tool call". */
  label: string;
  /** The running total after this step; null where the record cannot explain it. */
  after: number | null;
}

export interface RewardCheck {
  name: string;
  value: number;
  meaning: string | null;
  /** For accuracy_rule: whether it agrees with the accuracy that was scored. */
  agreesWithAccuracy?: boolean;
}

export interface RewardExplanation {
  terms: WeightedTerm[];
  weightedSum: number;
  steps: ModifierStep[];
  checks: RewardCheck[];
  /** The recorded reward. */
  reward: number | null;
  /** Whether the arithmetic above reproduces the recorded reward (null when no reward is recorded). */
  reproduces: boolean | null;
}

const EPSILON = 1e-9;

/** null when the record has no weights (older runs, foreign writers): the viewer then lists the values alone. */
export function explainReward(breakdown: Readonly<Record<string, number>>, weights: Readonly<Record<string, number>> | undefined, reward: number | null): RewardExplanation | null {
  if (weights === undefined || Object.keys(weights).length === 0) return null;
  const terms = Object.entries(weights).map(([name, weight]) => {
    const value = breakdown[name] ?? 0;
    return { name, value, weight, contribution: weight * value };
  });
  const weightedSum = terms.reduce((sum, t) => sum + t.contribution, 0);
  let running: number | null = weightedSum;
  const steps: ModifierStep[] = [];
  const factor = breakdown.no_tool_factor;
  if (factor !== undefined && factor !== 1) {
    const applies = weightedSum > 0;
    running = applies ? weightedSum * factor : weightedSum;
    steps.push({ name: 'no_tool_factor', label: applies ? `× ${factor}: no successful tool call` : `× ${factor} not applied: the sum is not positive`, after: running });
  }
  if (breakdown.repetition === 1) {
    // The cap's value is config, not in the record; min(sum, cap) never raises the sum, so a recorded
    // reward at or below it is what the cap left.
    const explained = reward !== null && running !== null && reward <= running + EPSILON;
    running = explained ? reward : null;
    steps.push({ name: 'repetition', label: 'repetition detected: capped at rewards.repetition.penalty', after: running });
  }
  const checks: RewardCheck[] = Object.entries(breakdown)
    .filter(([name]) => !(name in weights) && !(REWARD_MODIFIERS as readonly string[]).includes(name))
    .map(([name, value]) => {
      const check: RewardCheck = { name, value, meaning: REWARD_CHECKS[name] ?? null };
      if (name === 'accuracy_rule' && breakdown.accuracy !== undefined) check.agreesWithAccuracy = Math.abs(value - breakdown.accuracy) < EPSILON;
      return check;
    });
  const reproduces = reward === null ? null : running !== null && Math.abs(running - reward) < 1e-6;
  return { terms, weightedSum, steps, checks, reward, reproduces };
}
