/**
 * The vistool VS Code extension: the researcher's cockpit. It lists runs, datasets and run
 * configs, checks configs as you type, starts and stops the trainer (which starts the env
 * server), and hosts the panels (dashboard, rollout viewer, tool playground).
 *
 * It stays thin: every tool, reward and config rule lives in env/ (editor-free) or in the
 * trainer; this file only wires providers and commands, each registered into
 * context.subscriptions so deactivation disposes everything.
 */
import * as vscode from 'vscode';
import { Commands } from './command-ids.js';
import { ConfigDiagnostics } from './config/config-diagnostics.js';
import { isRunConfig, workspaceRoots } from './config/config-documents.js';
import { ConfigQuickFixes } from './config/config-quick-fixes.js';
import { newRunConfig } from './config/new-run-config.js';
import type { TemplateChoices } from './config/run-config-template.js';
import { ConfigsTreeProvider } from './configs/configs-tree.js';
import { registerDatasetCommands } from './datasets/dataset-commands.js';
import { DatasetsTreeProvider } from './datasets/datasets-tree.js';
import { vistoolLog } from './output.js';
import { registerPanelCommands } from './panels/panel-commands.js';
import { PanelHosts } from './panels/panel-hosts.js';
import { ReportPanels } from './panels/report-panel.js';
import { registerProcessCommands } from './processes/process-commands.js';
import { RunManager } from './processes/run-manager.js';
import { PythonDiscovery } from './python/python-discovery.js';
import { TrainerEnvironment } from './python/trainer-environment.js';
import { setUpTrainerEnvironment } from './python/trainer-setup.js';
import { checkVerlEnvironment, setUpVerlEnvironment } from './python/verl-environment.js';
import { registerRunFileCommands } from './runs/run-file-commands.js';
import { RunStatusBar } from './runs/run-status-bar.js';
import { RunsModel } from './runs/runs-model.js';
import { RunsTreeProvider } from './runs/runs-tree.js';

/** What activate() returns: the in-editor tests reach the live objects through it. */
export interface VistoolApi {
  runs: RunsModel;
  statusBar: RunStatusBar;
  diagnostics: ConfigDiagnostics;
  manager: RunManager;
  environment: TrainerEnvironment;
  discovery: PythonDiscovery;
  panels: PanelHosts;
  reports: ReportPanels;
  runsTree: RunsTreeProvider;
  datasets: DatasetsTreeProvider;
}

export function activate(context: vscode.ExtensionContext): VistoolApi {
  vistoolLog(context);
  const runs = new RunsModel();
  context.subscriptions.push(runs);
  const runsTree = RunsTreeProvider.register(context, runs);
  const statusBar = RunStatusBar.register(context, runs);
  const datasets = DatasetsTreeProvider.register(context);
  const configs = ConfigsTreeProvider.register(context);

  const discovery = new PythonDiscovery(context);
  const environment = new TrainerEnvironment(context, discovery);
  const diagnostics = ConfigDiagnostics.register(context, () => environment.cudaFacts());
  ConfigQuickFixes.register(context, () => environment.cudaFacts());
  const manager = new RunManager(context, runs, statusBar, discovery, environment);
  context.subscriptions.push(manager, environment.onDidChange(() => diagnostics.refreshAll()));

  registerRunFileCommands(context, runs, (dir) => manager.showLog(dir));
  registerDatasetCommands(context, datasets);
  registerProcessCommands(context, runs, manager, discovery, datasets);
  const reports = new ReportPanels();
  context.subscriptions.push(reports);
  const panels = PanelHosts.register(context, reports);
  registerPanelCommands(context, runs, panels, reports);
  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.refreshConfigs, () => configs.refresh()),
    vscode.commands.registerCommand(Commands.newRunConfig, (choices?: TemplateChoices, folder?: string) => newRunConfig(datasets, choices, folder)),
    vscode.commands.registerCommand(Commands.checkTrainerEnvironment, () => environment.checkWithUi()),
    vscode.commands.registerCommand(Commands.selectPythonInterpreter, () => discovery.select()),
    vscode.commands.registerCommand(Commands.setUpTrainerEnvironment, () => setUpTrainerEnvironment(context, discovery, environment)),
    vscode.commands.registerCommand(Commands.setUpVerlEnvironment, () => setUpVerlEnvironment(context, workspaceRoots() ?? [])),
    vscode.commands.registerCommand(Commands.checkVerlEnvironment, (options?: { quiet?: boolean }) => checkVerlEnvironment(context, workspaceRoots() ?? [], options)),
  );

  // The config diagnostics learn about CUDA from one quiet check-env, the first time a config is open.
  const maybeCheck = (document: vscode.TextDocument) => isRunConfig(document) && environment.checkInBackground();
  vscode.workspace.textDocuments.forEach(maybeCheck);
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument(maybeCheck),
    vscode.workspace.onDidGrantWorkspaceTrust(() => vscode.workspace.textDocuments.forEach(maybeCheck)),
  );

  // Trainers outlive a window reload: follow the ones still alive.
  void manager.reattach();

  return { runs, statusBar, diagnostics, manager, environment, discovery, panels, reports, runsTree, datasets };
}

export function deactivate(): void {
  // Everything is in context.subscriptions; running trainers are left running on purpose
  // (they belong to their run, and a reloaded window reattaches to them).
}
