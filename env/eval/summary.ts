/**
 * Aggregates result lines into the numbers an eval reports, per arm, overall and per task kind
 * and difficulty; and the flat `eval/...` metrics the dashboard reads (the trainer's names).
 *
 * Definitions (README.md in this folder):
 * - accuracies, rates and means are over *completed* tasks; failed tasks are counted apart
 *   (`failed`), never folded in as wrong answers and never dropped;
 * - tool-call rate: share of completed tasks with at least one successful tool call;
 * - error classes: `count` of errors of the class, `share` of all errors, `rate` = share of
 *   completed tasks with at least one error of the class;
 * - judge agreement: share of judged tasks where the judge and the relaxed rule agree;
 * - calls on target: counts of the calls that ran by target, and call_on_target_rate =
 *   on / (on + partly + off), null when no call had a known target;
 * - findings: per scanner, the completed tasks it fired on (every scanner listed, 0 included);
 * - tool effect (--counterfactual, tools arm): relaxed accuracy as run − with the tool results
 *   withheld over the completed tasks, an episode not replayed counting as unchanged
 *   (tool-effect.ts: Newcombe's paired interval).
 * Pure.
 */
import type { ErrorClass } from '../core/errors.js';
import { FINDING_NAMES, type Finding } from '../episodes/scanners/index.js';
import { toolEffect, type ToolEffect } from './tool-effect.js';
import { ARMS, ERROR_CLASSES, type Arm, type CompletedResult, type TaskResult } from './task-result.js';

export interface ErrorClassSummary {
  count: number;
  share: number | null;
  rate: number | null;
}

export interface ArmSummary {
  /** Tasks with a result in this arm: completed + failed. */
  n: number;
  completed: number;
  failed: number;
  acc_relaxed: number | null;
  acc_exact: number | null;
  /** Judge accuracy and agreement over the tasks the judge answered; null without a judge. */
  acc_judge: number | null;
  judge_agreement: number | null;
  judged: number;
  judge_failures: number;
  reward_mean: number | null;
  format_valid: number | null;
  answer_rate: number | null;
  tool_call_rate: number | null;
  tool_calls_mean: number | null;
  /** Failed tool calls / all tool calls (the trainer's tool/error_rate). */
  tool_error_rate: number | null;
  turns_mean: number | null;
  errors: Record<ErrorClass, ErrorClassSummary>;
  /** Calls that ran, by target (env/episodes/call-target.ts); results written before issue 43 add nothing. */
  calls_on_target: number;
  calls_partly_on_target: number;
  calls_off_target: number;
  calls_target_unknown: number;
  /** on / (on + partly + off); null when no call had a known target. */
  call_on_target_rate: number | null;
  /** Per scanner, the completed tasks it fired on. */
  findings: Record<Finding, number>;
  prompt_tokens: number;
  completion_tokens: number;
  retries: number;
  /** The counterfactual replay's tool effect; null where no result carries one (no --counterfactual, the no-tools arm). */
  tool_effect: ToolEffect | null;
}

export interface ArmBreakdown {
  all: ArmSummary;
  by_kind: Record<string, ArmSummary>;
  by_difficulty: Record<string, ArmSummary>;
}

const mean = (values: number[]): number | null => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
const share = (flags: boolean[]): number | null => mean(flags.map((f) => (f ? 1 : 0)));

export function summarizeArm(results: readonly TaskResult[]): ArmSummary {
  const done = results.filter((r): r is CompletedResult => r.status === 'ok');
  const judged = done.filter((r) => r.judge !== null);
  const totalErrors = done.reduce((sum, r) => sum + Object.values(r.errors).reduce((a, b) => a + (b ?? 0), 0), 0);
  const errors = Object.fromEntries(
    ERROR_CLASSES.map((c) => {
      const count = done.reduce((sum, r) => sum + (r.errors[c] ?? 0), 0);
      return [c, { count, share: totalErrors === 0 ? null : count / totalErrors, rate: share(done.map((r) => (r.errors[c] ?? 0) > 0)) }];
    }),
  ) as Record<ErrorClass, ErrorClassSummary>;
  const targets = (key: 'on' | 'partly' | 'off' | 'unknown'): number => done.reduce((sum, r) => sum + (r.targets?.[key] ?? 0), 0);
  const [on, partly, off] = [targets('on'), targets('partly'), targets('off')];
  const calls = done.reduce((sum, r) => sum + r.tool_calls, 0);
  const callErrors = done.reduce((sum, r) => sum + r.tool_errors, 0);
  return {
    n: results.length,
    completed: done.length,
    failed: results.length - done.length,
    acc_relaxed: share(done.map((r) => r.correct_relaxed)),
    acc_exact: share(done.map((r) => r.correct_exact)),
    acc_judge: share(judged.map((r) => r.judge === true)),
    judge_agreement: share(judged.map((r) => r.judge === r.correct_relaxed)),
    judged: judged.length,
    judge_failures: done.filter((r) => r.judge_error !== undefined).length,
    reward_mean: mean(done.map((r) => r.reward)),
    format_valid: share(done.map((r) => r.format_valid)),
    answer_rate: share(done.map((r) => r.answer !== null)),
    tool_call_rate: share(done.map((r) => r.tool_calls > 0)),
    tool_calls_mean: mean(done.map((r) => r.tool_calls)),
    tool_error_rate: calls + callErrors === 0 ? null : callErrors / (calls + callErrors),
    turns_mean: mean(done.map((r) => r.turns)),
    errors,
    calls_on_target: on,
    calls_partly_on_target: partly,
    calls_off_target: off,
    calls_target_unknown: targets('unknown'),
    call_on_target_rate: on + partly + off === 0 ? null : on / (on + partly + off),
    findings: Object.fromEntries(FINDING_NAMES.map((name) => [name, done.filter((r) => r.findings?.includes(name) === true).length])) as Record<Finding, number>,
    prompt_tokens: done.reduce((sum, r) => sum + r.prompt_tokens, 0),
    completion_tokens: done.reduce((sum, r) => sum + r.completion_tokens, 0),
    retries: results.reduce((sum, r) => sum + r.retries, 0),
    tool_effect: armToolEffect(done),
  };
}

/** The tool effect over the completed results written with --counterfactual (they carry `counterfactual`, null when not replayed). */
function armToolEffect(done: readonly CompletedResult[]): ToolEffect | null {
  const paired = done.filter((r) => r.counterfactual !== undefined);
  if (paired.length === 0) return null;
  return toolEffect(
    paired.map((r) => {
      const replay = r.counterfactual ?? null;
      return replay === null
        ? { real: r.correct_relaxed, withheld: r.correct_relaxed, replayed: false, changed: false }
        : { real: r.correct_relaxed, withheld: replay.correct, replayed: true, changed: replay.changed };
    }),
  );
}

function groupBy(results: readonly TaskResult[], key: (r: TaskResult) => string): Record<string, ArmSummary> {
  const groups = new Map<string, TaskResult[]>();
  for (const r of results) {
    const k = key(r);
    const list = groups.get(k);
    if (list) list.push(r);
    else groups.set(k, [r]);
  }
  const keys = [...groups.keys()].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return Object.fromEntries(keys.map((k) => [k, summarizeArm(groups.get(k) ?? [])]));
}

/** Per arm that has results: overall, per kind, per difficulty. */
export function summarize(results: readonly TaskResult[]): Partial<Record<Arm, ArmBreakdown>> {
  const out: Partial<Record<Arm, ArmBreakdown>> = {};
  for (const arm of ARMS) {
    const mine = results.filter((r) => r.arm === arm);
    if (mine.length === 0) continue;
    out[arm] = { all: summarizeArm(mine), by_kind: groupBy(mine, (r) => r.kind), by_difficulty: groupBy(mine, (r) => String(r.difficulty)) };
  }
  return out;
}

/**
 * The flat metrics the dashboard's evaluation table reads (env/runs/evaluations.ts), named as
 * the trainer names them: eval/acc_tools, eval/acc_no_tools, eval/tool_call_rate, eval/n, ...;
 * for the tools arm also eval/call_on_target_rate and eval/scan/<name> (tasks each scanner fired on).
 * Only finite numbers: a metric with no data is left out rather than written as null.
 */
export function dashboardMetrics(arms: Partial<Record<Arm, ArmBreakdown>>, tasks: number): Record<string, number> {
  const metrics: Record<string, number> = { 'eval/n': tasks };
  const put = (key: string, value: number | null) => {
    if (value !== null && Number.isFinite(value)) metrics[key] = value;
  };
  for (const arm of ARMS) {
    const s = arms[arm]?.all;
    if (!s) continue;
    put(`eval/acc_${arm}`, s.acc_relaxed);
    put(`eval/acc_exact_${arm}`, s.acc_exact);
    put(`eval/reward_${arm}`, s.reward_mean);
    put(`eval/format_valid_${arm}`, s.format_valid);
    put(`eval/turns_${arm}`, s.turns_mean);
    put(`eval/failed_${arm}`, s.failed);
    put(`eval/judge_agreement_${arm}`, s.judge_agreement);
    if (arm === 'tools') {
      put('eval/tool_call_rate', s.tool_call_rate);
      put('eval/tool_error_rate', s.tool_error_rate);
      put('eval/call_on_target_rate', s.call_on_target_rate);
      for (const name of FINDING_NAMES) put(`eval/scan/${name}`, s.findings[name]);
      if (s.tool_effect) {
        put('eval/tool_effect', s.tool_effect.effect);
        put('eval/tool_effect_lo', s.tool_effect.ci95[0]);
        put('eval/tool_effect_hi', s.tool_effect.ci95[1]);
        put('eval/answer_changed_rate', s.tool_effect.answer_changed_rate);
        put('eval/counterfactual_n', s.tool_effect.replayed);
      }
    }
  }
  return metrics;
}
