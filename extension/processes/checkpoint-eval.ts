/**
 * Evaluate Checkpoint: the trainer's `eval` on one of a run's complete checkpoints, with progress
 * and cancel, its trainer events in the vistool log, and the `eval/` metrics it reports shown and
 * returned. The palette asks for the run and the checkpoint; code passes them.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { vistoolLog } from '../output.js';
import type { PythonDiscovery } from '../python/python-discovery.js';
import { pickRun } from '../runs/run-argument.js';
import type { RunsModel } from '../runs/runs-model.js';
import { runCommand } from './command-runner.js';
import { describeTrainerEvent, parseTrainerEvent } from './trainer-events.js';
import { prependPath } from './trainer-launch.js';

/** The run's checkpoints that finished writing (a trainer_state.json inside), newest first. */
function completeCheckpoints(runDir: string): string[] {
  try {
    return readdirSync(join(runDir, 'checkpoints')).filter((n) => n.startsWith('step-') && existsSync(join(runDir, 'checkpoints', n, 'trainer_state.json'))).sort().reverse();
  } catch {
    return [];
  }
}

export class CheckpointEvaluation {
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly runs: RunsModel,
    private readonly discovery: PythonDiscovery,
  ) {}

  /** The evaluation's metrics (the trainer's `eval` event), or undefined (cancelled, refused or failed, and said so). */
  async evaluate(arg?: unknown, checkpointArg?: string): Promise<Record<string, unknown> | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showErrorMessage('vistool launches nothing in an untrusted workspace. Trust it first.');
      return undefined;
    }
    const run = await pickRun(this.runs, arg, 'evaluate');
    if (!run) return undefined;
    const checkpoints = completeCheckpoints(run.dir);
    if (checkpoints.length === 0) {
      void vscode.window.showErrorMessage(`vistool: run '${run.name}' has no complete checkpoint to evaluate.`);
      return undefined;
    }
    let checkpoint = checkpointArg;
    if (!checkpoint) {
      const picked = checkpoints.length === 1 ? checkpoints[0] : await vscode.window.showQuickPick(checkpoints, { title: `vistool: checkpoint of '${run.name}' to evaluate` });
      if (!picked) return undefined;
      checkpoint = join(run.dir, 'checkpoints', picked);
    }
    const results = await this.runEval(run.dir, checkpoint);
    if (!results) return undefined;
    const summary = Object.entries(results).filter(([k, v]) => k.startsWith('eval/') && typeof v === 'number').map(([k, v]) => `${k.slice(5)} ${(v as number).toFixed(3)}`).join(', ');
    void vscode.window.showInformationMessage(`vistool: ${run.name} @ ${checkpoint.split('/').at(-1)}: ${summary}`, 'Show Log').then((c) => c && this.log().show(true));
    return results;
  }

  private log(): vscode.LogOutputChannel {
    return vistoolLog(this.context);
  }

  /** `python -m vistool_trainer eval` on the run's config and the checkpoint; its `eval` event, or undefined (said why). */
  private async runEval(runDir: string, checkpoint: string): Promise<Record<string, unknown> | undefined> {
    const python = await this.discovery.resolve(vscode.Uri.file(runDir));
    if (!python) {
      void vscode.window.showErrorMessage('vistool: no Python interpreter for the trainer; run Set Up Trainer Environment or Select Python Interpreter.');
      return undefined;
    }
    const args = ['-m', 'vistool_trainer', 'eval', '--config', join(runDir, 'config.json'), '--checkpoint', checkpoint];
    const env = { ...process.env, ...python.env, PYTHONPATH: prependPath(process.env.PYTHONPATH, join(this.context.extensionPath, 'trainer')), PYTHONUNBUFFERED: '1' };
    this.log().info(`$ ${python.path} ${args.join(' ')}`);
    let results: Record<string, unknown> | undefined;
    const cwd = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(runDir))?.uri.fsPath ?? runDir;
    const outcome = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `vistool: evaluating ${checkpoint}`, cancellable: true }, (_progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      const onStdoutLine = (line: string) => {
        const event = parseTrainerEvent(line);
        if (event?.event === 'eval') results = event;
        this.log().info(event ? describeTrainerEvent(event) : line);
      };
      return runCommand({ command: python.path, args, cwd, env }, { signal: abort.signal, onStdoutLine, onStderrLine: (line) => this.log().info(line) });
    });
    if (outcome.cancelled) return undefined;
    if (outcome.code !== 0 || !results) {
      void vscode.window.showErrorMessage(`vistool: evaluation failed: ${outcome.stderr.trim().split('\n').at(-1) ?? `exit ${outcome.code}`}`, 'Show Log').then((c) => c && this.log().show(true));
      return undefined;
    }
    return results;
  }
}
