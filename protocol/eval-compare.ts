/**
 * Two evaluations kept task by task, lined up: each side's rollouts in its arm, matched by prompt
 * id, and what happened from side a to side b (fixed, broken, both wrong, both right, on one side
 * only). The panel host answers evals/compare with it (env/view/panel-backend.ts) and a static
 * bundle's page computes the same (webview/shared/static-backend.ts). Pure.
 */
import { COMPARE_OUTCOMES, type ComparedRollout, type ComparedTask, type CompareOutcome } from './panel/evaluations.js';
import type { EvalArm, RolloutSummary } from './panel/rollouts.js';

/** The arm of an evaluation record's summary: its `arm`, else its group (0 tools, 1 no tools, as both writers number them). */
export function armOf(summary: RolloutSummary): EvalArm | null {
  if (summary.arm) return summary.arm;
  return summary.group === 0 ? 'tools' : summary.group === 1 ? 'no_tools' : null;
}

function compared(summary: RolloutSummary): ComparedRollout {
  const { line, correct, answer, reward, toolCalls, toolErrors, formatErrors, errorClasses, findings } = summary;
  return { line, correct, answer, reward, toolCalls, toolErrors, formatErrors, errorClasses, ...(findings ? { findings } : {}) };
}

export function outcomeOf(a: ComparedRollout | null, b: ComparedRollout | null): CompareOutcome {
  if (!a) return 'only_b';
  if (!b) return 'only_a';
  if (a.correct === true && b.correct === true) return 'both_right';
  if (a.correct === true) return 'broken';
  if (b.correct === true) return 'fixed';
  return 'both_wrong';
}

/**
 * Side a's and side b's rollouts of the same tasks (by prompt id), each side in its arm: which
 * tasks b fixed (a wrong, b right), broke (a right, b wrong), both got wrong or right, and those
 * only one side has. A task seen twice in one side's arm counts once (its last line). Pure.
 */
export function compareEvaluations(a: readonly RolloutSummary[], armA: EvalArm, b: readonly RolloutSummary[], armB: EvalArm): { tasks: ComparedTask[]; counts: Record<CompareOutcome, number>; shared: number } {
  const byPrompt = (rollouts: readonly RolloutSummary[], arm: EvalArm) => {
    const map = new Map<string, RolloutSummary>();
    for (const r of rollouts) if (armOf(r) === arm) map.set(r.promptId, r);
    return map;
  };
  const left = byPrompt(a, armA);
  const right = byPrompt(b, armB);
  const order = [...left.keys(), ...[...right.keys()].filter((id) => !left.has(id))];
  const counts = Object.fromEntries(COMPARE_OUTCOMES.map((o) => [o, 0])) as Record<CompareOutcome, number>;
  const tasks = order.map((promptId): ComparedTask => {
    const ra = left.get(promptId) ?? null;
    const rb = right.get(promptId) ?? null;
    const about = ra ?? rb;
    const sideA = ra ? compared(ra) : null;
    const sideB = rb ? compared(rb) : null;
    const outcome = outcomeOf(sideA, sideB);
    counts[outcome] += 1;
    return { promptId, question: about?.question ?? '', gold: about?.gold ?? null, outcome, a: sideA, b: sideB };
  });
  return { tasks, counts, shared: tasks.length - counts.only_a - counts.only_b };
}
