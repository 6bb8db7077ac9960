/**
 * The live list of runs behind the Runs view, the status bar and the explorer menus. It
 * re-reads the run directories when files change under the runs folders and on a short poll
 * while a run is running (a trainer on a remote disk may not raise file events), and tells
 * listeners when anything they show changed.
 */
import * as vscode from 'vscode';
import { runsRoots, workspaceRoots } from '../settings.js';
import { type RunOverview, RunCatalog } from './run-catalog.js';

const POLL_RUNNING_MS = 1000;
const POLL_IDLE_MS = 5000;

export class RunsModel implements vscode.Disposable {
  private readonly catalog = new RunCatalog(runsRoots(), workspaceRoots());
  private readonly changed = new vscode.EventEmitter<RunOverview[]>();
  readonly onDidChange = this.changed.event;
  private runs: RunOverview[] = [];
  private fingerprint = '';
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<RunOverview[]> | null = null;
  private again = false;
  private disposed = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor() {
    this.disposables.push(
      this.changed,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('vistool.runsFolder')) {
          this.catalog.setRunsRoots(runsRoots(), workspaceRoots());
          void this.refresh();
        }
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        this.catalog.setRunsRoots(runsRoots(), workspaceRoots());
        void this.refresh();
      }),
    );
    const watcher = vscode.workspace.createFileSystemWatcher('**/{run.json,metrics.jsonl,config.json}');
    const poke = () => void this.refresh();
    this.disposables.push(watcher, watcher.onDidCreate(poke), watcher.onDidChange(poke), watcher.onDidDelete(poke));
    void this.refresh();
  }

  get current(): readonly RunOverview[] {
    return this.runs;
  }

  find(dir: string): RunOverview | undefined {
    return this.runs.find((run) => run.dir === dir);
  }

  /** A run directory outside the runs folders (a config's output_dir). */
  track(dir: string): void {
    this.catalog.addRunDirectory(dir);
  }

  /** Re-reads now; concurrent calls share one read and a call during a read schedules one more. */
  refresh(): Promise<RunOverview[]> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.again = false;
          const runs = await this.catalog.refresh();
          const fingerprint = JSON.stringify(runs);
          this.runs = runs;
          if (fingerprint !== this.fingerprint) {
            this.fingerprint = fingerprint;
            void vscode.commands.executeCommand('setContext', 'vistool.runFolders', runs.map((run) => run.dir));
            this.changed.fire(runs);
          }
        } while (this.again && !this.disposed);
        return this.runs;
      } finally {
        this.refreshing = null;
        this.schedule();
      }
    })();
    return this.refreshing;
  }

  private schedule(): void {
    if (this.disposed) return;
    clearTimeout(this.timer);
    const live = this.runs.some((run) => run.state === 'running' || run.state === 'starting');
    this.timer = setTimeout(() => void this.refresh(), live ? POLL_RUNNING_MS : POLL_IDLE_MS);
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    for (const d of this.disposables.reverse()) d.dispose();
  }
}
