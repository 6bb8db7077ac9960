/**
 * The vistool VS Code extension: the researcher's cockpit. It lists runs, datasets and run
 * configs, checks configs as you type, starts and stops the trainer and the env server, and
 * hosts the panels (dashboard, rollout viewer, tool playground).
 *
 * It stays thin: every tool, reward and config rule lives in env/ (editor-free) or in the
 * trainer; this file only wires providers and commands, each registered into
 * context.subscriptions so deactivation disposes everything.
 */
import * as vscode from 'vscode';
import type { CudaFacts } from '../env/config/environment-facts.js';
import { Commands } from './command-ids.js';
import { ConfigDiagnostics } from './config/config-diagnostics.js';
import { ConfigQuickFixes } from './config/config-quick-fixes.js';
import { newRunConfig } from './config/new-run-config.js';
import type { TemplateChoices } from './config/run-config-template.js';
import { ConfigsTreeProvider } from './configs/configs-tree.js';
import { registerDatasetCommands } from './datasets/dataset-commands.js';
import { DatasetsTreeProvider } from './datasets/datasets-tree.js';
import { registerRunFileCommands } from './runs/run-file-commands.js';
import { RunStatusBar } from './runs/run-status-bar.js';
import { RunsModel } from './runs/runs-model.js';
import { RunsTreeProvider } from './runs/runs-tree.js';

/** What activate() returns: the in-editor tests reach the live objects through it. */
export interface VistoolApi {
  runs: RunsModel;
  statusBar: RunStatusBar;
  diagnostics: ConfigDiagnostics;
}

export function activate(context: vscode.ExtensionContext): VistoolApi {
  const runs = new RunsModel();
  context.subscriptions.push(runs);
  RunsTreeProvider.register(context, runs);
  const statusBar = RunStatusBar.register(context, runs);
  const datasets = DatasetsTreeProvider.register(context);
  const configs = ConfigsTreeProvider.register(context);

  const cuda: CudaFacts = { cudaDevices: null, bf16: null };
  const diagnostics = ConfigDiagnostics.register(context, () => cuda);
  ConfigQuickFixes.register(context, () => cuda);

  registerRunFileCommands(context, runs, () => false);
  registerDatasetCommands(context, datasets);
  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.refreshConfigs, () => configs.refresh()),
    vscode.commands.registerCommand(Commands.newRunConfig, (choices?: TemplateChoices, folder?: string) => newRunConfig(datasets, choices, folder)),
  );

  return { runs, statusBar, diagnostics };
}

export function deactivate(): void {
  // Everything is in context.subscriptions; running trainers are left running on purpose
  // (they belong to their run, and a reloaded window reattaches to them).
}
