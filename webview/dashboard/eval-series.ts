/**
 * What the dashboard's evaluation chart draws for one run: accuracy with and without tools (and a
 * curriculum's perception accuracy) against the step. Pure and DOM-free (tested without a browser).
 *
 * Honesty rule: a line joins only evaluations made during a phase (the trainer's periodic
 * `rl_step_N`, or any other labelled evaluation with a step), and only when there are two or more
 * of them. The evaluations at a phase's edge (`before`, `after_sft`, `after_rl`: one per phase)
 * are marks, never joined: a line from `before` to `after_sft` would draw a curve through the
 * whole of SFT that nobody measured. Evaluations without a step cannot be placed; they stay in
 * the table beside the charts.
 *
 * Each point carries its 95 % Wilson interval when the evaluation says how many tasks it scored
 * (`eval/n`; a curriculum's perception evaluation: `perception/n`): the correct count is the
 * trainer's `eval/correct_<arm>`, else the accuracy × n
 * rounded. An accuracy of 0.8 on 10 tasks and on 300 are different claims; the bars say which.
 */
import type { EvalResult } from '../../protocol/panel-protocol.js';
import { wilsonInterval } from '../../protocol/intervals.js';

export const EVAL_ACCURACY_METRICS = [
  { metric: 'eval/acc_tools', title: 'with tools', correct: 'eval/correct_tools', count: 'eval/n' },
  { metric: 'eval/acc_no_tools', title: 'without tools', correct: 'eval/correct_no_tools', count: 'eval/n' },
  // A curriculum's perception skill (point localisation within tolerance), measured at every checkpoint on its own tasks.
  { metric: 'perception/acc', title: 'perception', correct: 'perception/correct', count: 'perception/n' },
] as const;

export interface EvalMark {
  x: number;
  y: number;
  label: string;
  /** Tasks scored, and the 95 % Wilson interval of the accuracy; null when the evaluation does not say how many. */
  n: number | null;
  low: number | null;
  high: number | null;
}

/** The interval of one accuracy: [n, low, high], or nulls without a usable task count. */
export function accuracyInterval(metrics: Readonly<Record<string, number>>, accuracy: number, correctKey: string, countKey = 'eval/n'): { n: number | null; low: number | null; high: number | null } {
  const n = metrics[countKey];
  if (n === undefined || !Number.isInteger(n) || n <= 0) return { n: null, low: null, high: null };
  const counted = metrics[correctKey];
  const successes = counted !== undefined && Number.isInteger(counted) && counted >= 0 && counted <= n ? counted : Math.round(accuracy * n);
  if (successes < 0 || successes > n) return { n, low: null, high: null };
  const [low, high] = wilsonInterval(successes, n);
  return { n, low, high };
}

export interface EvalLine {
  metric: string;
  /** Periodic evaluations by step, when there are two or more; else empty (they are in `marks`). */
  curve: EvalMark[];
  /** Phase-edge evaluations, and a lone periodic one, by step. */
  marks: EvalMark[];
}

/** The trainer's labels for the evaluation at the start and at the end of a phase. */
export function isPhaseEdge(label: string): boolean {
  return label === 'before' || label.startsWith('after_');
}

const byStep = (a: EvalMark, b: EvalMark) => a.x - b.x;

/**
 * One metric's line over a run's evaluations, by the honesty rule above, each point with the
 * interval `intervalOf` gives it; null when no evaluation with a step has the metric.
 */
export function evalLine(evaluations: readonly EvalResult[], metric: string, intervalOf: (metrics: Readonly<Record<string, number>>, y: number) => { n: number | null; low: number | null; high: number | null }): EvalLine | null {
  const placed = evaluations.flatMap((e) => {
    const y = e.metrics[metric];
    return e.step !== null && y !== undefined ? [{ x: e.step, y, label: e.label, edge: isPhaseEdge(e.label), ...intervalOf(e.metrics, y) }] : [];
  });
  if (placed.length === 0) return null;
  const during = placed.filter((p) => !p.edge).map(({ edge: _edge, ...mark }) => mark);
  const edges = placed.filter((p) => p.edge).map(({ edge: _edge, ...mark }) => mark);
  const joined = new Set(during.map((p) => p.x)).size >= 2;
  return { metric, curve: joined ? during.sort(byStep) : [], marks: (joined ? edges : [...edges, ...during]).sort(byStep) };
}

/** One entry per accuracy metric that has at least one placed evaluation, in EVAL_ACCURACY_METRICS order. */
export function evalLines(evaluations: readonly EvalResult[]): EvalLine[] {
  return EVAL_ACCURACY_METRICS.flatMap(({ metric, correct, count }) => evalLine(evaluations, metric, (metrics, y) => accuracyInterval(metrics, y, correct, count)) ?? []);
}
