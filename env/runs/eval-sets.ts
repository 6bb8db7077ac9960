/**
 * Evaluations kept task by task, and one task followed through a run. Two writers keep every
 * held-out task's rollout of an evaluation, in the rollout-record schema with `arm` and `label`:
 *
 *   the trainer        rollouts/eval-<label>.jsonl, one file per evaluation (before, after_sft,
 *                      rl_step_N, after_rl: trainer/vistool_trainer/run/eval_records.py)
 *   `vistool eval`     rollouts/step-000000.jsonl of its folder (run.json `"kind": "eval"`)
 *
 * `listEvalSets` finds them (protocol/eval-compare.ts lines two of them up task by task);
 * `taskTimeline` reads every step file and evaluation of a run for one prompt id, a slice at a
 * time, parsing only the lines that name it.
 *
 * Read-only: never writes to a run directory.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { EvalArm, EvalResult, EvalSetInfo, StepFileInfo, TimelineEntry } from '../../protocol/panel-protocol.js';
import { armOf } from '../../protocol/eval-compare.js';

// How two evaluations line up is protocol/eval-compare.ts's rule (a static bundle's page applies it too).
export { armOf, compareEvaluations, outcomeOf } from '../../protocol/eval-compare.js';
import { JsonlTail } from './jsonl-tail.js';
import { scanRollouts } from './rollout-scan.js';

const EVAL_FILE = /^eval-(.+)\.jsonl$/;
/** The key of a `vistool eval` folder's one evaluation. */
export const EVAL_FOLDER_KEY = 'eval';

/**
 * The evaluations of a run whose tasks were kept, by step then label. `run` is its parsed run.json
 * (a `vistool eval` folder says `"kind": "eval"` and its label there); `evaluations` are the run's
 * evaluation results, whose steps place the trainer's files.
 */
export async function listEvalSets(runDir: string, run: Record<string, unknown> | null, evaluations: readonly EvalResult[]): Promise<EvalSetInfo[]> {
  const names = await readdir(join(runDir, 'rollouts')).catch(() => [] as string[]);
  const stepOf = (label: string) => evaluations.find((e) => e.label === label)?.step ?? null;
  const sets: EvalSetInfo[] = [];
  for (const name of names) {
    const match = EVAL_FILE.exec(name);
    if (!match) continue;
    const info = await stat(join(runDir, 'rollouts', name)).catch(() => null);
    if (!info?.isFile()) continue;
    const label = match[1] as string;
    // An evaluation the run's metrics do not list (a checkpoint evaluated afterwards, `python -m vistool_trainer eval`): its records say the step.
    const step = stepOf(label) ?? (await firstStep(join(runDir, 'rollouts', name)));
    sets.push({ key: `eval-${label}`, label, step, file: `rollouts/${name}`, bytes: info.size });
  }
  if (run?.kind === 'eval') {
    const file = 'rollouts/step-000000.jsonl';
    const info = await stat(join(runDir, file)).catch(() => null);
    const label = typeof run.label === 'string' && run.label !== '' ? run.label : 'eval';
    if (info?.isFile()) sets.push({ key: EVAL_FOLDER_KEY, label, step: stepOf(label), file, bytes: info.size });
  }
  return sets.sort((a, b) => (a.step ?? Infinity) - (b.step ?? Infinity) || a.label.localeCompare(b.label));
}

/** The `step` of a records file's first line (read from its first 64 kB), null when it has none. */
async function firstStep(path: string): Promise<number | null> {
  const read = await new JsonlTail(path).read(64 << 10).catch(() => null);
  const text = read?.lines[0]?.text;
  if (!text) return null;
  try {
    const step = (JSON.parse(text) as { step?: unknown }).step;
    return typeof step === 'number' && Number.isInteger(step) && step >= 0 ? step : null;
  } catch {
    return null;
  }
}

/** A file the timeline reads: a training step's or an evaluation's. */
export type TimelineSource = { kind: 'step'; step: number; file: string } | { kind: 'eval'; set: EvalSetInfo };

/**
 * Every rollout of `promptId` in the given files of a run, training steps first (by step), then
 * evaluations (by step). Lines that do not contain the prompt id as JSON text are skipped
 * unparsed, so a long run is read at the speed of the disk. Once `signal` aborts, no further
 * slice is read.
 */
export async function taskTimeline(
  runDir: string,
  promptId: string,
  steps: readonly StepFileInfo[],
  sets: readonly EvalSetInfo[],
  signal?: AbortSignal,
): Promise<{ question: string; gold: string | string[] | null; entries: TimelineEntry[]; scanned: { files: number; rollouts: number; skipped: number } }> {
  const needle = JSON.stringify(promptId);
  const sources: TimelineSource[] = [
    ...[...steps].sort((x, y) => x.step - y.step).map((s) => ({ kind: 'step' as const, step: s.step, file: s.file })),
    ...sets.map((set) => ({ kind: 'eval' as const, set })),
  ];
  const entries: TimelineEntry[] = [];
  const scanned = { files: 0, rollouts: 0, skipped: 0 };
  let question = '';
  let gold: string | string[] | null = null;
  for (const source of sources) {
    scanned.files += 1;
    const file = join(runDir, source.kind === 'step' ? source.file : source.set.file);
    for await (const { line, record, summary } of scanRollouts(file, scanned, { signal, mayMatch: (text) => text.includes(needle) })) {
      if (record.prompt_id !== promptId) continue;
      scanned.rollouts += 1;
      question ||= summary.question;
      gold ??= summary.gold;
      const common = { line, group: summary.group, correct: summary.correct, answer: summary.answer, reward: summary.reward, toolCalls: summary.toolCalls, toolNames: summary.toolNames, errorClasses: summary.errorClasses };
      if (source.kind === 'step') entries.push({ kind: 'step', step: source.step, ...common });
      else entries.push({ kind: 'eval', step: source.set.step, key: source.set.key, label: source.set.label, ...(armOf(summary) ? { arm: armOf(summary) as EvalArm } : {}), ...common });
    }
  }
  return { question, gold, entries, scanned };
}
