/**
 * The Configs view: every run config (`*.vistool.json`) in the workspace; a click opens it,
 * the inline action starts a run from it. Problems in a config show as a warning icon (the
 * diagnostics themselves are in the Problems panel and the editor).
 */
import { basename, relative } from 'node:path';
import * as vscode from 'vscode';
import { markScanned } from '../view-scan-state.js';

export const CONFIG_GLOB = '**/*.vistool.json';
const EXCLUDE = '{**/node_modules/**,**/.venv/**,**/.git/**}';

export class ConfigsTreeProvider implements vscode.TreeDataProvider<vscode.Uri> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  static register(context: vscode.ExtensionContext): ConfigsTreeProvider {
    const provider = new ConfigsTreeProvider();
    const watcher = vscode.workspace.createFileSystemWatcher(CONFIG_GLOB, false, true, false);
    const refresh = () => provider.refresh();
    context.subscriptions.push(
      provider.changed,
      vscode.window.createTreeView('vistool.configs', { treeDataProvider: provider }),
      watcher,
      watcher.onDidCreate(refresh),
      watcher.onDidDelete(refresh),
      vscode.languages.onDidChangeDiagnostics((e) => e.uris.some((uri) => uri.path.endsWith('.vistool.json')) && refresh()),
    );
    return provider;
  }

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(element?: vscode.Uri): Promise<vscode.Uri[]> {
    if (element) return [];
    const files = await vscode.workspace.findFiles(CONFIG_GLOB, EXCLUDE, 1000);
    markScanned('configs');
    return files.sort((a, b) => a.fsPath.localeCompare(b.fsPath));
  }

  getTreeItem(uri: vscode.Uri): vscode.TreeItem {
    const item = new vscode.TreeItem(basename(uri.fsPath).replace(/\.vistool\.json$/, ''), vscode.TreeItemCollapsibleState.None);
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    item.id = uri.toString();
    item.description = folder ? relative(folder.uri.fsPath, uri.fsPath) : uri.fsPath;
    item.resourceUri = uri;
    const errors = vscode.languages.getDiagnostics(uri).filter((d) => d.severity === vscode.DiagnosticSeverity.Error).length;
    item.iconPath = new vscode.ThemeIcon(errors > 0 ? 'warning' : 'settings-gear', errors > 0 ? new vscode.ThemeColor('problemsErrorIcon.foreground') : undefined);
    item.tooltip = errors > 0 ? `${uri.fsPath}\n${errors} error(s): see the Problems panel` : uri.fsPath;
    item.contextValue = 'config';
    item.command = { command: 'vscode.open', title: 'Open Config', arguments: [uri] };
    return item;
  }
}
