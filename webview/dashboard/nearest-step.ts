/**
 * Which rollouts file a click on a training chart opens: the step nearest the clicked x among
 * the steps that have a rollouts file (the trainer writes them every few steps, so the clicked
 * step often has none). A tie goes to the earlier step. Pure, for a unit test.
 */
export function nearestStep(steps: readonly number[], x: number): number | null {
  let best: number | null = null;
  for (const step of steps) {
    if (best === null) {
      best = step;
      continue;
    }
    const d = Math.abs(step - x);
    const bestD = Math.abs(best - x);
    if (d < bestD || (d === bestD && step < best)) best = step;
  }
  return best;
}
