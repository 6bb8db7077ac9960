/**
 * The words a run is shown with: the Runs view's description and tooltip, and the status-bar
 * text. One place, so the tree, the status bar and the tests agree.
 *
 * Editor-free (unit-tested under plain Node).
 */
import type { RunOverview } from './run-catalog.js';
import type { RunState } from './run-state.js';

/** Codicon names per state (ThemeIcon ids). */
export const STATE_ICONS: Readonly<Record<RunState, string>> = {
  running: 'sync~spin',
  starting: 'loading~spin',
  finished: 'pass',
  failed: 'error',
  stopped: 'debug-stop',
  interrupted: 'debug-pause',
  paused: 'debug-pause',
  unknown: 'question',
};

function fixed(value: number, digits: number): string {
  return value.toFixed(digits);
}

/** A supervised stage (a curriculum's perception stage, or SFT): its loss is the news, not a reward. */
function supervised(run: RunOverview): boolean {
  return run.stage === 'sft' || run.stage === 'perception';
}

function percent(value: number): string {
  return `${Math.round(value * 100)}%`;
}

/**
 * `rl step 30`: the step within its stage, counted from the stage's start (a 30-step RL after 650
 * SFT steps is not "rl step 680"); the global step, unnamed, when the row does not say.
 */
function stepWords(run: RunOverview): string {
  const within = run.stageStep ?? null;
  return run.stage && within !== null ? `${run.stage} step ${within}` : `step ${run.step}`;
}

/** `running · rl step 12 · reward 0.53 · tools 40%` */
export function runDescription(run: RunOverview): string {
  const parts: string[] = [run.state];
  if (run.step !== null) parts.push(stepWords(run));
  if (supervised(run) && run.sftLoss !== null) parts.push(`loss ${fixed(run.sftLoss, 3)}`);
  else if (run.reward !== null) parts.push(`reward ${fixed(run.reward, 2)}`);
  if (!supervised(run) && run.toolCallRate !== null) parts.push(`tools ${percent(run.toolCallRate)}`);
  return parts.join(' · ');
}

/** Plain-text tooltip lines (the tree renders them as Markdown-free text). */
export function runTooltip(run: RunOverview): string {
  const lines = [`${run.name} — ${run.state}${run.status && run.status !== run.state ? ` (run.json says ${run.status})` : ''}`, run.dir];
  if (run.configName !== null) lines.push(`config ${run.configName}`);
  if (run.step !== null) lines.push(`step ${run.step}${run.stage ? ` (${run.stage}${run.stageStep != null ? ` step ${run.stageStep}` : ''})` : ''}`);
  if (run.reward !== null) lines.push(`reward/mean ${fixed(run.reward, 4)}`);
  if (run.accuracy !== null) lines.push(`acc/mean ${fixed(run.accuracy, 4)}`);
  if (run.toolCallRate !== null) lines.push(`tool/call_rate ${fixed(run.toolCallRate, 3)}`);
  if (run.sftLoss !== null) lines.push(`${run.stage === 'perception' ? 'perception' : 'sft'}/loss ${fixed(run.sftLoss, 4)}`);
  // run.json keeps the last pid after the trainer exits; it only means something while it runs.
  if (run.pid !== null && (run.state === 'running' || run.state === 'starting')) lines.push(`pid ${run.pid}`);
  if (run.error) lines.push(`error: ${run.error}`);
  if (run.state === 'stopped' && run.status === 'running') lines.push('The trainer process is gone without writing a final status (killed, or the machine restarted). Resume continues from the newest checkpoint.');
  lines.push(...run.problems);
  return lines.join('\n');
}

/** `$(sync~spin) micro-cpu · step 12 · reward 0.53 · tools 40%` */
export function statusBarText(run: RunOverview): string {
  const parts = [`$(${STATE_ICONS[run.state]}) ${run.name}`];
  if (run.step !== null) parts.push(stepWords(run));
  if (supervised(run) && run.sftLoss !== null) parts.push(`loss ${fixed(run.sftLoss, 3)}`);
  else if (run.reward !== null) parts.push(`reward ${fixed(run.reward, 2)}`);
  if (!supervised(run) && run.toolCallRate !== null) parts.push(`tools ${percent(run.toolCallRate)}`);
  return parts.join(' · ');
}

/**
 * Why a command found no run to act on: none at all (and where it looked), or none in a state the
 * command accepts (each run's state listed, and what the command needs).
 */
export function noRunMessage(purpose: string, runs: readonly RunOverview[], roots: readonly string[], needs?: string): string {
  if (runs.length === 0) {
    const where = roots.length === 0 ? 'no workspace folder is open' : `none under ${roots.join(', ')} (a run is a folder with run.json, config.json or metrics.jsonl; the vistool.runsFolder setting names where to look)`;
    return `vistool: no run to ${purpose}: ${where}.`;
  }
  const shown = runs.slice(0, 4).map((run) => `${run.name} is ${run.state}`).join(', ');
  const more = runs.length > 4 ? ` and ${runs.length - 4} more` : '';
  return `vistool: no run to ${purpose}: ${shown}${more}.${needs ? ` ${needs}` : ''}`;
}
