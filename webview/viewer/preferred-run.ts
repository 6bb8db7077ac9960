/**
 * Which run the viewer opens on when nothing says otherwise (no saved place, no run in the URL):
 * the first run whose policy called tools, so `vistool view runs/demo` opens on the tools arm
 * rather than on the text arm that sorts first. A run called tools when its training rows have a
 * positive `tool/call_rate` or an evaluation says so (`eval/tool_call_rate`). Pure, for a unit test.
 */
import type { RunSummary } from '../../protocol/panel-protocol.js';

export function callsTools(run: RunSummary): boolean {
  const trained = run.metricStats?.['tool/call_rate'];
  if (trained !== undefined && trained.max > 0) return true;
  return run.evaluations.some((e) => (e.metrics['eval/tool_call_rate'] ?? 0) > 0);
}

export function preferredRun(runs: readonly RunSummary[]): string | null {
  return (runs.find(callsTools) ?? runs[0])?.id ?? null;
}
