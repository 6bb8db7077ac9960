/**
 * Dataset commands: Refresh and Open Sample (the first task's image, with its question and
 * answer). Generate Tasks lives with the other process commands.
 */
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { Commands } from '../command-ids.js';
import type { DatasetSummary } from './dataset-summary.js';
import type { DatasetsTreeProvider } from './datasets-tree.js';

export function registerDatasetCommands(context: vscode.ExtensionContext, datasets: DatasetsTreeProvider): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.refreshDatasets, () => datasets.refresh()),
    vscode.commands.registerCommand(Commands.openSample, async (arg?: DatasetSummary) => {
      let summary = arg;
      if (!summary) {
        const all = await datasets.list();
        const picked = await vscode.window.showQuickPick(all.map((s) => ({ label: s.folder, description: `${s.tasks} tasks`, summary: s })), { title: 'vistool: dataset to sample' });
        summary = picked?.summary;
      }
      if (!summary) return;
      const sample = summary.sample;
      if (!sample) {
        void vscode.window.showInformationMessage(`vistool: ${summary.file} has no readable task.`);
        return;
      }
      if (!existsSync(sample.image)) {
        void vscode.window.showErrorMessage(`vistool: the first task (${sample.id}) names the image ${sample.image}, which does not exist. Run \`npx vistool data check ${summary.folder}\` for a full check.`);
        return;
      }
      await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(sample.image), { preview: true });
      void vscode.window.showInformationMessage(`${sample.id}: ${sample.question} → ${sample.answer}`);
    }),
  );
}
