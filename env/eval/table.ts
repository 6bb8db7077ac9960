/**
 * Plain-text tables for the terminal: an eval's summary (per arm, overall, per kind and per
 * difficulty) and the comparison of several evals. Formatting only; never reads files.
 */
import type { ErrorClass } from '../core/errors.js';
import type { Comparison } from './compare.js';
import type { ResultsDocument } from './results-document.js';
import type { ArmSummary } from './summary.js';
import type { ToolEffect } from './tool-effect.js';
import { ARMS } from './task-result.js';

export const TABLE_ERROR_CLASSES: readonly ErrorClass[] = ['E1', 'E2', 'E3', 'E4', 'E5'];

export function renderTable(headers: string[], rows: string[][], leftColumns = 1): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : `${(100 * value).toFixed(1)}`;
}

export function decimal(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined ? '–' : value.toFixed(digits);
}

const SUMMARY_HEADERS = ['arm', 'slice', 'n', 'failed', 'acc%', 'exact%', 'judge≈%', 'calls%', 'turns', 'err/task', ...TABLE_ERROR_CLASSES.map((c) => `${c}%`)];

function summaryRow(arm: string, slice: string, s: ArmSummary): string[] {
  const errors = Object.values(s.errors).reduce((sum, e) => sum + e.count, 0);
  return [
    arm,
    slice,
    String(s.n),
    String(s.failed),
    percent(s.acc_relaxed),
    percent(s.acc_exact),
    percent(s.judge_agreement),
    percent(s.tool_call_rate),
    decimal(s.turns_mean),
    s.completed === 0 ? '–' : decimal(errors / s.completed),
    ...TABLE_ERROR_CLASSES.map((c) => percent(s.errors[c].share)),
  ];
}

/** The summary table of one eval: one block per arm (all, then each kind, then each difficulty). */
export function formatSummaryTable(document: ResultsDocument): string {
  const rows: string[][] = [];
  for (const arm of ARMS) {
    const b = document.arms[arm];
    if (!b) continue;
    rows.push(summaryRow(arm, 'all', b.all));
    for (const [kind, s] of Object.entries(b.by_kind)) rows.push(summaryRow(arm, `kind=${kind}`, s));
    for (const [d, s] of Object.entries(b.by_difficulty)) rows.push(summaryRow(arm, `difficulty=${d}`, s));
  }
  if (rows.length === 0) {
    const metrics = Object.values(document.evaluations)[0]?.metrics ?? {};
    return renderTable(['metric', 'value'], Object.entries(metrics).map(([k, v]) => [k, Number.isInteger(v) ? String(v) : v.toFixed(4)]));
  }
  const legend =
    'acc: relaxed accuracy (numbers within the tolerance); exact: no tolerance; judge≈: judge agrees with the rule; ' +
    'calls: tasks with a successful tool call; E1–E5: share of all errors; rates over completed tasks.';
  const effect = document.arms.tools?.all.tool_effect;
  const effectLine = effect ? `\n${toolEffectLine(effect)}` : '';
  return `${document.label} — ${document.tasks} task(s)${document.complete ? '' : ' (INCOMPLETE: rerun the same command to finish)'}\n${renderTable(SUMMARY_HEADERS, rows, 2)}\n${legend}${effectLine}`;
}

const points = (value: number) => `${value >= 0 ? '+' : ''}${(100 * value).toFixed(1)}`;

/** The counterfactual replay's headline: the tool effect with its interval and what it rests on. */
export function toolEffectLine(effect: ToolEffect): string {
  return (
    `tool effect (acc as run − acc with tool results withheld, same ${effect.n} task(s)): ${points(effect.effect)} points, ` +
    `95 % CI [${points(effect.ci95[0])}, ${points(effect.ci95[1])}] (Newcombe paired); ` +
    `${effect.replayed} replayed, answer changed in ${percent(effect.answer_changed_rate)} %`
  );
}

/** The comparison of several evals: one row per eval and arm, then the tool gain per eval. */
export function formatComparison(comparison: Comparison): string {
  const kinds = Object.keys(comparison.rows[0]?.by_kind ?? {}).sort();
  const headers = ['eval', 'arm', 'n', 'failed', 'acc%', 'Δacc', 'exact%', 'calls%', 'turns', ...kinds.map((k) => `${k}%`)];
  const rows = comparison.rows.map((r) => [
    r.label,
    r.arm,
    r.n === null ? '–' : String(r.n),
    r.failed === null ? '–' : String(r.failed),
    percent(r.acc),
    r.delta_acc === null ? '–' : `${r.delta_acc >= 0 ? '+' : ''}${(100 * r.delta_acc).toFixed(1)}`,
    percent(r.exact),
    percent(r.tool_call_rate),
    decimal(r.turns),
    ...kinds.map((k) => percent(r.by_kind[k])),
  ]);
  const lines = [renderTable(headers, rows, 2)];
  if (comparison.tool_gain.length > 0) {
    lines.push('', renderTable(['eval', 'acc with tools − without'], comparison.tool_gain.map((g) => [g.label, `${g.gain >= 0 ? '+' : ''}${(100 * g.gain).toFixed(1)} points`])));
  }
  for (const warning of comparison.warnings) lines.push(`warning: ${warning}`);
  return lines.join('\n');
}
