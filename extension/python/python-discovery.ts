/**
 * Which Python runs the trainer. In order: the `vistool.pythonPath` setting (an explicit choice
 * for this extension wins), the Python extension's active interpreter for the workspace (when
 * that extension is installed), the workspace's `.venv`, and the environment Set Up Trainer
 * Environment made. Select Python Interpreter writes the setting.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { pythonPathSetting, trainerSetupSettings } from '../settings.js';
import { activationVariables, firstUsable, isExecutableFile, type PythonCandidate, SOURCE_LABELS, venvPython } from './python-environment.js';

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(path: string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  };
}

export interface ResolvedPython {
  path: string;
  source: PythonCandidate['source'];
  /** Variables that activate its environment for a child process. */
  env: Record<string, string>;
}

export class PythonDiscovery {
  constructor(private readonly context: vscode.ExtensionContext) {}

  /** Where Set Up Trainer Environment puts its venv. */
  managedVenvDir(): string {
    const configured = trainerSetupSettings().venvFolder;
    return configured !== '' ? configured : join(this.context.globalStorageUri.fsPath, 'trainer-venv');
  }

  private async fromPythonExtension(resource: vscode.Uri | undefined): Promise<string | undefined> {
    const extension = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
    if (!extension) return undefined;
    try {
      const api = extension.isActive ? extension.exports : await extension.activate();
      const active = api.environments?.getActiveEnvironmentPath(resource);
      if (!active) return undefined;
      const resolved = await api.environments?.resolveEnvironment(active.path);
      return resolved?.executable.uri?.fsPath ?? active.path;
    } catch {
      // A Python extension that fails to answer must not keep a run from starting.
      return undefined;
    }
  }

  /** Every candidate in preference order (missing ones included, for Select Python Interpreter). */
  async candidates(resource?: vscode.Uri): Promise<PythonCandidate[]> {
    const folder = (resource && vscode.workspace.getWorkspaceFolder(resource)) ?? vscode.workspace.workspaceFolders?.[0];
    const found: PythonCandidate[] = [];
    const setting = pythonPathSetting();
    if (setting !== '') {
      const expanded = setting.replace(/\$\{workspaceFolder\}/g, folder?.uri.fsPath ?? '');
      found.push({ path: isAbsolute(expanded) || !folder ? expanded : join(folder.uri.fsPath, expanded), source: 'setting' });
    }
    const fromExtension = await this.fromPythonExtension(folder?.uri);
    if (fromExtension) found.push({ path: fromExtension, source: 'python-extension' });
    for (const workspaceFolder of vscode.workspace.workspaceFolders ?? []) found.push({ path: venvPython(join(workspaceFolder.uri.fsPath, '.venv')), source: 'workspace-venv' });
    found.push({ path: venvPython(this.managedVenvDir()), source: 'managed-venv' });
    return found;
  }

  async resolve(resource?: vscode.Uri): Promise<ResolvedPython | undefined> {
    const chosen = firstUsable(await this.candidates(resource));
    return chosen ? { ...chosen, env: activationVariables(chosen.path, process.env) } : undefined;
  }

  /** Select Python Interpreter: pick among what exists, or type a path; writes vistool.pythonPath. */
  async select(): Promise<string | undefined> {
    const candidates = (await this.candidates()).filter((c) => c.source !== 'setting' && existsSync(c.path));
    const items: (vscode.QuickPickItem & { path?: string; clear?: boolean })[] = [
      ...candidates.map((c) => ({ label: c.path, description: SOURCE_LABELS[c.source], path: c.path })),
      { label: '$(folder) Enter interpreter path…', description: 'a python executable, e.g. ~/venvs/trl/bin/python' },
      { label: '$(clear-all) Clear vistool.pythonPath', description: 'use the Python extension, the workspace .venv or the managed environment', clear: true },
    ];
    const picked = await vscode.window.showQuickPick(items, { title: 'vistool: Python interpreter for the trainer', placeHolder: `now: ${(await this.resolve())?.path ?? 'none found'}` });
    if (!picked) return undefined;
    let path = picked.path;
    if (picked.clear) {
      await vscode.workspace.getConfiguration('vistool').update('pythonPath', undefined, vscode.ConfigurationTarget.Workspace);
      return (await this.resolve())?.path;
    }
    if (path === undefined) {
      path = await vscode.window.showInputBox({
        title: 'vistool: Python interpreter path',
        prompt: 'Absolute path of a python executable (with torch, transformers and peft, or set it up with Set Up Trainer Environment)',
        validateInput: (v) => (isExecutableFile(v.trim()) ? null : `${v.trim() || 'that'} is not an executable file`),
      });
      if (!path) return undefined;
      path = path.trim();
    }
    await vscode.workspace.getConfiguration('vistool').update('pythonPath', path, vscode.workspace.workspaceFolders ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
    return path;
  }
}
