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
 */
import type { EvalResult } from '../../protocol/panel-protocol.js';

export const EVAL_ACCURACY_METRICS = [
  { metric: 'eval/acc_tools', title: 'with tools' },
  { metric: 'eval/acc_no_tools', title: 'without tools' },
  // A curriculum's perception skill (point localisation within tolerance), measured at every checkpoint.
  { metric: 'perception/acc', title: 'perception' },
] as const;

export interface EvalMark {
  x: number;
  y: number;
  label: string;
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

/** One entry per accuracy metric that has at least one placed evaluation, in EVAL_ACCURACY_METRICS order. */
export function evalLines(evaluations: readonly EvalResult[]): EvalLine[] {
  const lines: EvalLine[] = [];
  for (const { metric } of EVAL_ACCURACY_METRICS) {
    const placed = evaluations.flatMap((e) => {
      const y = e.metrics[metric];
      return e.step !== null && y !== undefined ? [{ x: e.step, y, label: e.label, edge: isPhaseEdge(e.label) }] : [];
    });
    if (placed.length === 0) continue;
    const during = placed.filter((p) => !p.edge).map(({ x, y, label }) => ({ x, y, label }));
    const edges = placed.filter((p) => p.edge).map(({ x, y, label }) => ({ x, y, label }));
    const joined = new Set(during.map((p) => p.x)).size >= 2;
    lines.push({ metric, curve: joined ? during.sort(byStep) : [], marks: (joined ? edges : [...edges, ...during]).sort(byStep) });
  }
  return lines;
}
