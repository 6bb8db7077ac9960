/**
 * The Runs view: one item per run directory with its state icon, step and last reward, a
 * context menu keyed by `run.<state>` (package.json `view/item/context`), and a click that
 * opens the dashboard. A folder of runs (the demo's runs/demo with its tools and text arms, a
 * sweep) is one expanded item holding its runs: a click opens them overlaid in one dashboard, and
 * its menu opens its report.html when it has one. Items with a report say so in their context
 * value (`.report`), so the menu offers Open Report only where there is one.
 */
import * as vscode from 'vscode';
import { Commands } from '../command-ids.js';
import type { RunOverview } from './run-catalog.js';
import { runDescription, runTooltip, STATE_ICONS } from './run-labels.js';
import type { RunsModel } from './runs-model.js';
import { markScanned } from '../view-scan-state.js';
import { isRunGroupItem, type RunGroupItem, runsTreeRoots, type RunsTreeElement } from './runs-tree-roots.js';

const STATE_COLORS: Partial<Record<RunOverview['state'], string>> = {
  failed: 'testing.iconFailed',
  finished: 'testing.iconPassed',
  running: 'charts.blue',
};

export class RunsTreeProvider implements vscode.TreeDataProvider<RunsTreeElement> {
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

  async getChildren(element?: RunsTreeElement): Promise<RunsTreeElement[]> {
    if (element) return isRunGroupItem(element) ? element.runs : [];
    if (!this.scanned) {
      await this.model.refresh();
      this.scanned = true;
      markScanned('runs');
    }
    return runsTreeRoots(this.model.current);
  }

  getTreeItem(element: RunsTreeElement): vscode.TreeItem {
    if (isRunGroupItem(element)) return groupItem(element);
    const run = element;
    const item = new vscode.TreeItem(run.name, vscode.TreeItemCollapsibleState.None);
    item.id = run.dir;
    item.description = runDescription(run);
    item.tooltip = runTooltip(run) + (run.report ? `\nreport: ${run.report}` : '');
    item.resourceUri = vscode.Uri.file(run.dir);
    const color = STATE_COLORS[run.state];
    item.iconPath = new vscode.ThemeIcon(STATE_ICONS[run.state], color ? new vscode.ThemeColor(color) : undefined);
    item.contextValue = `run.${run.state}${run.report ? '.report' : ''}`;
    item.command = { command: Commands.openDashboard, title: 'Open Dashboard', arguments: [run] };
    return item;
  }
}

function groupItem(group: RunGroupItem): vscode.TreeItem {
  const item = new vscode.TreeItem(group.name, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `group:${group.dir}`;
  const running = group.runs.filter((run) => run.state === 'running' || run.state === 'starting').length;
  item.description = `${group.runs.length} run${group.runs.length === 1 ? '' : 's'}${running ? ` · ${running} running` : ''}${group.report ? ' · report' : ''}`;
  item.tooltip = [`${group.dir}`, `a folder of runs: ${group.runs.map((run) => run.name).join(', ')}`, 'Click: open them overlaid in the dashboard.', ...(group.report ? [`report: ${group.report}`] : [])].join('\n');
  item.resourceUri = vscode.Uri.file(group.dir);
  item.iconPath = new vscode.ThemeIcon(running ? 'sync~spin' : 'folder-library');
  item.contextValue = `runGroup${group.report ? '.report' : ''}`;
  item.command = { command: Commands.openDashboard, title: 'Open Dashboard', arguments: [group] };
  return item;
}
