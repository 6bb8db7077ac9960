/**
 * The VS Code hosts of the three panels (webview/: dashboard, rollout viewer, tool playground).
 * Each panel is a web app that talks the typed protocol of protocol/panel/; this adapter carries
 * its requests to env/view's PanelBackend (the same backend `vistool view` serves over
 * HTTP), so run reading, rollout indexes and the playground's tool calls have one
 * implementation.
 *
 * Webview practice, as VS Code's webview guide and samples do it: CSP `default-src 'none'` with a script nonce, every file
 * through asWebviewUri within localResourceRoots, UI state in the webview's setState, and a
 * WebviewPanelSerializer so panels come back after a reload (the runs a panel shows are kept in
 * workspaceState). A dashboard is a tab per set of runs: opening another run's dashboard opens a
 * tab beside the open ones, and opening one already shown reveals its tab. The viewer and the
 * playground are one tab each, which follows what is opened. Notifications wait while a panel is hidden or not yet ready, and the newest
 * runs snapshot is sent when it shows again (hidden webviews drop postMessage).
 */
import { writeFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import * as vscode from 'vscode';
import type { PanelBackend } from '../../env/view/panel-backend.js';
import { contentSecurityPolicy, newNonce, panelPage } from '../../env/view/page.js';
import { runName } from '../../env/runs/run-name.js';
import { type CommandHandlers, dispatchCommand } from '../../protocol/panel/handlers.js';
import { isPanelToHostMessage, type NotificationMessage } from '../../protocol/panel/messages.js';
import { PANEL_TITLES, type PanelKind } from '../../protocol/panel/panels.js';
import type { PlaygroundCall, PlaygroundMetadata, ShowInPlaygroundParams } from '../../protocol/panel/playground.js';
import { type EvalCell, type ShowInViewerParams, ViewerShowStepNotification } from '../../protocol/panel/rollouts.js';
import type { FindingName } from '../../protocol/findings.js';
import { RunsChangedNotification } from '../../protocol/panel/runs.js';
import { vistoolLog } from '../output.js';
import { replayPolicySetting } from '../settings.js';
import type { ReportPanels } from './report-panel.js';

export const VIEW_TYPES: Readonly<Record<PanelKind, string>> = { dashboard: 'vistool.dashboard', viewer: 'vistool.viewer', playground: 'vistool.playground' };
const TITLES = PANEL_TITLES;
const STATE_KEY = 'vistool.panels';

interface OpenPanel {
  kind: PanelKind;
  panel: vscode.WebviewPanel;
  backend: PanelBackend;
  runDirs: string[];
  ready: boolean;
  /** Notifications held while the panel is hidden or loading (only the newest runs snapshot matters). */
  held: NotificationMessage[];
  disposables: vscode.Disposable[];
}

/** The backend loads the tool engine (sharp): only when a panel opens, never at activation. */
async function loadPanelBackend(): Promise<typeof PanelBackend> {
  return (await import('../../env/view/panel-backend.js')).PanelBackend;
}

/** The kinds with a tab per set of runs; the others have one tab that follows. */
const TAB_PER_RUNS: ReadonlySet<PanelKind> = new Set(['dashboard']);

export class PanelHosts implements vscode.Disposable {
  /** Every open panel, oldest first. */
  private readonly entries: OpenPanel[] = [];
  /** Per kind, the panel last opened or revealed: the one a command without runs, and the tests, mean. */
  private readonly open = new Map<PanelKind, OpenPanel>();
  /** The run sets saved by the last window, read at the first panel restored. */
  private saved: Partial<Record<PanelKind, unknown>> | null = null;

  static register(context: vscode.ExtensionContext, reports: ReportPanels): PanelHosts {
    const hosts = new PanelHosts(context, reports);
    context.subscriptions.push(hosts);
    for (const kind of Object.keys(VIEW_TYPES) as PanelKind[]) {
      context.subscriptions.push(
        vscode.window.registerWebviewPanelSerializer(VIEW_TYPES[kind], {
          deserializeWebviewPanel: async (panel) => {
            await hosts.adopt(kind, panel, hosts.restoredRuns(kind, panel.title));
          },
        }),
      );
    }
    return hosts;
  }

  private constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly reports: ReportPanels,
  ) {}

  /** The panel of a kind, when one is open (the in-editor tests look at it). */
  panel(kind: PanelKind): vscode.WebviewPanel | undefined {
    return this.open.get(kind)?.panel;
  }

  /** Whether the panel's page loaded and said it is ready (its script ran under the CSP and talked to the host). */
  isReady(kind: PanelKind): boolean {
    return this.open.get(kind)?.ready ?? false;
  }

  /** The backend behind an open panel (the in-editor tests read the playground's session through it). */
  backendOf(kind: PanelKind): PanelBackend | undefined {
    return this.open.get(kind)?.backend;
  }

  runDirsOf(kind: PanelKind): string[] {
    return this.open.get(kind)?.runDirs ?? [];
  }

  /** The runs of every open panel of a kind, oldest first (a dashboard per set of runs). */
  allRunDirsOf(kind: PanelKind): string[][] {
    return this.entries.filter((e) => e.kind === kind).map((e) => e.runDirs);
  }

  /**
   * Shows the panel of `kind` for `runDirs` (the playground ignores them). A dashboard of the same
   * runs is revealed, one of other runs opens a tab of its own (another run's dashboard no longer
   * replaces the tab open); the viewer and the playground are revealed, their runs replaced when
   * they differ.
   */
  async show(kind: PanelKind, runDirs: string[]): Promise<vscode.WebviewPanel> {
    if (TAB_PER_RUNS.has(kind)) {
      const same = this.entries.find((e) => e.kind === kind && sameDirs(e.runDirs, runDirs));
      if (same) {
        this.open.set(kind, same);
        same.panel.reveal(undefined, false);
        return same.panel;
      }
      const panel = vscode.window.createWebviewPanel(VIEW_TYPES[kind], this.title(kind, runDirs), vscode.ViewColumn.Active, { enableScripts: true, localResourceRoots: this.resourceRoots(runDirs) });
      await this.adopt(kind, panel, runDirs);
      return panel;
    }
    const current = this.open.get(kind);
    if (current) {
      if (kind !== 'playground' && !sameDirs(current.runDirs, runDirs)) await this.setRuns(current, runDirs);
      current.panel.reveal(undefined, false);
      return current.panel;
    }
    const panel = vscode.window.createWebviewPanel(VIEW_TYPES[kind], this.title(kind, runDirs), vscode.ViewColumn.Active, { enableScripts: true, localResourceRoots: this.resourceRoots(runDirs) });
    await this.adopt(kind, panel, runDirs);
    return panel;
  }

  /** Opens an image (a path on disk) in the playground, with the metadata given or its sidecar metadata when there is one. */
  async openInPlayground(imagePath: string, metadata?: PlaygroundMetadata, calls: PlaygroundCall[] = []): Promise<void> {
    await this.show('playground', []);
    const entry = this.open.get('playground');
    if (!entry) return;
    try {
      await entry.backend.openInPlayground(imagePath, undefined, metadata, calls);
    } catch (err) {
      void vscode.window.showErrorMessage(`vistool: cannot open ${imagePath} in the playground: ${(err as Error).message}`);
    }
  }

  /**
   * Opens the rollout viewer on a run at a step (a dashboard's click on a chart point). An open
   * viewer that shows the run keeps its runs; otherwise it shows that run alone. The step goes to
   * the page as a notification, held until the page is ready.
   */
  async showViewerAt(runDir: string, step: number, evals?: EvalCell, finding?: FindingName): Promise<void> {
    const dir = resolve(runDir);
    const current = this.open.get('viewer');
    await this.show('viewer', current?.runDirs.some((d) => resolve(d) === dir) ? current.runDirs : [dir]);
    const entry = this.open.get('viewer');
    const run = entry?.backend.runs.find((r) => r.dir === dir);
    if (!entry || !run) return;
    entry.held.push({ kind: 'notification', method: ViewerShowStepNotification.method, params: { runId: run.id, step, ...(evals ? { evals } : {}), ...(finding ? { finding } : {}) } });
    this.flush(entry);
  }

  /** One form for every panel, as the browser pages' titles: `vistool · Dashboard · demo-tools, demo-text`. */
  private title(kind: PanelKind, runDirs: string[]): string {
    if (kind === 'playground' || runDirs.length === 0) return `vistool · ${TITLES[kind]}`;
    return `vistool · ${TITLES[kind]} · ${runDirs.map((d) => runName(d)).join(', ')}`;
  }

  private resourceRoots(runDirs: string[]): vscode.Uri[] {
    return [
      vscode.Uri.joinPath(this.context.extensionUri, 'dist', 'webview'),
      ...(vscode.workspace.workspaceFolders ?? []).map((f) => f.uri),
      ...runDirs.map((d) => vscode.Uri.file(d)),
    ];
  }

  private async backendFor(runDirs: string[]): Promise<PanelBackend> {
    const log = vistoolLog(this.context);
    const Backend = await loadPanelBackend();
    return new Backend({
      runs: [...runDirs],
      roots: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
      log: (level, message) => (level === 'error' ? log.error(message) : level === 'warn' ? log.warn(message) : log.info(message)),
      // Read at every request: a changed setting applies to the next replay without reopening the viewer.
      replayPolicy: replayPolicySetting,
    });
  }

  private async adopt(kind: PanelKind, panel: vscode.WebviewPanel, runDirs: string[]): Promise<void> {
    const entry: OpenPanel = { kind, panel, backend: await this.backendFor(runDirs), runDirs, ready: false, held: [], disposables: [] };
    this.entries.push(entry);
    this.open.set(kind, entry);
    this.remember(kind);
    panel.title = this.title(kind, runDirs);
    panel.iconPath = vscode.Uri.joinPath(this.context.extensionUri, 'extension', 'media', 'vistool.svg');
    panel.webview.options = { enableScripts: true, localResourceRoots: this.resourceRoots(runDirs) };
    this.render(entry);
    entry.disposables.push(
      panel.webview.onDidReceiveMessage((message: unknown) => void this.receive(entry, message)),
      panel.onDidChangeViewState(() => {
        // A hidden webview loses its page (no retainContextWhenHidden); it reloads when shown and says ready again.
        if (!panel.visible) entry.ready = false;
        if (panel.active) this.open.set(kind, entry);
        this.flush(entry);
      }),
      panel.onDidDispose(() => this.close(entry)),
    );
    this.listen(entry);
  }

  private listen(entry: OpenPanel): void {
    const backend = entry.backend;
    const unsubscribe = backend.onNotification((message) => {
      if (entry.backend !== backend) return;
      // A runs snapshot replaces any older one still held: panels want complete snapshots, not history.
      if (message.method === RunsChangedNotification.method) entry.held = entry.held.filter((m) => m.method !== message.method);
      entry.held.push(message);
      this.flush(entry);
    });
    entry.disposables.push({ dispose: unsubscribe });
    void backend.start().catch((err: Error) => vistoolLog(this.context).warn(`panel ${entry.kind}: ${err.message}`));
  }

  private render(entry: OpenPanel): void {
    const webview = entry.panel.webview;
    const nonce = newNonce();
    const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(this.context.extensionUri, 'dist', 'webview', name)).toString();
    const resourceBases = Object.fromEntries(entry.backend.runs.map((run) => [run.id, webview.asWebviewUri(vscode.Uri.file(run.dir)).toString()]));
    entry.ready = false;
    webview.html = panelPage({ panel: entry.kind, nonce, config: { panel: entry.kind, transport: 'vscode', resourceBases }, assetUrl: asset, theme: null, metaCsp: contentSecurityPolicy(nonce, webview.cspSource) });
  }

  /** New runs for an open dashboard or viewer: a fresh backend and page (the page's UI state survives in its setState). */
  private async setRuns(entry: OpenPanel, runDirs: string[]): Promise<void> {
    entry.backend.stop();
    entry.backend = await this.backendFor(runDirs);
    entry.runDirs = runDirs;
    entry.held = [];
    this.remember(entry.kind);
    entry.panel.title = this.title(entry.kind, runDirs);
    entry.panel.webview.options = { enableScripts: true, localResourceRoots: this.resourceRoots(runDirs) };
    this.render(entry);
    this.listen(entry);
  }

  /**
   * What this host does for each command of a panel: the backend's table, with what only an editor
   * does in its place (a save dialog, opening or revealing another panel, a report in a tab).
   */
  private commandsFor(entry: OpenPanel): CommandHandlers {
    const backend = entry.backend.commands;
    return {
      ...backend,
      // The backend answers ready with a runs snapshot; anything held from before goes out too.
      'webview/ready': (params) => {
        entry.ready = true;
        return backend['webview/ready'](params);
      },
      'file/save': (file) => this.save(file),
      'playground/show': (params) => this.playgroundFor(entry, params),
      'viewer/show': (params) => this.viewerFor(entry, params),
      'report/show': ({ runId }) => this.reportFor(entry, runId),
    };
  }

  private async receive(entry: OpenPanel, message: unknown): Promise<void> {
    if (isPanelToHostMessage(message) && message.kind === 'command') {
      if (!(await dispatchCommand(this.commandsFor(entry), message))) vistoolLog(this.context).warn(`panel ${entry.kind} sent an unknown or malformed command '${message.method}'; ignored`);
    } else {
      try {
        const reply = await entry.backend.handle(message);
        if (reply) void entry.panel.webview.postMessage(reply);
      } catch (err) {
        vistoolLog(this.context).warn(`panel ${entry.kind} sent something that is not a panel message: ${(err as Error).message}`);
      }
    }
    this.flush(entry);
  }

  /** An image of a run the sending panel shows (runs/image named it): the playground may open it wherever the run lies. */
  private async playgroundFor(entry: OpenPanel, params: ShowInPlaygroundParams): Promise<void> {
    const path = resolve(params.path);
    const run = entry.backend.runs.find((r) => path.startsWith(`${r.dir}/`));
    if (run) {
      await this.show('playground', []);
      this.open.get('playground')?.backend.allowPlaygroundRoot(run.dir);
    }
    await this.openInPlayground(path, params.metadata ?? undefined, params.calls ?? []);
  }

  /** Only a run the sending panel shows: a panel's message never names a folder to read. */
  private async viewerFor(entry: OpenPanel, params: ShowInViewerParams): Promise<void> {
    const dir = resolve(params.path);
    if (entry.backend.runs.some((run) => run.dir === dir)) await this.showViewerAt(dir, params.step, params.evals, params.finding);
    else vistoolLog(this.context).warn(`panel ${entry.kind} asked for the rollouts of ${dir}, which it does not show; ignored`);
  }

  /** The report of a run the panel shows, found by the backend: a panel never names a file. */
  private async reportFor(entry: OpenPanel, runId: string): Promise<void> {
    const report = entry.backend.runs.find((run) => run.id === runId)?.reportFile;
    if (report) await this.reports.show(report).catch((err: Error) => void vscode.window.showErrorMessage(`vistool: cannot open ${report}: ${err.message}`));
    else vistoolLog(this.context).warn(`panel ${entry.kind} asked for the report of run '${runId}', which has none`);
  }

  private flush(entry: OpenPanel): void {
    if (!entry.ready || !entry.panel.visible) return;
    const held = entry.held;
    entry.held = [];
    for (const message of held) void entry.panel.webview.postMessage(message);
  }

  private async save(file: { name: string; mime: string; base64: string }): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({ defaultUri: folder ? vscode.Uri.joinPath(folder, basename(file.name)) : undefined, saveLabel: 'Save export' });
    if (!target) return;
    await writeFile(target.fsPath, Buffer.from(file.base64, 'base64'));
    void vscode.window.showInformationMessage(`vistool: saved ${target.fsPath}`);
  }

  /** Keeps the runs of every open panel of a kind (a list of run sets per kind), for the serializer after a reload. */
  private remember(kind: PanelKind): void {
    const saved = this.context.workspaceState.get<Partial<Record<PanelKind, unknown>>>(STATE_KEY, {});
    void this.context.workspaceState.update(STATE_KEY, { ...saved, [kind]: this.allRunDirsOf(kind) });
  }

  /**
   * The runs a panel restored after a reload showed: of the kind's remembered run sets not adopted
   * yet, the one its tab's title names, else the first. (State saved before a tab per run set was
   * one list of dirs.)
   */
  private restoredRuns(kind: PanelKind, title: string): string[] {
    // What was saved before this window's panels came back (each adoption saves the open ones again).
    this.saved ??= this.context.workspaceState.get<Partial<Record<PanelKind, unknown>>>(STATE_KEY, {});
    const saved = this.saved[kind];
    const sets = Array.isArray(saved) ? (saved.every((d) => typeof d === 'string') ? [saved as string[]] : (saved.filter((d) => Array.isArray(d)) as string[][])) : [];
    const free = sets.filter((dirs) => !this.entries.some((e) => e.kind === kind && sameDirs(e.runDirs, dirs)));
    return free.find((dirs) => this.title(kind, dirs) === title) ?? free[0] ?? [];
  }

  private close(entry: OpenPanel): void {
    entry.backend.stop();
    for (const d of entry.disposables) d.dispose();
    const at = this.entries.indexOf(entry);
    if (at >= 0) this.entries.splice(at, 1);
    if (this.open.get(entry.kind) === entry) {
      const newest = [...this.entries].reverse().find((e) => e.kind === entry.kind);
      if (newest) this.open.set(entry.kind, newest);
      else this.open.delete(entry.kind);
    }
    // Not remembered here: closing the window disposes every panel, and the reload must bring them back.
  }

  dispose(): void {
    for (const entry of [...this.entries]) entry.panel.dispose();
  }
}

function sameDirs(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
