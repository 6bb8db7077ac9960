/**
 * Run commands that touch files only: Reveal in Explorer, Delete Run, Show Run Log, Refresh.
 * Processes (start, stop, resume) live in processes/process-commands.ts.
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { Commands } from '../command-ids.js';
import { pickRun } from './run-argument.js';
import type { RunsModel } from './runs-model.js';

export function registerRunFileCommands(context: vscode.ExtensionContext, model: RunsModel, showLiveLog: (dir: string) => boolean): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.refreshRuns, () => model.refresh()),
    vscode.commands.registerCommand(Commands.revealRun, async (arg?: unknown) => {
      const run = await pickRun(model, arg, 'reveal');
      if (run) await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(run.dir));
    }),
    vscode.commands.registerCommand(Commands.showRunLog, async (arg?: unknown) => {
      const run = await pickRun(model, arg, 'show the log of');
      if (!run) return;
      if (showLiveLog(run.dir)) return;
      const log = join(run.dir, 'logs', 'trainer.log');
      if (!existsSync(log)) {
        void vscode.window.showInformationMessage(`vistool: run '${run.name}' has no log yet (looked for ${log}).`);
        return;
      }
      await vscode.window.showTextDocument(vscode.Uri.file(log), { preview: true });
    }),
    vscode.commands.registerCommand(Commands.deleteRun, async (arg?: unknown) => {
      const run = await pickRun(model, arg, 'delete', (r) => r.state !== 'running' && r.state !== 'starting');
      if (!run) return false;
      if (run.state === 'running' || run.state === 'starting') {
        void vscode.window.showErrorMessage(`vistool: run '${run.name}' is still running; stop it before deleting it.`);
        return false;
      }
      const answer = await vscode.window.showWarningMessage(`Delete run '${run.name}' and everything in ${run.dir}?`, { modal: true }, 'Delete');
      if (answer !== 'Delete') return false;
      const uri = vscode.Uri.file(run.dir);
      try {
        await vscode.workspace.fs.delete(uri, { recursive: true, useTrash: true });
      } catch {
        // No trash on this host (remote, headless): delete for good, as the user confirmed.
        await vscode.workspace.fs.delete(uri, { recursive: true, useTrash: false });
      }
      await model.refresh();
      return true;
    }),
  );
}
