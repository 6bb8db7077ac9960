/**
 * The evaluation summary the dashboard, the static bundle and the demo's report open with
 * (issue 44): per evaluation and arm, the accuracy with its 95 % Wilson interval, the call rate
 * and the gold × answer grid; and the differences that matter with 95 % intervals:
 *
 * - two independent samples (the tools arm's run against the text arm's run): Newcombe's hybrid
 *   score interval (Newcombe 1998, "Interval estimation for the difference between independent
 *   proportions", method 10), built from each side's Wilson interval;
 * - the same tasks evaluated twice (after RL against after SFT): Newcombe's paired score interval
 *   (Newcombe 1998, "Improved confidence intervals for the difference between binomial
 *   proportions based on paired data", method 10), the same construction with the correlation of
 *   the pairs (phi) taken into account.
 *
 * The trainer computes the same for summary.json (trainer/vistool_trainer/algorithms/intervals.py);
 * the tests hold both to independently worked numbers. Pure.
 */
import { normalizeAnswerText } from './answer-text.js';
import { armOf, compareEvaluations } from './eval-compare.js';
import { wilsonInterval, Z_95 } from './intervals.js';
import type { AccuracyDifference, AnswerGrid, ArmEvalSummary, EvalSetSummary, OffTargetCalls, PairedChange, Proportion, RunEvalSummary } from './panel/evaluations.js';
import type { EvalArm, RolloutSummary } from './panel/rollouts.js';

/** The column of episodes that gave no answer. */
export const NO_ANSWER = '(no answer)';
/** More distinct gold answers than this and the grid is left out: free-form answers make no readable grid. */
export const GRID_MAX_GOLD = 12;
/** Columns past the gold answers: the most frequent other answers, the rest counted under OTHER_ANSWERS. */
export const GRID_MAX_EXTRA = 4;
export const OTHER_ANSWERS = '(other)';

export function proportion(correct: number, n: number, z = Z_95): Proportion {
  return { correct, n, acc: n === 0 ? 0 : correct / n, ci95: wilsonInterval(correct, n, z) };
}

/**
 * p1 − p2 for two independent samples, with Newcombe's hybrid score interval: the lower bound
 * moves down by sqrt((p1 − l1)² + (u2 − p2)²), the upper up by sqrt((u1 − p1)² + (p2 − l2)²),
 * where [l, u] are the Wilson intervals.
 */
export function independentDifference(x: { correct: number; n: number }, y: { correct: number; n: number }, z = Z_95): AccuracyDifference {
  const p1 = x.n === 0 ? 0 : x.correct / x.n;
  const p2 = y.n === 0 ? 0 : y.correct / y.n;
  const [l1, u1] = wilsonInterval(x.correct, x.n, z);
  const [l2, u2] = wilsonInterval(y.correct, y.n, z);
  const diff = p1 - p2;
  const down = Math.hypot(p1 - l1, u2 - p2);
  const up = Math.hypot(u1 - p1, p2 - l2);
  return { diff, ci95: [Math.max(-1, diff - down), Math.min(1, diff + up)], method: 'newcombe-hybrid' };
}

/**
 * p1 − p2 on the same n tasks, from the 2×2 table of outcomes: `both` right in both, `onlyFirst`
 * right in the first only, `onlySecond` in the second only, `neither`. Newcombe's paired method 10:
 * the hybrid interval with the cross term −2·phi·(p1 − l1)(u2 − p2) (and its mirror), phi the
 * table's correlation continuity-corrected as method 10 defines it: with A = both·neither −
 * onlyFirst·onlySecond, its numerator is A − n/2 when A > n/2, 0 when 0 ≤ A ≤ n/2, A when A < 0
 * (0 when a margin is empty). Uncorrected, concordant pairs only give a zero-width interval.
 */
export function pairedDifference(table: { both: number; onlyFirst: number; onlySecond: number; neither: number }, z = Z_95): AccuracyDifference {
  const { both: a, onlyFirst: b, onlySecond: c, neither: d } = table;
  const n = a + b + c + d;
  if (n === 0) return { diff: 0, ci95: [-1, 1], method: 'newcombe-paired' };
  const p1 = (a + b) / n;
  const p2 = (a + c) / n;
  const [l1, u1] = wilsonInterval(a + b, n, z);
  const [l2, u2] = wilsonInterval(a + c, n, z);
  const margins = (a + b) * (c + d) * (a + c) * (b + d);
  const cross = a * d - b * c;
  const corrected = cross > n / 2 ? cross - n / 2 : cross >= 0 ? 0 : cross;
  const phi = margins === 0 ? 0 : corrected / Math.sqrt(margins);
  const diff = p1 - p2;
  const down = Math.sqrt(Math.max(0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2));
  const up = Math.sqrt(Math.max(0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2));
  return { diff, ci95: [Math.max(-1, diff - down), Math.min(1, diff + up)], method: 'newcombe-paired' };
}

/** An answer as the grid shows it: normalised as the scorer compares answers; a list answer joined by ", ". */
export function gridAnswer(answer: string | string[] | null): string {
  if (answer === null) return NO_ANSWER;
  const text = Array.isArray(answer) ? answer.map(normalizeAnswerText).join(', ') : normalizeAnswerText(answer);
  return text === '' ? NO_ANSWER : text;
}

const LEVELS = ['low', 'medium', 'high'];

/** Gold answers in a reading order: low, medium, high when they are levels; numbers by value; else by text. */
function ordered(values: Iterable<string>): string[] {
  const list = [...new Set(values)];
  if (list.every((v) => LEVELS.includes(v))) return LEVELS.filter((v) => list.includes(v));
  if (list.every((v) => v !== '' && Number.isFinite(Number(v)))) return list.sort((x, y) => Number(x) - Number(y));
  return list.sort((x, y) => x.localeCompare(y));
}

/** Gold × answer counts of the rollouts given (one per task); null when the gold answers are free-form. */
export function answerGrid(rollouts: readonly Pick<RolloutSummary, 'gold' | 'answer'>[]): AnswerGrid | null {
  const pairs = rollouts.map((r) => ({ gold: gridAnswer(r.gold), answer: gridAnswer(r.answer) }));
  const gold = ordered(pairs.map((p) => p.gold));
  if (gold.length === 0 || gold.length > GRID_MAX_GOLD) return null;
  const extraCounts = new Map<string, number>();
  for (const p of pairs) if (!gold.includes(p.answer) && p.answer !== NO_ANSWER) extraCounts.set(p.answer, (extraCounts.get(p.answer) ?? 0) + 1);
  const extras = [...extraCounts.entries()].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0])).map(([answer]) => answer);
  const shown = extras.slice(0, GRID_MAX_EXTRA);
  const answers = [...gold, ...shown, ...(extras.length > shown.length ? [OTHER_ANSWERS] : []), ...(pairs.some((p) => p.answer === NO_ANSWER) ? [NO_ANSWER] : [])];
  const counts = gold.map(() => answers.map(() => 0));
  for (const p of pairs) {
    const column = answers.includes(p.answer) ? answers.indexOf(p.answer) : answers.indexOf(OTHER_ANSWERS);
    (counts[gold.indexOf(p.gold)] as number[])[column] = ((counts[gold.indexOf(p.gold)] as number[])[column] ?? 0) + 1;
  }
  return { gold, answers, counts };
}

/** Whether a rollout falls in a grid cell (the viewer's filter for a cell: gold row, answer column). */
export function inGridCell(rollout: Pick<RolloutSummary, 'gold' | 'answer'>, gold: string, answer: string, grid?: AnswerGrid | null): boolean {
  if (gridAnswer(rollout.gold) !== gold) return false;
  const given = gridAnswer(rollout.answer);
  if (answer === OTHER_ANSWERS) return !(grid?.answers ?? []).includes(given);
  return given === answer;
}

/** One task per prompt id (its last line in the arm), as compareEvaluations counts them. */
function tasksOf(rollouts: readonly RolloutSummary[], arm: EvalArm): RolloutSummary[] {
  const byPrompt = new Map<string, RolloutSummary>();
  for (const r of rollouts) if (armOf(r) === arm) byPrompt.set(r.promptId, r);
  return [...byPrompt.values()];
}

/** One evaluation in one arm; null when the arm has no record. */
export function summarizeArm(rollouts: readonly RolloutSummary[], arm: EvalArm): ArmEvalSummary | null {
  const tasks = tasksOf(rollouts, arm);
  if (tasks.length === 0) return null;
  const correct = tasks.filter((t) => t.correct === true).length;
  const called = tasks.filter((t) => t.toolCalls + t.toolErrors > 0).length;
  return { ...proportion(correct, tasks.length), called, callRate: called / tasks.length, grid: answerGrid(tasks), offTarget: offTargetCalls(tasks) };
}

/** The label a question asks about: the last quoted one (the demo's questions end `... for "D"?`; the report's rule, run/eval_summary.py). */
export function questionLabel(question: string): string | null {
  const quoted = [...question.matchAll(/"([^"]+)"/g)];
  return quoted.length > 0 ? (quoted[quoted.length - 1]?.[1] ?? null) : null;
}

/** Whether a rollout's first call named exactly the question's label; null when it made no call or the question quotes none. */
export function callOnTarget(rollout: Pick<RolloutSummary, 'question' | 'callTargets'>): boolean | null {
  const label = questionLabel(rollout.question);
  if (label === null || rollout.callTargets === undefined) return null;
  return rollout.callTargets.length === 1 && rollout.callTargets[0] === label;
}

/**
 * Episodes whose call was off target, with the accuracy on them and on the others. When every episode
 * with a call that ran carries the scanners' findings, the env's verdict decides (the viewer's
 * `off_target_call` filter then opens exactly these); otherwise the first call naming another label
 * than the question quotes.
 */
export function offTargetCalls(tasks: readonly RolloutSummary[]): OffTargetCalls | null {
  const right = (list: readonly RolloutSummary[]) => list.filter((t) => t.correct === true).length;
  const called = tasks.filter((t) => t.toolCalls > 0);
  if (called.length > 0 && called.every((t) => t.findings !== undefined)) {
    const off = called.filter((t) => t.findings?.includes('off_target_call') === true);
    const on = called.filter((t) => t.findings?.includes('off_target_call') !== true);
    return { calls: called.length, offTarget: off.length, off: proportion(right(off), off.length), on: proportion(right(on), on.length), rule: 'scanner' };
  }
  const judged = tasks.filter((t) => callOnTarget(t) !== null);
  if (judged.length === 0) return null;
  const off = judged.filter((t) => callOnTarget(t) === false);
  const on = judged.filter((t) => callOnTarget(t) === true);
  return { calls: judged.length, offTarget: off.length, off: proportion(right(off), off.length), on: proportion(right(on), on.length), rule: 'question-label' };
}

export function summarizeSet(set: { key: string; label: string; step: number | null }, rollouts: readonly RolloutSummary[]): EvalSetSummary {
  const arms: EvalSetSummary['arms'] = {};
  for (const arm of ['tools', 'no_tools'] as const) {
    const summary = summarizeArm(rollouts, arm);
    if (summary) arms[arm] = summary;
  }
  return { key: set.key, label: set.label, step: set.step, arms };
}

/** The later evaluation minus the earlier, in one arm, on the tasks both have: a paired difference. */
export function pairedChange(arm: EvalArm, from: { key: string; rollouts: readonly RolloutSummary[] }, to: { key: string; rollouts: readonly RolloutSummary[] }): PairedChange | null {
  const { counts, shared } = compareEvaluations(from.rollouts, arm, to.rollouts, arm);
  if (shared === 0) return null;
  const table = { both: counts.both_right, onlyFirst: counts.fixed, onlySecond: counts.broken, neither: counts.both_wrong };
  return { arm, from: from.key, to: to.key, shared, bothRight: counts.both_right, fixed: counts.fixed, broken: counts.broken, bothWrong: counts.both_wrong, difference: pairedDifference(table) };
}

/**
 * Sets in step order (as evals/list gives them): each earlier set against the last one, per arm
 * both have. The last is the run's final checkpoint (after RL in the demo), so after RL − after
 * SFT is the change from `after_sft`.
 */
export function pairedChanges(sets: readonly { key: string; rollouts: readonly RolloutSummary[] }[]): PairedChange[] {
  const last = sets[sets.length - 1];
  if (!last) return [];
  const changes: PairedChange[] = [];
  for (const earlier of sets.slice(0, -1)) {
    for (const arm of ['tools', 'no_tools'] as const) {
      const change = pairedChange(arm, earlier, last);
      if (change) changes.push(change);
    }
  }
  return changes;
}

/** Student's t 97.5th percentiles for 1..30 degrees of freedom (beyond, the normal's). */
const T_975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

/**
 * Runs of several seeds as one band (W&B's grouping): the mean of their values and a 95 %
 * t interval of the mean (mean ± t·s/√k over the k seeds); a single run has no spread (null).
 */
export function seedBand(values: readonly number[]): { mean: number; ci95: [number, number] | null; k: number } {
  const k = values.length;
  const mean = k === 0 ? 0 : values.reduce((s, v) => s + v, 0) / k;
  if (k < 2) return { mean, ci95: null, k };
  const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (k - 1));
  const t = T_975[k - 2] ?? Z_95;
  const half = (t * sd) / Math.sqrt(k);
  return { mean, ci95: [mean - half, mean + half], k };
}

/** A run's kept evaluations (in evals/list's order, each with its index's rollouts), summarised: what evals/summary answers on every host. */
export function runEvalSummary(runId: string, sets: readonly { key: string; label: string; step: number | null; rollouts: readonly RolloutSummary[] }[]): RunEvalSummary {
  return { runId, sets: sets.map((set) => summarizeSet(set, set.rollouts)), changes: pairedChanges(sets) };
}

/**
 * The arm a run's own policy is judged in: the one its last evaluation has records of, and when
 * it has both (the tools arm's run also answers with the tools off), the tools arm if it called.
 */
export function ownArm(summary: RunEvalSummary): EvalArm | null {
  const last = summary.sets[summary.sets.length - 1];
  if (!last) return null;
  const { tools, no_tools: noTools } = last.arms;
  if (tools && noTools) return tools.called > 0 ? 'tools' : 'no_tools';
  return tools ? 'tools' : noTools ? 'no_tools' : null;
}

/** A run's headline: its own arm's last evaluation, and that arm's change from each earlier evaluation (paired). */
export interface RunHeadline {
  runId: string;
  arm: EvalArm;
  set: EvalSetSummary;
  result: ArmEvalSummary;
  changes: PairedChange[];
}

export function runHeadline(summary: RunEvalSummary): RunHeadline | null {
  const arm = ownArm(summary);
  const set = summary.sets[summary.sets.length - 1];
  const result = arm && set ? set.arms[arm] : undefined;
  if (!arm || !set || !result) return null;
  return { runId: summary.runId, arm, set, result, changes: summary.changes.filter((c) => c.arm === arm && c.to === set.key) };
}

/** Tools − text between runs judged in different arms (independent samples: Newcombe's hybrid interval), one per pair of a tools run and a text run. */
export function armDifferences(headlines: readonly RunHeadline[]): { tools: RunHeadline; text: RunHeadline; difference: AccuracyDifference }[] {
  const tools = headlines.filter((x) => x.arm === 'tools');
  const text = headlines.filter((x) => x.arm === 'no_tools');
  return tools.flatMap((t) => text.map((x) => ({ tools: t, text: x, difference: independentDifference(t.result, x.result) })));
}
