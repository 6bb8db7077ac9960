/**
 * The scanners' counts the dashboard's findings table shows (issue 43), read from what a run logs:
 * `scan/<name>` on every RL step's metrics row (0 when none fired) and in an evaluation's metrics
 * when the evaluation ran the scanners. The table shows the run's latest such step and evaluation.
 * Pure and DOM-free.
 */
import { FINDING_NAMES, type FindingName, scanMetric } from '../../protocol/findings.js';
import type { EvalResult, MetricTable } from '../../protocol/panel-protocol.js';

export type ScanCounts = Partial<Record<FindingName, number>>;

/** Every scanner's metric name, in FINDING_NAMES order. */
export const SCAN_METRICS: readonly string[] = FINDING_NAMES.map(scanMetric);

/** Whether a run logs any scanner count (its metric names, training or evaluation). */
export function logsScans(metricNames: readonly string[], evaluations: readonly EvalResult[]): boolean {
  return metricNames.some((n) => SCAN_METRICS.includes(n)) || evaluations.some((e) => SCAN_METRICS.some((m) => e.metrics[m] !== undefined));
}

/** The counts of one row or one evaluation's metrics: the scanners it has a number for. */
function countsOf(value: (metric: string) => number | null | undefined): ScanCounts | null {
  const counts: ScanCounts = {};
  for (const name of FINDING_NAMES) {
    const v = value(scanMetric(name));
    if (typeof v === 'number' && Number.isFinite(v)) counts[name] = v;
  }
  return Object.keys(counts).length > 0 ? counts : null;
}

/** The last row of the table with a scanner count, and its step; null when no row has one. */
export function latestStepCounts(table: MetricTable): { step: number; counts: ScanCounts } | null {
  for (let i = table.steps.length - 1; i >= 0; i--) {
    const counts = countsOf((metric) => table.columns[metric]?.[i]);
    if (counts) return { step: table.steps[i] as number, counts };
  }
  return null;
}

/** The last evaluation (in the run's order, the latest by step when they have steps) with a scanner count. */
export function latestEvalCounts(evaluations: readonly EvalResult[]): { label: string; step: number | null; counts: ScanCounts } | null {
  const ordered = evaluations.map((e, i) => ({ e, i })).sort((a, b) => (a.e.step ?? -1) - (b.e.step ?? -1) || a.i - b.i);
  for (let k = ordered.length - 1; k >= 0; k--) {
    const { e } = ordered[k] as { e: EvalResult };
    const counts = countsOf((metric) => e.metrics[metric]);
    if (counts) return { label: e.label, step: e.step, counts };
  }
  return null;
}
