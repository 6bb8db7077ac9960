/**
 * The trainer's environment as `check-env` reports it: run on demand (Check Trainer
 * Environment, with progress and cancel) and once in the background when a trusted workspace
 * opens a run config, so the config diagnostics know about CUDA and bfloat16. Shows versions
 * and devices, and what to run to fix what is missing.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { CudaFacts } from '../../env/config/environment-facts.js';
import { Commands } from '../command-ids.js';
import { vistoolLog } from '../output.js';
import { prependPath } from '../processes/trainer-launch.js';
import { runCommand } from '../processes/command-runner.js';
import { type CheckEnvReport, cudaFactsOf, parseCheckEnvOutput, reportLines, reportSummary } from './check-env-report.js';
import type { PythonDiscovery, ResolvedPython } from './python-discovery.js';

export class TrainerEnvironment {
  private report: CheckEnvReport | null = null;
  private python: string | null = null;
  private background: Promise<void> | null = null;
  private readonly changed = new vscode.EventEmitter<CheckEnvReport | null>();
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly discovery: PythonDiscovery,
  ) {
    context.subscriptions.push(this.changed);
  }

  get lastReport(): CheckEnvReport | null {
    return this.report;
  }

  cudaFacts(): CudaFacts {
    return cudaFactsOf(this.report);
  }

  /** Runs check-env with `python`; null when it printed no report (the reason is logged). */
  async run(python: ResolvedPython, signal?: AbortSignal): Promise<CheckEnvReport | null> {
    const log = vistoolLog(this.context);
    const env = { ...process.env, ...python.env, PYTHONPATH: prependPath(process.env.PYTHONPATH, join(this.context.extensionPath, 'trainer')) };
    log.info(`checking the trainer environment: ${python.path} -m vistool_trainer check-env --json`);
    const result = await runCommand({ command: python.path, args: ['-m', 'vistool_trainer', 'check-env', '--json'], env, cwd: this.context.extensionPath }, { signal });
    if (result.cancelled) return null;
    const report = parseCheckEnvOutput(result.stdout);
    if (!report) {
      log.error(`check-env printed no report (exit ${result.code}): ${result.stderr.trim().split('\n').slice(-5).join(' | ')}`);
      return null;
    }
    this.report = report;
    this.python = python.path;
    for (const line of reportLines(report, python.path)) log.info(line);
    this.changed.fire(report);
    return report;
  }

  /** Once per session, quietly: gives the diagnostics CUDA facts. Never in an untrusted workspace. */
  checkInBackground(): void {
    if (this.background || this.report || !vscode.workspace.isTrusted) return;
    this.background = (async () => {
      const python = await this.discovery.resolve();
      if (python) await this.run(python).catch(() => null);
    })();
  }

  /** The Check Trainer Environment command. */
  async checkWithUi(): Promise<CheckEnvReport | null> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showErrorMessage('vistool runs nothing in an untrusted workspace. Trust it first (Workspaces: Manage Workspace Trust).');
      return null;
    }
    const python = await this.discovery.resolve();
    if (!python) {
      const choice = await vscode.window.showWarningMessage('vistool: no Python interpreter found for the trainer (setting, Python extension, workspace .venv or managed environment).', 'Set Up Trainer Environment', 'Select Python Interpreter');
      if (choice === 'Set Up Trainer Environment') await vscode.commands.executeCommand(Commands.setUpTrainerEnvironment);
      if (choice === 'Select Python Interpreter') await vscode.commands.executeCommand(Commands.selectPythonInterpreter);
      return null;
    }
    const report = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `vistool: checking the trainer environment (${python.path})`, cancellable: true },
      (_progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return this.run(python, abort.signal);
      },
    );
    const log = vistoolLog(this.context);
    if (!report) {
      const choice = await vscode.window.showErrorMessage(`vistool: ${python.path} could not run the trainer's environment check; see the log.`, 'Show Log', 'Set Up Trainer Environment');
      if (choice === 'Show Log') log.show(true);
      if (choice === 'Set Up Trainer Environment') await vscode.commands.executeCommand(Commands.setUpTrainerEnvironment);
      return null;
    }
    if (report.ok) {
      void vscode.window.showInformationMessage(`vistool: trainer environment ready — ${reportSummary(report)}`, 'Show Report').then((c) => c && log.show(true));
    } else {
      void vscode.window.showWarningMessage(`vistool: trainer environment not ready — ${report.problems[0] ?? ''}`, 'Show Report', 'Set Up Trainer Environment').then(async (choice) => {
        if (choice === 'Show Report') log.show(true);
        if (choice === 'Set Up Trainer Environment') await vscode.commands.executeCommand(Commands.setUpTrainerEnvironment);
      });
    }
    return report;
  }

  /** The interpreter the last report is about. */
  get checkedPython(): string | null {
    return this.python;
  }
}
