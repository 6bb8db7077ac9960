/**
 * Open Dashboard, Open Rollout Viewer, Open Tool Playground: from the Runs view (one run, or
 * several selected to compare), the status bar, the explorer (a run folder, a PNG), or the
 * palette (asks).
 */
import * as vscode from 'vscode';
import { Commands } from '../command-ids.js';
import { pickRun, runDirFromArgument } from '../runs/run-argument.js';
import type { RunsModel } from '../runs/runs-model.js';
import type { PanelHosts } from './panel-hosts.js';

/** The run folders a command was invoked on: the selection when several are selected in the tree. */
async function runDirs(runs: RunsModel, arg: unknown, selected: unknown, purpose: string): Promise<string[]> {
  if (Array.isArray(selected) && selected.length > 1) {
    return selected.map((item) => runDirFromArgument(item)).filter((d): d is string => d !== undefined);
  }
  const run = await pickRun(runs, arg, purpose);
  return run ? [run.dir] : [];
}

export function registerPanelCommands(context: vscode.ExtensionContext, runs: RunsModel, panels: PanelHosts): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.openDashboard, async (arg?: unknown, selected?: unknown) => {
      const dirs = await runDirs(runs, arg, selected, 'show in the dashboard');
      return dirs.length > 0 ? panels.show('dashboard', dirs) : undefined;
    }),
    vscode.commands.registerCommand(Commands.openRolloutViewer, async (arg?: unknown, selected?: unknown) => {
      const dirs = await runDirs(runs, arg, selected, 'view the rollouts of');
      return dirs.length > 0 ? panels.show('viewer', dirs) : undefined;
    }),
    vscode.commands.registerCommand(Commands.openPlayground, async (arg?: unknown) => {
      if (arg instanceof vscode.Uri) {
        await panels.openInPlayground(arg.fsPath);
        return panels.panel('playground');
      }
      return panels.show('playground', []);
    }),
  );
}
