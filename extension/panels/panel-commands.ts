/**
 * Open Dashboard, Open Rollout Viewer, Open Tool Playground, Open Report: from the Runs view (one
 * run, a folder of runs, or several selected to compare), the status bar, the explorer (a run
 * folder, a PNG), or the palette (asks).
 */
import * as vscode from 'vscode';
import { Commands } from '../command-ids.js';
import { pickRun, runDirFromArgument } from '../runs/run-argument.js';
import type { RunsModel } from '../runs/runs-model.js';
import { isRunGroupItem } from '../runs/runs-tree-roots.js';
import type { PanelHosts } from './panel-hosts.js';
import type { ReportPanels } from './report-panel.js';

/** The run folders a command was invoked on: the selection when several are selected in the tree; a folder of runs stands for its runs. */
async function runDirs(runs: RunsModel, arg: unknown, selected: unknown, purpose: string): Promise<string[]> {
  const dirsOf = (item: unknown): string[] => {
    if (isRunGroupItem(item)) return item.runs.map((run) => run.dir);
    const dir = runDirFromArgument(item);
    return dir === undefined ? [] : [dir];
  };
  if (Array.isArray(selected) && selected.length > 1) return [...new Set(selected.flatMap(dirsOf))];
  if (isRunGroupItem(arg)) return dirsOf(arg);
  const run = await pickRun(runs, arg, purpose);
  return run ? [run.dir] : [];
}

/** The report a command was invoked on: a folder of runs' or a run's (its own, or its folder's); the palette asks for a run that has one. */
async function reportOf(runs: RunsModel, arg: unknown): Promise<string | undefined> {
  if (isRunGroupItem(arg)) return arg.report ?? undefined;
  const run = await pickRun(runs, arg, 'open the report of', (r) => r.report !== null, 'Open Report needs a run with a report.html (the demo writes one beside its runs).');
  if (run && run.report === null) void vscode.window.showInformationMessage(`vistool: ${run.name} has no report.html (neither in ${run.dir} nor in its folder of runs).`);
  return run?.report ?? undefined;
}

export function registerPanelCommands(context: vscode.ExtensionContext, runs: RunsModel, panels: PanelHosts, reports: ReportPanels): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.openReport, async (arg?: unknown) => {
      const report = await reportOf(runs, arg);
      return report ? reports.show(report) : undefined;
    }),
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
