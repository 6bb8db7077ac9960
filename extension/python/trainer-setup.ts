/**
 * Set Up Trainer Environment: makes a venv (in the extension's global storage, or a folder the
 * user picks), installs torch from the CUDA or CPU index, then the trainer's pinned dependencies,
 * with progress and cancel. Every command is logged before it runs, so a person can repeat it
 * by hand; the torch index and version are settings.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { vistoolLog } from '../output.js';
import { runCommand } from '../processes/command-runner.js';
import { findOnPath } from '../processes/node-executable.js';
import { trainerSetupSettings } from '../settings.js';
import type { PythonDiscovery } from './python-discovery.js';
import { venvPython } from './python-environment.js';
import { planTrainerSetup, pyprojectDependencies, stepCommandLine, torchIndexFor } from './trainer-setup-plan.js';
import type { TrainerEnvironment } from './trainer-environment.js';

/** A python3 between 3.11 and 3.12 (trainer/pyproject.toml requires-python) on PATH. */
async function baseInterpreter(): Promise<string | undefined> {
  for (const name of ['python3.12', 'python3.11', 'python3']) {
    const path = findOnPath(name, process.env.PATH);
    if (!path) continue;
    const result = await runCommand({ command: path, args: ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'] }).catch(() => null);
    const version = result?.stdout.trim();
    if (version === '3.11' || version === '3.12') return path;
  }
  return undefined;
}

async function hasNvidiaGpu(): Promise<boolean> {
  const smi = findOnPath('nvidia-smi', process.env.PATH);
  if (!smi) return false;
  const result = await runCommand({ command: smi, args: ['-L'] }).catch(() => null);
  return result?.code === 0 && /GPU \d+:/.test(result.stdout);
}

export async function setUpTrainerEnvironment(context: vscode.ExtensionContext, discovery: PythonDiscovery, environment: TrainerEnvironment): Promise<boolean> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showErrorMessage('vistool installs nothing in an untrusted workspace. Trust it first (Workspaces: Manage Workspace Trust).');
    return false;
  }
  const log = vistoolLog(context);
  const defaultDir = discovery.managedVenvDir();
  const where = await vscode.window.showQuickPick(
    [
      { label: 'Default location', description: defaultDir, dir: defaultDir },
      { label: 'Pick a folder…', description: 'the venv is created inside it as trainer-venv', dir: undefined },
    ],
    { title: 'vistool: where should the trainer environment go?' },
  );
  if (!where) return false;
  let venvDir = where.dir;
  if (!venvDir) {
    const picked = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: 'Create the venv here' });
    if (!picked?.[0]) return false;
    venvDir = join(picked[0].fsPath, 'trainer-venv');
    await vscode.workspace.getConfiguration('vistool.trainerSetup').update('venvFolder', venvDir, vscode.ConfigurationTarget.Global);
  }
  const base = await baseInterpreter();
  if (!base) {
    void vscode.window.showErrorMessage('vistool: the trainer needs Python 3.11 or 3.12 and none is on PATH. Install one (e.g. apt-get install python3.11 python3.11-venv), then run Set Up Trainer Environment again.');
    return false;
  }
  const settings = trainerSetupSettings();
  const gpu = await hasNvidiaGpu();
  const dependencies = pyprojectDependencies(await readFile(join(context.extensionPath, 'trainer', 'pyproject.toml'), 'utf8'));
  const steps = planTrainerSetup({ basePython: base, venvDir, dependencies, torchVersion: settings.torchVersion, torchIndex: torchIndexFor(gpu, settings.torchIndexUrl) });
  log.info(`Set Up Trainer Environment: ${gpu ? 'nvidia-smi sees a GPU: CUDA build of torch' : 'no NVIDIA GPU: CPU build of torch'} (setting vistool.trainerSetup.torchIndexUrl overrides the index)`);
  for (const step of steps) log.info(`  ${stepCommandLine(step)}`);
  log.show(true);

  const outcome = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'vistool: setting up the trainer environment', cancellable: true },
    async (progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      for (const [index, step] of steps.entries()) {
        progress.report({ message: `${step.title} (${index + 1}/${steps.length})`, increment: index === 0 ? 0 : 100 / steps.length });
        log.info(`$ ${stepCommandLine(step)}`);
        const result = await runCommand(step, { signal: abort.signal, onStdoutLine: (l) => log.info(l), onStderrLine: (l) => log.warn(l) }).catch((err: Error) => ({ code: null, cancelled: false, stderr: err.message }));
        if (result.cancelled) return 'cancelled';
        if (result.code !== 0) return `failed: ${stepCommandLine(step)} exited with ${result.code ?? 'a signal'}; ${result.stderr.trim().split('\n').at(-1) ?? ''}`;
      }
      return 'done';
    },
  );
  if (outcome !== 'done') {
    if (outcome !== 'cancelled') void vscode.window.showErrorMessage(`vistool: trainer set-up ${outcome}`, 'Show Log').then((c) => c && log.show(true));
    return false;
  }
  // The new interpreter becomes the trainer's, on this machine (user settings: the venv is machine-specific).
  await vscode.workspace.getConfiguration('vistool').update('pythonPath', venvPython(venvDir), vscode.ConfigurationTarget.Global);
  const python = await discovery.resolve();
  const report = python ? await environment.run(python) : null;
  void vscode.window.showInformationMessage(`vistool: trainer environment ready in ${venvDir}${report ? '' : ' (the check did not run; see the log)'}.`);
  return true;
}
