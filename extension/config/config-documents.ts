/**
 * Which documents are run configs (`*.vistool.json`) and the folder their relative paths are
 * resolved against: the workspace folder, because Start Run launches the trainer there (the
 * trainer resolves relative paths against its working folder).
 */
import { dirname } from 'node:path';
import * as vscode from 'vscode';

export const RUN_CONFIG_SELECTOR: vscode.DocumentSelector = [
  { language: 'json', pattern: '**/*.vistool.json' },
  { language: 'jsonc', pattern: '**/*.vistool.json' },
];

export function isRunConfig(document: vscode.TextDocument): boolean {
  return document.uri.path.endsWith('.vistool.json');
}

export function configBaseDir(uri: vscode.Uri): string {
  return vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath ?? dirname(uri.fsPath);
}

/** The open workspace folders: a run's data outside them gets a warning. Null with no folder open. */
export function workspaceRoots(): string[] | null {
  const folders = vscode.workspace.workspaceFolders;
  return folders && folders.length > 0 ? folders.map((folder) => folder.uri.fsPath) : null;
}
