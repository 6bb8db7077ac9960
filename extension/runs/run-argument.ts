/**
 * Commands about a run are called from the Runs view (with the run), the explorer (with the
 * folder's Uri), the status bar, other code (with a path), or the palette (with nothing). This
 * turns any of those into the run's overview, asking with a quick pick when it is ambiguous.
 */
import { resolve } from 'node:path';
import * as vscode from 'vscode';
import type { RunOverview } from './run-catalog.js';
import { runsRoots } from '../settings.js';
import { noRunMessage, runDescription } from './run-labels.js';
import type { RunsModel } from './runs-model.js';

function isOverview(value: unknown): value is RunOverview {
  return typeof value === 'object' && value !== null && typeof (value as RunOverview).dir === 'string' && typeof (value as RunOverview).state === 'string';
}

/** The run directory named by a command argument, when it names one. */
export function runDirFromArgument(arg: unknown): string | undefined {
  if (isOverview(arg)) return arg.dir;
  if (arg instanceof vscode.Uri) return arg.fsPath;
  if (typeof arg === 'string' && arg !== '') return resolve(arg);
  return undefined;
}

/** `needs` says which runs `filter` accepts, for the message when none does (e.g. "Resume needs a stopped, paused or failed run."). */
export async function pickRun(model: RunsModel, arg: unknown, purpose: string, filter: (run: RunOverview) => boolean = () => true, needs?: string): Promise<RunOverview | undefined> {
  const dir = runDirFromArgument(arg);
  if (dir !== undefined) {
    let run = model.find(dir);
    if (!run) {
      model.track(dir);
      await model.refresh();
      run = model.find(dir);
    }
    if (!run) void vscode.window.showErrorMessage(`vistool: ${dir} is not a run directory (it has no run.json, config.json or metrics.jsonl).`);
    return run;
  }
  const all = await model.refresh();
  const candidates = all.filter(filter);
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage(noRunMessage(purpose, all, runsRoots(), needs));
    return undefined;
  }
  if (candidates.length === 1) return candidates[0];
  const picked = await vscode.window.showQuickPick(
    candidates.map((run) => ({ label: run.name, description: runDescription(run), detail: run.dir, run })),
    { title: `vistool: run to ${purpose}`, matchOnDetail: true },
  );
  return picked?.run;
}
