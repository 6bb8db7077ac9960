/**
 * The veRL environment: which interpreter runs a veRL recipe (`vistool.verlPythonPath`, else the
 * venv Set Up veRL Environment made, else a checkout's or workspace folder's .venv-verl, else
 * python3), the Set Up veRL Environment command that makes one (verl-setup-plan.ts says what it
 * installs), and Check veRL Environment, which imports veRL and the extension's own bridge with
 * that interpreter. The bridge and the trainer package always come from the extension's folder
 * (PYTHONPATH), never from the venv: they match the extension that launches them.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { vistoolLog } from '../output.js';
import { runCommand } from '../processes/command-runner.js';
import { findOnPath } from '../processes/node-executable.js';
import { verlPython } from '../processes/verl-launch.js';
import { bridgeEnv } from './bridge-path.js';
import { venvPython } from './python-environment.js';
import { CPU_TORCH_INDEX, pyprojectDependencies, stepCommandLine } from './trainer-setup-plan.js';
import { parseVerlCheck, planVerlSetup, VERL_CHECK_SCRIPT, type VerlCheckReport } from './verl-setup-plan.js';

export function verlPythonSetting(): string {
  return vscode.workspace.getConfiguration('vistool').get<string>('verlPythonPath', '').trim();
}

export function managedVerlVenvDir(context: vscode.ExtensionContext): string {
  return join(context.globalStorageUri.fsPath, 'verl-venv');
}

/** The interpreter for veRL runs, the converter and the check. */
export function resolveVerlPython(context: vscode.ExtensionContext, folders: string[]): string {
  const configured = verlPythonSetting();
  if (configured !== '') return configured;
  const managed = venvPython(managedVerlVenvDir(context));
  if (existsSync(managed)) return managed;
  return verlPython(folders);
}

/** Check veRL Environment: the report, also written to the log; null when the interpreter printed none. */
export async function checkVerlEnvironment(context: vscode.ExtensionContext, folders: string[], options: { quiet?: boolean } = {}): Promise<VerlCheckReport | null> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showErrorMessage('vistool runs nothing in an untrusted workspace. Trust it first (Workspaces: Manage Workspace Trust).');
    return null;
  }
  const log = vistoolLog(context);
  const python = resolveVerlPython(context, folders);
  log.info(`checking the veRL environment: ${python} (bridge from ${join(context.extensionPath, 'verl_bridge')})`);
  const result = await runCommand({ command: python, args: ['-c', VERL_CHECK_SCRIPT], cwd: context.extensionPath, env: bridgeEnv(context.extensionPath) }).catch((err: Error) => ({ code: null, stdout: '', stderr: err.message, cancelled: false }));
  const report = parseVerlCheck(result.stdout);
  if (!report) {
    log.error(`${python} printed no veRL report (exit ${result.code}): ${result.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    if (!options.quiet) {
      void vscode.window.showErrorMessage(`vistool: ${python} could not run the veRL check; see the log.`, 'Set Up veRL Environment').then(async (c) => c && (await vscode.commands.executeCommand('vistool.setUpVerlEnvironment')));
    }
    return null;
  }
  log.info(`veRL ${report.verl ?? 'missing'}, Ray ${report.ray ?? 'missing'}; bridge ${report.bridge ?? 'not importable'}`);
  for (const problem of report.problems) log.warn(`  ${problem}`);
  if (!options.quiet) {
    if (report.problems.length === 0) void vscode.window.showInformationMessage(`vistool: veRL ${report.verl} ready in ${python}, with the extension's bridge.`);
    else void vscode.window.showWarningMessage(`vistool: the veRL environment is not ready — ${report.problems[0]}`, 'Set Up veRL Environment').then(async (c) => c && (await vscode.commands.executeCommand('vistool.setUpVerlEnvironment')));
  }
  return report;
}

async function baseInterpreter(): Promise<string | undefined> {
  for (const name of ['python3.12', 'python3.11', 'python3.10', 'python3']) {
    const path = findOnPath(name, process.env.PATH);
    if (!path) continue;
    const result = await runCommand({ command: path, args: ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'] }).catch(() => null);
    if (['3.10', '3.11', '3.12'].includes(result?.stdout.trim() ?? '')) return path;
  }
  return undefined;
}

async function hasNvidiaGpu(): Promise<boolean> {
  const smi = findOnPath('nvidia-smi', process.env.PATH);
  if (!smi) return false;
  const result = await runCommand({ command: smi, args: ['-L'] }).catch(() => null);
  return result?.code === 0 && /GPU \d+:/.test(result.stdout);
}

/** Set Up veRL Environment: a venv in the extension's global storage with veRL 0.9.1's dependencies. */
export async function setUpVerlEnvironment(context: vscode.ExtensionContext, folders: string[]): Promise<boolean> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showErrorMessage('vistool installs nothing in an untrusted workspace. Trust it first (Workspaces: Manage Workspace Trust).');
    return false;
  }
  const log = vistoolLog(context);
  const base = await baseInterpreter();
  if (!base) {
    void vscode.window.showErrorMessage('vistool: veRL 0.9.1 needs Python 3.10 to 3.12 and none is on PATH. Install one, then run Set Up veRL Environment again.');
    return false;
  }
  const venvDir = managedVerlVenvDir(context);
  const gpu = await hasNvidiaGpu();
  const dependencies = pyprojectDependencies(await readFile(join(context.extensionPath, 'verl_bridge', 'pyproject.toml'), 'utf8'));
  const steps = planVerlSetup({ basePython: base, venvDir, dependencies, hasNvidiaGpu: gpu, cpuTorchIndex: CPU_TORCH_INDEX });
  log.info(`Set Up veRL Environment in ${venvDir}: ${gpu ? 'nvidia-smi sees a GPU: veRL with vLLM' : 'no NVIDIA GPU: the CPU torch (veRL trains with vLLM on GPUs only; the bridge runs here)'}`);
  for (const step of steps) log.info(`  ${stepCommandLine(step)}`);
  log.show(true);
  const outcome = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'vistool: setting up the veRL environment', cancellable: true },
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
    if (outcome !== 'cancelled') void vscode.window.showErrorMessage(`vistool: veRL set-up ${outcome}`, 'Show Log').then((c) => c && log.show(true));
    return false;
  }
  await vscode.workspace.getConfiguration('vistool').update('verlPythonPath', venvPython(venvDir), vscode.ConfigurationTarget.Global);
  const report = await checkVerlEnvironment(context, folders, { quiet: true });
  void vscode.window.showInformationMessage(`vistool: veRL environment ready in ${venvDir}${report && report.problems.length === 0 ? '' : ' (the check found problems; see the log)'}.`);
  return true;
}
