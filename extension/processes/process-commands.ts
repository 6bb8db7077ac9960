/**
 * The commands that launch processes: Start, Stop and Resume Run, Generate Tasks, Evaluate
 * Checkpoint. Each works from the palette (asking what it needs), from the views (with the item)
 * and from code (with arguments, which the in-editor tests use). This file is their table; the
 * work is in run-manager.ts, task-generation.ts and checkpoint-eval.ts.
 */
import * as vscode from 'vscode';
import { type CommandId, Commands } from '../command-ids.js';
import { CONFIG_GLOB } from '../configs/configs-tree.js';
import type { DatasetsTreeProvider } from '../datasets/datasets-tree.js';
import type { PythonDiscovery } from '../python/python-discovery.js';
import { pickRun } from '../runs/run-argument.js';
import { isResumable } from '../runs/run-state.js';
import type { RunsModel } from '../runs/runs-model.js';
import { CheckpointEvaluation } from './checkpoint-eval.js';
import type { RunManager, StartOptions } from './run-manager.js';
import { type GenerateFromConfigOptions, type GenerateTasksOptions, TaskGeneration } from './task-generation.js';

export type { GenerateFromConfigOptions, GenerateTasksOptions };

async function configFromArgument(arg: unknown): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg;
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active?.path.endsWith('.vistool.json')) return active;
  const configs = await vscode.workspace.findFiles(CONFIG_GLOB, '{**/node_modules/**,**/.venv/**}', 200);
  if (configs.length === 0) {
    const choice = await vscode.window.showInformationMessage('vistool: no run config (*.vistool.json) in this workspace.', 'New Run Config');
    if (choice) await vscode.commands.executeCommand(Commands.newRunConfig);
    return undefined;
  }
  if (configs.length === 1) return configs[0];
  const picked = await vscode.window.showQuickPick(configs.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })), { title: 'vistool: run config to start' });
  return picked?.uri;
}

/** Commands by id, each with the arguments it takes from the palette, a view or code. */
type CommandTable = { readonly [K in CommandId]?: (...args: never[]) => unknown };

function registerAll(context: vscode.ExtensionContext, table: CommandTable): void {
  for (const [id, handler] of Object.entries(table)) context.subscriptions.push(vscode.commands.registerCommand(id, handler as (...args: unknown[]) => unknown));
}

export function registerProcessCommands(context: vscode.ExtensionContext, runs: RunsModel, manager: RunManager, discovery: PythonDiscovery, datasets: DatasetsTreeProvider): void {
  const tasks = new TaskGeneration(context, datasets);
  const evaluation = new CheckpointEvaluation(context, runs, discovery);
  registerAll(context, {
    [Commands.startRun]: async (arg?: unknown, options?: StartOptions) => {
      const uri = await configFromArgument(arg);
      return uri ? manager.start(uri, options) : undefined;
    },
    [Commands.stopRun]: async (arg?: unknown) => {
      const run = await pickRun(runs, arg, 'stop', (r) => r.state === 'running' || r.state === 'starting', 'Stop needs a running run.');
      return run ? manager.stop(run.dir) : undefined;
    },
    [Commands.resumeRun]: async (arg?: unknown, options?: StartOptions) => {
      const run = await pickRun(runs, arg, 'resume', (r) => isResumable(r.state), 'Resume needs a run that stopped, was interrupted, paused or failed.');
      return run ? manager.resume(run.dir, options) : undefined;
    },
    [Commands.generateTasks]: (options?: GenerateTasksOptions | GenerateFromConfigOptions) => tasks.generate(options),
    [Commands.evaluateCheckpoint]: (arg?: unknown, checkpoint?: string) => evaluation.evaluate(arg, checkpoint),
  });
}
