/**
 * The Datasets view: every task folder (a folder with tasks.jsonl) in the workspace, outside
 * the excluded folders, with its task count and kinds. Open Sample shows the first task's image
 * beside its question and answer. The runs folders are excluded by default (a run directory holds
 * copies of its tasks), but the task folders of a folder of runs are shown: the demo's training
 * and held-out splits in runs/demo/data/ are the data sets both of its arms trained on
 * (env/runs/run-groups.ts says what is inside a run).
 */
import { basename, dirname, relative } from 'node:path';
import * as vscode from 'vscode';
import { Commands } from '../command-ids.js';
import { datasetsExclude, runsRoots } from '../settings.js';
import { isInsideRun } from '../../env/runs/run-groups.js';
import { markScanned } from '../view-scan-state.js';
import { datasetDescription, type DatasetSummary, DatasetSummaries } from './dataset-summary.js';

const MAX_DATASETS = 500;
/** What is never searched inside a runs folder (checkpoints hold no tasks, and can be large). */
const RUNS_EXCLUDE = '{**/node_modules/**,**/.git/**,**/checkpoints/**,**/images/**}';

export class DatasetsTreeProvider implements vscode.TreeDataProvider<DatasetSummary> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly summaries = new DatasetSummaries();

  static register(context: vscode.ExtensionContext): DatasetsTreeProvider {
    const provider = new DatasetsTreeProvider();
    const watcher = vscode.workspace.createFileSystemWatcher('**/tasks.jsonl');
    const view = vscode.window.createTreeView('vistool.datasets', { treeDataProvider: provider });
    // Say which folders are left out (runs/** by default: run folders hold copies of their tasks; a folder of runs' data/ is searched).
    const describeExclusions = () => {
      view.description = `not searched: ${datasetsExclude().replace(/^\{|\}$/g, '').split(',').join(' ')} (but a folder of runs' data is)`;
    };
    describeExclusions();
    const refresh = () => provider.refresh();
    context.subscriptions.push(
      provider.changed,
      view,
      watcher,
      watcher.onDidCreate(refresh),
      watcher.onDidChange(refresh),
      watcher.onDidDelete(refresh),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('vistool.datasetsExclude')) return;
        describeExclusions();
        refresh();
      }),
    );
    return provider;
  }

  refresh(): void {
    this.changed.fire();
  }

  async list(): Promise<DatasetSummary[]> {
    const files = await vscode.workspace.findFiles('**/tasks.jsonl', datasetsExclude(), MAX_DATASETS);
    const paths = new Set(files.map((uri) => uri.fsPath));
    for (const root of runsRoots()) {
      const inRuns = await vscode.workspace.findFiles(new vscode.RelativePattern(vscode.Uri.file(root), '**/tasks.jsonl'), RUNS_EXCLUDE, MAX_DATASETS);
      const shared = await Promise.all(inRuns.map(async (uri) => ((await isInsideRun(uri.fsPath, root)) ? null : uri.fsPath)));
      for (const path of shared) if (path !== null) paths.add(path);
    }
    const summaries = await Promise.all([...paths].map((path) => this.summaries.summarize(path).catch(() => null)));
    markScanned('datasets');
    return summaries.filter((s): s is DatasetSummary => s !== null).sort((a, b) => a.folder.localeCompare(b.folder));
  }

  async getChildren(element?: DatasetSummary): Promise<DatasetSummary[]> {
    return element ? [] : this.list();
  }

  getTreeItem(summary: DatasetSummary): vscode.TreeItem {
    const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(summary.folder));
    const label = folder ? relative(folder.uri.fsPath, summary.folder) || basename(summary.folder) : `${basename(dirname(summary.folder))}/${basename(summary.folder)}`;
    const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
    item.id = summary.file;
    item.description = datasetDescription(summary);
    item.tooltip = `${summary.file}\n${datasetDescription(summary)}\nsources: ${Object.entries(summary.sources).map(([s, n]) => `${s} ${n}`).join(', ')}`;
    item.iconPath = new vscode.ThemeIcon('database');
    item.resourceUri = vscode.Uri.file(summary.folder);
    item.contextValue = 'dataset';
    item.command = { command: Commands.openSample, title: 'Open Sample', arguments: [summary] };
    return item;
  }
}
