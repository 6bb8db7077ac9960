/**
 * Did the tool matter? The tool effect of an evaluation: accuracy as run − accuracy with the tool
 * results withheld (the counterfactual replay, counterfactual.ts), over the same tasks, with
 * Newcombe's paired score interval (Newcombe 1998, "Improved confidence intervals for the
 * difference between binomial proportions based on paired data", method 10, built on Wilson
 * intervals: `pairedDifference` in protocol/eval-summary.ts, the trainer's `newcombe_paired`).
 *
 * An episode that was not replayed (no successful call) is its own counterfactual: the same answer,
 * the same verdict, unchanged. So the effect is over every completed task, and only replayed
 * episodes can move it. Pure.
 */
import { pairedDifference } from '../../protocol/eval-summary.js';

/** One task's pair: right as run, right with results withheld, whether it was replayed and its answer changed. */
export interface ToolEffectPair {
  real: boolean;
  withheld: boolean;
  replayed: boolean;
  changed: boolean;
}

export interface ToolEffect {
  /** Accuracy as run − accuracy with results withheld. */
  effect: number;
  ci95: [number, number];
  /** Tasks paired (every completed one). */
  n: number;
  /** Tasks replayed (a successful call), the denominator of answer_changed_rate. */
  replayed: number;
  /** Share of replayed tasks whose normalised answer changed; null when none was replayed. */
  answer_changed_rate: number | null;
  method: 'newcombe-paired';
}

export function toolEffect(pairs: readonly ToolEffectPair[]): ToolEffect {
  const table = { both: 0, onlyFirst: 0, onlySecond: 0, neither: 0 };
  for (const { real, withheld } of pairs) {
    if (real && withheld) table.both++;
    else if (real) table.onlyFirst++;
    else if (withheld) table.onlySecond++;
    else table.neither++;
  }
  const replayed = pairs.filter((p) => p.replayed);
  const difference = pairedDifference(table);
  return {
    effect: difference.diff,
    ci95: difference.ci95,
    n: pairs.length,
    replayed: replayed.length,
    answer_changed_rate: replayed.length === 0 ? null : replayed.filter((p) => p.changed).length / replayed.length,
    method: 'newcombe-paired',
  };
}
