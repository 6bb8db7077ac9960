/**
 * The status-bar item for the active run: the newest run that is running (or the one the user
 * started last while it lives), with step, reward and tool-call rate; a click opens its
 * dashboard. Hidden when no run is running.
 */
import * as vscode from 'vscode';
import { Commands } from '../command-ids.js';
import type { RunOverview } from './run-catalog.js';
import { runTooltip, statusBarText } from './run-labels.js';
import type { RunsModel } from './runs-model.js';

export class RunStatusBar {
  private preferred: string | null = null;

  static register(context: vscode.ExtensionContext, model: RunsModel): RunStatusBar {
    const item = vscode.window.createStatusBarItem('vistool.activeRun', vscode.StatusBarAlignment.Left, 50);
    item.name = 'vistool: active run';
    const bar = new RunStatusBar(item, model);
    context.subscriptions.push(item, model.onDidChange((runs) => bar.update(runs)));
    bar.update(model.current);
    return bar;
  }

  private constructor(
    private readonly item: vscode.StatusBarItem,
    private readonly model: RunsModel,
  ) {}

  /** Prefer this run while it is live (the one the user just started or reattached to). */
  prefer(dir: string): void {
    this.preferred = dir;
    this.update(this.model.current);
  }

  /** The run the status bar shows, or undefined when it is hidden. */
  activeRun(runs: readonly RunOverview[] = this.model.current): RunOverview | undefined {
    const live = runs.filter((run) => run.state === 'running' || run.state === 'starting');
    return live.find((run) => run.dir === this.preferred) ?? live[0];
  }

  private update(runs: readonly RunOverview[]): void {
    const run = this.activeRun(runs);
    if (!run) {
      this.item.hide();
      return;
    }
    this.item.text = statusBarText(run);
    this.item.tooltip = `${runTooltip(run)}\n\nClick to open the dashboard.`;
    this.item.command = { command: Commands.openDashboard, title: 'Open Dashboard', arguments: [run] };
    this.item.show();
  }
}
