/**
 * What the dashboard's tool-effect chart draws for one run (issue 43): at each held-out evaluation
 * with a counterfactual replay, the tool effect (accuracy as run − accuracy with the tools' results
 * withheld, on the same tasks) with the 95 % interval the evaluation reports for it
 * (`eval/tool_effect_lo`, `eval/tool_effect_hi`: a paired interval, computed where the replay ran),
 * beside the call rate and the share of calls on target. Lines and marks follow the evaluation
 * chart's honesty rule (eval-series.ts): only evaluations made during a phase are joined.
 *
 * Pure and DOM-free (tested without a browser).
 */
import type { EvalResult } from '../../protocol/panel-protocol.js';
import { type EvalLine, evalLine } from './eval-series.js';

export const TOOL_EFFECT = 'eval/tool_effect';
export const TOOL_EFFECT_LOW = 'eval/tool_effect_lo';
export const TOOL_EFFECT_HIGH = 'eval/tool_effect_hi';
/** The share of replayed episodes whose answer changed when the results were withheld. */
export const ANSWER_CHANGED_RATE = 'eval/answer_changed_rate';
export const EVAL_CALL_RATE = 'eval/tool_call_rate';
export const EVAL_CALL_ON_TARGET_RATE = 'eval/call_on_target_rate';

/** The lines in drawing order, with the words the chart's title and legend use for each. */
export const TOOL_EFFECT_LINES = [
  { metric: TOOL_EFFECT, title: 'tool effect', key: 'tool effect: solid ●' },
  { metric: EVAL_CALL_RATE, title: 'call rate', key: 'call rate: dashed ▲' },
  { metric: EVAL_CALL_ON_TARGET_RATE, title: 'calls on target', key: 'calls on target: dotted ◆' },
] as const;

const NO_INTERVAL = { n: null, low: null, high: null };

/** The reported interval of an effect; none when either end is missing or the ends do not hold the effect (a writer's mistake is not drawn as a claim). */
export function effectInterval(metrics: Readonly<Record<string, number>>, effect: number): { n: number | null; low: number | null; high: number | null } {
  const low = metrics[TOOL_EFFECT_LOW];
  const high = metrics[TOOL_EFFECT_HIGH];
  const n = metrics['eval/n'];
  const tasks = n !== undefined && Number.isInteger(n) && n > 0 ? n : null;
  if (low === undefined || high === undefined || !(low <= effect && effect <= high)) return { ...NO_INTERVAL, n: tasks };
  return { n: tasks, low, high };
}

/**
 * The tool-effect chart's lines for one run; empty when no evaluation of it has a tool effect (a
 * run evaluated without --counterfactual, or before the replay existed): then the call rate alone
 * is not drawn here either (the evaluations table has it).
 */
export function toolEffectLines(evaluations: readonly EvalResult[]): EvalLine[] {
  const effect = evalLine(evaluations, TOOL_EFFECT, effectInterval);
  if (effect === null) return [];
  const rates = [EVAL_CALL_RATE, EVAL_CALL_ON_TARGET_RATE].flatMap((metric) => evalLine(evaluations, metric, () => NO_INTERVAL) ?? []);
  return [effect, ...rates];
}
