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

export interface PixelPoint {
  x: number;
  y: number;
}

/**
 * Which line a click on a chart of several lines means, in canvas pixels: each line's point
 * nearest the pointer along x, and of those within `slack` pixels of the nearest along x (lines
 * that reach the clicked x; a run that ended earlier does not), the one nearest the pointer along
 * y. Picking by x alone gave the first run drawn at that step whichever curve was under the
 * pointer. Returns the line's index and its point's index; null when no line has a point.
 */
export function curveUnderPointer(lines: readonly (readonly PixelPoint[] | null)[], pointer: PixelPoint, slack = 8): { line: number; index: number } | null {
  const nearest = lines.map((points) => {
    let best: { index: number; dx: number; dy: number } | null = null;
    points?.forEach((p, index) => {
      if (!Number.isFinite(p.x) || !Number.isFinite(p.y)) return;
      const dx = Math.abs(p.x - pointer.x);
      const dy = Math.abs(p.y - pointer.y);
      if (best === null || dx < best.dx || (dx === best.dx && dy < best.dy)) best = { index, dx, dy };
    });
    return best as { index: number; dx: number; dy: number } | null;
  });
  const closestX = Math.min(...nearest.map((n) => n?.dx ?? Infinity));
  if (!Number.isFinite(closestX)) return null;
  let pick: { line: number; index: number; dy: number } | null = null;
  nearest.forEach((n, line) => {
    if (n && n.dx <= closestX + slack && (pick === null || n.dy < pick.dy)) pick = { line, index: n.index, dy: n.dy };
  });
  const chosen = pick as { line: number; index: number; dy: number } | null;
  return chosen && { line: chosen.line, index: chosen.index };
}
