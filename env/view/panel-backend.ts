/**
 * The host side of the panel protocol (protocol/panel/), independent of how messages travel: the
 * runs it has open, their watching, and the tables that answer every request (`requests`,
 * panel-requests.ts) and command (`commands`). `handle()` takes any message a panel sent and
 * returns the response to send back (null for commands); `onNotification()` delivers the host's notifications. `vistool view`
 * carries these over HTTP and Server-Sent Events; a VS Code webview host is a small adapter:
 *
 *   panel.webview.onDidReceiveMessage(async (m) => { const r = await backend.handle(m); if (r) void panel.webview.postMessage(r); });
 *   backend.onNotification((n) => visible ? panel.webview.postMessage(n) : (latest = n)); // resend `latest` when shown
 *   panel.webview.html = panelPage({ panel: 'viewer', nonce, theme: null, metaCsp: contentSecurityPolicy(nonce, webview.cspSource),
 *     assetUrl: (f) => webview.asWebviewUri(Uri.joinPath(extensionUri, 'dist', 'webview', f)).toString(),
 *     config: { panel: 'viewer', transport: 'vscode', resourceBases: { [run.id]: webview.asWebviewUri(Uri.file(run.dir)).toString() } } });
 *   // localResourceRoots: dist/webview and every run directory (page.ts).
 *
 * Every message is checked against its declared shape before anything runs. The backend reads
 * run directories and calls the tool engine; it never executes anything a panel or a rollout file
 * contains, and the one thing it writes in a run directory is annotations.jsonl, when a person
 * saves an annotation (env/runs/annotations.ts: append-only, validated against its schema).
 *
 * Big runs: `start()` reads only the first slice of each metrics.jsonl, so a host answers at
 * once; the poll loop reads the rest a slice at a time with the event loop free between slices
 * (a summary carries `metricsLoading` until it is done), and tells the panels at most every
 * LOADING_NOTIFY_MS meanwhile. After that, a change to a run folder is noticed by fs.watch
 * within milliseconds where the platform offers it, and by the poll otherwise.
 */
import { type FSWatcher, watch } from 'node:fs';
import { basename, resolve } from 'node:path';
import { type CommandHandlers, dispatch, dispatchCommand, type RequestHandlers } from '../../protocol/panel/handlers.js';
import { isPanelToHostMessage, type NotificationMessage, type ResponseMessage } from '../../protocol/panel/messages.js';
import { type PlaygroundCall, type PlaygroundMetadata, PlaygroundOpenedNotification, type PlaygroundSnapshot } from '../../protocol/panel/playground.js';
import { RunsChangedNotification, type RunSummary } from '../../protocol/panel/runs.js';
import { PlaygroundSessions } from './playground-sessions.js';
import { replayPolicyState, type ReplayPolicyState } from './replay-policy.js';
import { panelRequestHandlers } from './panel-requests.js';
import { RunSource } from '../runs/run-source.js';

export interface PanelBackendOptions {
  /** Run directories to show, in order. */
  runs: string[];
  /** Folders whose images the playground may open by path (the run directories are always allowed). */
  roots?: string[];
  /** How often run directories are checked for changes, in ms (default 250). */
  pollMs?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /**
   * The policy the viewer's "Replay without the tool's result" asks (replay-policy.ts), or why
   * there is none; a function is asked at every request (an editor setting can change). Default: none.
   */
  replayPolicy?: ReplayPolicyState | (() => ReplayPolicyState);
}

/** What `start()` reads of each metrics.jsonl before it returns: all of a small run, a few ms of a big one. */
const FIRST_READ_BYTES = 4 << 20;
/** What one poll reads of a metrics.jsonl that is still loading (or that grew by a lot at once). */
const POLL_READ_BYTES = 8 << 20;
/** While a run is loading, panels hear of it this often, not after every slice. */
const LOADING_NOTIFY_MS = 300;
/** A burst of file events (one append can be several writes) becomes one poll this long after the first. */
const WATCH_DELAY_MS = 15;

export class PanelBackend {
  readonly runs: RunSource[];
  private readonly playground: PlaygroundSessions;
  private readonly listeners = new Set<(message: NotificationMessage) => void>();
  private readonly pollMs: number;
  private readonly log: NonNullable<PanelBackendOptions['log']>;
  private timer: NodeJS.Timeout | null = null;
  private soon: NodeJS.Timeout | null = null;
  private watchers: FSWatcher[] = [];
  /** Polls run one after another: a watch event during a poll waits for it. */
  private polling: Promise<boolean> = Promise.resolve(false);
  private lastNotified = 0;
  private stopped = false;
  /** Requests being answered, by id, so a panel's request/cancel can stop one. */
  private readonly inFlight = new Map<string, AbortController>();
  /** The answer to every request of the protocol (panel-requests.ts). */
  readonly requests: RequestHandlers;
  /**
   * What this host does for every command. A VS Code host takes these and replaces those it does
   * itself (saving a file, opening another panel or a report), which a browser does in the page.
   */
  readonly commands: CommandHandlers = {
    'webview/ready': () => this.notify(this.runsSnapshot()),
    'request/cancel': ({ id }) => this.inFlight.get(id)?.abort(),
    'webview/error': ({ panel, message }) => this.log('error', `panel ${panel}: ${message}`),
    'file/save': ({ name }) => this.log('warn', `file/save (${name}) is for the VS Code host; a browser saves files itself`),
    'playground/show': ({ path }) => this.log('warn', `playground/show (${path}) is for the VS Code host; a browser opens the playground page itself`),
    'viewer/show': ({ path, step }) => this.log('warn', `viewer/show (${path}, step ${step}) is for the VS Code host; a browser opens the viewer page itself`),
    'report/show': ({ runId }) => this.log('warn', `report/show (${runId}) is for the VS Code host; a browser opens the report page itself`),
  };

  constructor(options: PanelBackendOptions) {
    const used = new Set<string>();
    this.runs = options.runs.map((dir) => {
      const absolute = resolve(dir);
      // Ids are folder names made unique, so URLs and saved UI state stay readable.
      let id = basename(absolute).replace(/[^A-Za-z0-9._-]/g, '_') || 'run';
      for (let n = 2; used.has(id); n++) id = `${basename(absolute)}-${n}`.replace(/[^A-Za-z0-9._-]/g, '_');
      used.add(id);
      return new RunSource(id, absolute);
    });
    this.playground = new PlaygroundSessions([...this.runs.map((r) => r.dir), ...(options.roots ?? []).map((r) => resolve(r))]);
    this.pollMs = options.pollMs ?? 250;
    this.log = options.log ?? (() => {});
    const replay = options.replayPolicy ?? replayPolicyState(undefined);
    this.requests = panelRequestHandlers({ summaries: () => this.summaries(), run: (id) => this.run(id), playground: this.playground, replayPolicy: typeof replay === 'function' ? replay : () => replay });
  }

  /**
   * Reads every run once (of a big metrics.jsonl, its first slice: the poll loop reads the rest),
   * then watches them until `stop()`.
   */
  async start(): Promise<void> {
    await Promise.all(this.runs.map((run) => run.refresh({ metricsBytes: FIRST_READ_BYTES })));
    if (this.stopped) return;
    this.watch();
    this.schedule(this.loading() ? 0 : this.pollMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.soon) clearTimeout(this.soon);
    this.timer = null;
    this.soon = null;
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
    this.listeners.clear();
  }

  summaries(): RunSummary[] {
    return this.runs.map((run) => run.summary());
  }

  /** The notification a newly connected panel needs first: every run's summary. */
  runsSnapshot(): NotificationMessage {
    return { kind: 'notification', method: RunsChangedNotification.method, params: { runs: this.summaries() } };
  }

  onNotification(listener: (message: NotificationMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Opens an image file in the playground for the host (VS Code: "Open in Tool Playground" on an
   * explorer item) and tells the panels; the playground adopts `session`. The path must lie inside
   * a run directory or one of the allowed roots.
   */
  async openInPlayground(path: string, session = 'host-playground', metadata?: PlaygroundMetadata, calls: PlaygroundCall[] = []): Promise<PlaygroundSnapshot> {
    const snapshot = await this.playground.open({ session, image: { path }, ...(metadata ? { metadata } : {}), ...(calls.length > 0 ? { calls } : {}) });
    this.notify({ kind: 'notification', method: PlaygroundOpenedNotification.method, params: { snapshot } });
    return snapshot;
  }

  /** A playground session as the panel would see it (the in-editor tests read the host's session). */
  playgroundSnapshot(session = 'host-playground'): PlaygroundSnapshot {
    return this.playground.snapshot(session);
  }

  /** Lets the playground open images under `dir` by path (VS Code: a run the viewer shows, sending an image here). */
  allowPlaygroundRoot(dir: string): void {
    this.playground.allowRoot(resolve(dir));
  }

  /** Checks the runs now (tests, the poll loop and file events); notifies when any changed. */
  poll(): Promise<boolean> {
    const next = this.polling.then(() => this.pollOnce());
    this.polling = next.catch(() => false);
    return next;
  }

  private async pollOnce(): Promise<boolean> {
    const refreshed = await Promise.all(
      this.runs.map((run) => run.refresh({ metricsBytes: POLL_READ_BYTES }).catch((err: Error) => (this.log('warn', `reading ${run.dir}: ${err.message}`), false))),
    );
    const changed = refreshed.some(Boolean);
    // While a big file loads, a panel redrawing after every slice would spend the load redrawing.
    const now = Date.now();
    if (changed && (!this.loading() || now - this.lastNotified >= LOADING_NOTIFY_MS)) {
      this.lastNotified = now;
      this.notify(this.runsSnapshot());
    }
    return changed;
  }

  private loading(): boolean {
    return this.runs.some((run) => run.metricsPending);
  }

  /** Requests still being answered (a cancelled one leaves at once). */
  get requestsInFlight(): number {
    return this.inFlight.size;
  }

  /**
   * Answers one message. `signal`, when aborted, cancels the request as a request/cancel command
   * for its id does (`vistool view` aborts it when the page closes the request's connection).
   * Request ids are unique per panel, and a VS Code panel has a backend of its own.
   */
  async handle(message: unknown, signal?: AbortSignal): Promise<ResponseMessage | null> {
    if (!isPanelToHostMessage(message)) throw new Error('not a panel message: expected {kind: "command" | "request", id, method, params}');
    if (message.kind === 'command') {
      if (!(await dispatchCommand(this.commands, message))) this.log('warn', `unknown or malformed command '${message.method}' ignored`);
      return null;
    }
    const cancel = new AbortController();
    const cancelled = signal ? AbortSignal.any([signal, cancel.signal]) : cancel.signal;
    this.inFlight.set(message.id, cancel);
    try {
      return { kind: 'response', id: message.id, method: message.method, ok: true, result: await dispatch(this.requests, message, cancelled) };
    } catch (err) {
      const text = cancelled.aborted ? `request ${message.id} (${message.method}) was cancelled` : (err as Error).message;
      return { kind: 'response', id: message.id, method: message.method, ok: false, error: { message: text } };
    } finally {
      if (this.inFlight.get(message.id) === cancel) this.inFlight.delete(message.id);
    }
  }

  private run(id: string): RunSource {
    const run = this.runs.find((r) => r.id === id);
    if (!run) throw new Error(`no run '${id}' is open; open runs: ${this.runs.map((r) => r.id).join(', ') || 'none'}`);
    return run;
  }

  private notify(message: NotificationMessage): void {
    for (const listener of this.listeners) {
      try {
        listener(message);
      } catch (err) {
        this.log('warn', `notification listener failed: ${(err as Error).message}`);
      }
    }
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.poll().finally(() => this.schedule(this.loading() ? 0 : this.pollMs));
    }, delay);
    this.timer.unref();
  }

  /**
   * Polls soon after anything in a run folder changes (inotify and the like), so a metrics line
   * reaches the panels in milliseconds rather than up to a poll interval later. Where watching
   * is not possible (some network file systems, no watch handles left) the poll loop still runs.
   */
  private watch(): void {
    for (const run of this.runs) {
      try {
        const watcher = watch(run.dir, { persistent: false }, () => this.pollSoon());
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // Polling covers this run.
      }
    }
  }

  private pollSoon(): void {
    if (this.stopped || this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = null;
      void this.poll();
    }, WATCH_DELAY_MS);
    this.soon.unref();
  }
}
