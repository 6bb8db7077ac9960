/**
 * Lines up several evals (their results.json, and results.jsonl when `common` asks for it): one
 * row per eval and arm, with accuracy, exact accuracy, tool-call rate, turns and failures, the
 * difference to the first eval, and accuracy per task kind. Warns when the evals did not see the
 * same tasks; `common` then restricts every eval to the tasks each one completed in that arm,
 * so the numbers compare like with like. Read-only.
 */
import { basename, join, resolve } from 'node:path';
import { readJsonl } from './jsonl-log.js';
import { readResultsDocument, type ResultsDocument } from './results-document.js';
import { summarize, type ArmSummary } from './summary.js';
import { ARMS, latestResults, type Arm, type TaskResult } from './task-result.js';

export interface ComparisonRow {
  label: string;
  dir: string;
  arm: Arm;
  n: number | null;
  failed: number | null;
  acc: number | null;
  exact: number | null;
  tool_call_rate: number | null;
  turns: number | null;
  /** Accuracy minus the first eval's in the same arm. */
  delta_acc: number | null;
  by_kind: Record<string, number | null>;
}

export interface Comparison {
  rows: ComparisonRow[];
  /** Accuracy with tools minus without, per eval that has both arms. */
  tool_gain: { label: string; dir: string; gain: number }[];
  warnings: string[];
  common: boolean;
}

interface Loaded {
  dir: string;
  document: ResultsDocument;
  results: TaskResult[] | null;
}

type Headline = Pick<ComparisonRow, 'n' | 'failed' | 'acc' | 'exact' | 'tool_call_rate' | 'turns'>;

function headlineOf(s: ArmSummary): Headline {
  return { n: s.n, failed: s.failed, acc: s.acc_relaxed, exact: s.acc_exact, tool_call_rate: s.tool_call_rate, turns: s.turns_mean };
}

/** A checkpoint eval has only the trainer's flat metrics. */
function headlineFromMetrics(document: ResultsDocument, arm: Arm): Headline | null {
  const metrics = Object.values(document.evaluations)[0]?.metrics ?? {};
  const acc = metrics[`eval/acc_${arm}`];
  if (acc === undefined) return null;
  return {
    n: metrics['eval/n'] ?? null,
    failed: metrics[`eval/failed_${arm}`] ?? null,
    acc,
    exact: metrics[`eval/acc_exact_${arm}`] ?? null,
    tool_call_rate: metrics['eval/tool_call_rate'] ?? null,
    turns: metrics[`eval/turns_${arm}`] ?? null,
  };
}

export async function compareEvals(dirs: string[], options: { common?: boolean } = {}): Promise<Comparison> {
  const loaded: Loaded[] = [];
  for (const dir of dirs) {
    const document = await readResultsDocument(dir);
    const path = join(dir, 'results.jsonl');
    const results = document.per_task ? [...latestResults(await readJsonl(path), path).values()] : null;
    loaded.push({ dir, document, results });
  }
  // Two evals of one model (other tasks, other settings) share a label: tell them apart by folder.
  const labels = loaded.map((l) => l.document.label);
  for (const l of loaded) if (labels.filter((x) => x === l.document.label).length > 1) l.document = { ...l.document, label: `${l.document.label} [${basename(resolve(l.dir))}]` };
  const warnings: string[] = [];
  for (const l of loaded) if (!l.document.complete) warnings.push(`${l.dir} is incomplete: rerun its eval command to finish it`);
  // One tasks file reached by two paths (a link, another working folder) is the same tasks: its bytes decide.
  const files = new Set(loaded.map((l) => l.document.tasks_sha256 ?? l.document.tasks_file));
  const taskSets = loaded.filter((l) => l.results).map((l) => new Set(l.results?.map((r) => r.task_id)));
  const sameTasks = taskSets.every((s) => s.size === taskSets[0]?.size && [...s].every((id) => taskSets[0]?.has(id)));
  if (files.size > 1 || !sameTasks) {
    warnings.push(
      options.common
        ? 'the evals saw different tasks: each arm is restricted to the tasks every eval completed in it (--common)'
        : 'the evals saw different tasks (files or counts differ): numbers are not like for like; --common restricts them to shared tasks',
    );
  }
  const common = options.common === true;
  if (common && loaded.some((l) => l.results === null)) warnings.push('--common cannot restrict checkpoint evals (they have no per-task results); their numbers are over all their tasks');

  const shared = new Map<Arm, Set<string>>();
  if (common) {
    for (const arm of ARMS) {
      const sets = loaded.filter((l) => l.results).map((l) => new Set((l.results ?? []).filter((r) => r.arm === arm && r.status === 'ok').map((r) => r.task_id)));
      const first = sets[0];
      if (first) shared.set(arm, new Set([...first].filter((id) => sets.every((s) => s.has(id)))));
    }
  }

  const rows: ComparisonRow[] = [];
  const firstAcc = new Map<Arm, number | null>();
  const kinds = new Set<string>();
  for (const l of loaded) {
    const arms = l.results && common ? summarize(l.results.filter((r) => shared.get(r.arm)?.has(r.task_id))) : l.document.arms;
    for (const arm of ARMS) {
      const b = arms[arm];
      const s = b ? headlineOf(b.all) : headlineFromMetrics(l.document, arm);
      if (!s) continue;
      const acc = s.acc;
      if (!firstAcc.has(arm)) firstAcc.set(arm, acc);
      const base = firstAcc.get(arm) ?? null;
      const byKind: Record<string, number | null> = {};
      for (const [kind, k] of Object.entries(b?.by_kind ?? {})) {
        kinds.add(kind);
        byKind[kind] = k.acc_relaxed;
      }
      rows.push({
        label: l.document.label,
        dir: l.dir,
        arm,
        ...s,
        tool_call_rate: arm === 'tools' ? s.tool_call_rate : null,
        delta_acc: acc !== null && base !== null ? acc - base : null,
        by_kind: byKind,
      });
    }
  }
  const toolGain: Comparison['tool_gain'] = [];
  for (const l of loaded) {
    const withTools = rows.find((r) => r.dir === l.dir && r.arm === 'tools')?.acc;
    const without = rows.find((r) => r.dir === l.dir && r.arm === 'no_tools')?.acc;
    if (withTools !== undefined && withTools !== null && without !== undefined && without !== null) toolGain.push({ label: l.document.label, dir: l.dir, gain: withTools - without });
  }
  // Every row lists every kind, so the table has one column per kind.
  for (const row of rows) for (const kind of kinds) if (!(kind in row.by_kind)) row.by_kind[kind] = null;
  return { rows, tool_gain: toolGain, warnings, common };
}
