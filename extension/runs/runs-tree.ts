/**
 * The Runs view: one item per run directory with its state icon, step and last reward, a
 * context menu keyed by `run.<state>` (package.json `view/item/context`), and a click that
 * opens the dashboard.
 */
import * as vscode from 'vscode';
import { Commands } from '../command-ids.js';
import type { RunOverview } from './run-catalog.js';
import { runDescription, runTooltip, STATE_ICONS } from './run-labels.js';
import type { RunsModel } from './runs-model.js';
import { markScanned } from '../view-scan-state.js';

const STATE_COLORS: Partial<Record<RunOverview['state'], string>> = {
  failed: 'testing.iconFailed',
  finished: 'testing.iconPassed',
  running: 'charts.blue',
};

export class RunsTreeProvider implements vscode.TreeDataProvider<RunOverview> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  static register(context: vscode.ExtensionContext, model: RunsModel): RunsTreeProvider {
    const provider = new RunsTreeProvider(model);
    const view = vscode.window.createTreeView('vistool.runs', { treeDataProvider: provider, showCollapseAll: false, canSelectMany: true });
    context.subscriptions.push(provider.changed, view, model.onDidChange(() => provider.changed.fire()));
    return provider;
  }

  private constructor(private readonly model: RunsModel) {}

  private scanned = false;

  async getChildren(element?: RunOverview): Promise<RunOverview[]> {
    if (element) return [];
    if (!this.scanned) {
      await this.model.refresh();
      this.scanned = true;
      markScanned('runs');
    }
    return [...this.model.current];
  }

  getTreeItem(run: RunOverview): vscode.TreeItem {
    const item = new vscode.TreeItem(run.name, vscode.TreeItemCollapsibleState.None);
    item.id = run.dir;
    item.description = runDescription(run);
    item.tooltip = runTooltip(run);
    item.resourceUri = vscode.Uri.file(run.dir);
    const color = STATE_COLORS[run.state];
    item.iconPath = new vscode.ThemeIcon(STATE_ICONS[run.state], color ? new vscode.ThemeColor(color) : undefined);
    item.contextValue = `run.${run.state}`;
    item.command = { command: Commands.openDashboard, title: 'Open Dashboard', arguments: [run] };
    return item;
  }
}
