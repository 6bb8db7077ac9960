/**
 * The host side of the panel protocol (protocol/panel-protocol.ts), independent of how messages
 * travel. `handle()` takes any message a panel sent and returns the response to send back
 * (null for commands); `onNotification()` delivers the host's notifications. `vistool view`
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
import { existsSync, type FSWatcher, watch } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { formatToolCall } from '../actions/format.js';
import { listTools } from '../tools/registry.js';
import {
  CancelRequestCommand,
  ErrorCommand,
  FormatCallRequest,
  isPanelToHostMessage,
  MetricRowsRequest,
  MetricSeriesRequest,
  type NotificationMessage,
  PlaygroundApplyRequest,
  type PlaygroundCall,
  type PlaygroundMetadata,
  PlaygroundOpenedNotification,
  PlaygroundOpenRequest,
  type PlaygroundSnapshot,
  PlaygroundSnapshotRequest,
  PlaygroundUndoRequest,
  ReadyCommand,
  REQUESTS,
  type ResponseMessage,
  RolloutIndexRequest,
  RolloutRecordRequest,
  RolloutSearchRequest,
  RunImageRequest,
  RunConfigsRequest,
  RolloutStepsRequest,
  RunsChangedNotification,
  RunsListRequest,
  SaveFileCommand,
  ShowInPlaygroundCommand,
  ShowInViewerCommand,
  ShowReportCommand,
  ToolsListRequest,
  type RunSummary,
  EvalSetsRequest,
  EvalCompareRequest,
  EvalRecordRequest,
  TaskTimelineRequest,
  AnnotationsListRequest,
  AnnotationSaveRequest,
  AnnotationDeleteRequest,
  type EvalSide,
} from '../../protocol/panel-protocol.js';
import { PlaygroundSessions } from './playground-sessions.js';
import { RunSource } from '../runs/run-source.js';
import { findTaskRecord } from '../runs/run-task-record.js';
import { readRunConfig } from '../runs/run-config.js';
import { searchRollouts } from '../runs/rollout-search.js';
import { compareEvaluations, taskTimeline } from '../runs/eval-sets.js';
import { withWeights } from '../runs/record-weights.js';
import { deleteAnnotation, readAnnotations, saveAnnotation } from '../runs/annotations.js';

export interface PanelBackendOptions {
  /** Run directories to show, in order. */
  runs: string[];
  /** Folders whose images the playground may open by path (the run directories are always allowed). */
  roots?: string[];
  /** How often run directories are checked for changes, in ms (default 250). */
  pollMs?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
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
      this.command(message);
      return null;
    }
    const cancel = new AbortController();
    const cancelled = signal ? AbortSignal.any([signal, cancel.signal]) : cancel.signal;
    this.inFlight.set(message.id, cancel);
    try {
      return { kind: 'response', id: message.id, method: message.method, ok: true, result: await this.request(message, cancelled) };
    } catch (err) {
      const text = cancelled.aborted ? `request ${message.id} (${message.method}) was cancelled` : (err as Error).message;
      return { kind: 'response', id: message.id, method: message.method, ok: false, error: { message: text } };
    } finally {
      if (this.inFlight.get(message.id) === cancel) this.inFlight.delete(message.id);
    }
  }

  private command(message: { method: string; params: unknown }): void {
    if (ReadyCommand.is(message)) this.notify(this.runsSnapshot());
    else if (CancelRequestCommand.is(message)) this.inFlight.get(message.params.id)?.abort();
    else if (ErrorCommand.is(message)) this.log('error', `panel ${message.params.panel}: ${message.params.message}`);
    else if (SaveFileCommand.is(message)) this.log('warn', `file/save (${message.params.name}) is for the VS Code host; a browser saves files itself`);
    else if (ShowInPlaygroundCommand.is(message)) this.log('warn', `playground/show (${message.params.path}) is for the VS Code host; a browser opens the playground page itself`);
    else if (ShowInViewerCommand.is(message)) this.log('warn', `viewer/show (${message.params.path}, step ${message.params.step}) is for the VS Code host; a browser opens the viewer page itself`);
    else if (ShowReportCommand.is(message)) this.log('warn', `report/show (${message.params.runId}) is for the VS Code host; a browser opens the report page itself`);
    else this.log('warn', `unknown or malformed command '${message.method}' ignored`);
  }

  private async request(message: unknown, signal: AbortSignal): Promise<unknown> {
    if (RunsListRequest.is(message)) return { runs: this.summaries() };
    if (MetricRowsRequest.is(message)) {
      const run = this.run(message.params.runId);
      return { runId: run.id, from: message.params.from, total: run.metrics.rowCount, table: run.metrics.slice(message.params.from, message.params.columns) };
    }
    if (MetricSeriesRequest.is(message)) {
      const { runId, ...query } = message.params;
      const run = this.run(runId);
      return { runId: run.id, ...run.charts.query(query) };
    }
    if (RolloutStepsRequest.is(message)) {
      const run = this.run(message.params.runId);
      return { runId: run.id, steps: await run.stepFiles() };
    }
    if (RolloutIndexRequest.is(message)) {
      const run = this.run(message.params.runId);
      return (await run.stepIndex(message.params.step)).index(run.id);
    }
    if (RolloutRecordRequest.is(message)) {
      const { runId, step, line } = message.params;
      const run = this.run(runId);
      return { runId: run.id, step, line, ...(await withWeights(await (await run.stepIndex(step)).record(line), run.dir)) };
    }
    if (RolloutSearchRequest.is(message)) {
      const { runId, ...query } = message.params;
      const run = this.run(runId);
      return { runId: run.id, ...(await searchRollouts(run.dir, await run.stepFiles(), query, { signal })) };
    }
    if (EvalSetsRequest.is(message)) {
      const run = this.run(message.params.runId);
      return { runId: run.id, sets: await run.evalSets() };
    }
    if (EvalCompareRequest.is(message)) return this.compare(message.params.a, message.params.b);
    if (EvalRecordRequest.is(message)) {
      const { runId, key, line } = message.params;
      const run = this.run(runId);
      return { runId: run.id, key, line, ...(await withWeights(await (await run.evalIndex(key)).index.record(line), run.dir)) };
    }
    if (TaskTimelineRequest.is(message)) {
      const run = this.run(message.params.runId);
      const found = await taskTimeline(run.dir, message.params.promptId, await run.stepFiles(), await run.evalSets(), signal);
      return { runId: run.id, promptId: message.params.promptId, ...found };
    }
    if (AnnotationsListRequest.is(message)) {
      const run = this.run(message.params.runId);
      return { runId: run.id, ...(await readAnnotations(run.dir)) };
    }
    if (AnnotationSaveRequest.is(message)) {
      const { runId, ...input } = message.params;
      const run = this.run(runId);
      return { runId: run.id, annotation: await saveAnnotation(run.dir, input) };
    }
    if (AnnotationDeleteRequest.is(message)) {
      const run = this.run(message.params.runId);
      await deleteAnnotation(run.dir, message.params.id);
      return { runId: run.id, id: message.params.id, deleted: true };
    }
    if (RunImageRequest.is(message)) return this.runImage(message.params);
    if (RunConfigsRequest.is(message)) {
      const runs = message.params.runIds.map((id) => this.run(id));
      return { configs: await Promise.all(runs.map(async (run) => ({ runId: run.id, ...(await readRunConfig(run.dir)) }))) };
    }
    if (ToolsListRequest.is(message)) {
      return { tools: listTools().map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })) };
    }
    if (PlaygroundOpenRequest.is(message)) return this.playground.open(message.params);
    if (PlaygroundApplyRequest.is(message)) return this.playground.apply(message.params.session, message.params.call);
    if (PlaygroundUndoRequest.is(message)) return this.playground.undo(message.params.session);
    if (PlaygroundSnapshotRequest.is(message)) return this.playground.snapshot(message.params.session);
    if (FormatCallRequest.is(message)) {
      const { calls, format } = message.params;
      if (format === 'json') return { text: JSON.stringify(calls.length === 1 ? calls[0] : calls, null, 2) };
      return { text: calls.map((call) => formatToolCall(call, format)).join('\n') };
    }
    const method = (message as { method: string }).method;
    const known = REQUESTS.find((r) => r.method === method);
    throw new Error(known ? `malformed params for request '${method}'` : `unknown request '${method}'; known requests: ${REQUESTS.map((r) => r.method).join(', ')}`);
  }

  /** Two kept evaluations task by task (eval-sets.ts); each side's index is read (and grown) first. */
  private async compare(a: EvalSide, b: EvalSide): Promise<unknown> {
    const read = async (side: EvalSide) => {
      const run = this.run(side.runId);
      const { set, index } = await run.evalIndex(side.key);
      return { side: { ...side, runId: run.id, label: set.label, step: set.step }, rollouts: (await index.index(run.id)).rollouts };
    };
    const [left, right] = await Promise.all([read(a), read(b)]);
    return { a: left.side, b: right.side, ...compareEvaluations(left.rollouts, a.arm, right.rollouts, b.arm) };
  }

  /** A rollout image's file, and the task record's metadata when it is the task's own image. */
  private async runImage({ runId, ref, promptId }: { runId: string; ref: string; promptId: string | null }): Promise<{ path: string; metadata: PlaygroundMetadata | null }> {
    const run = this.run(runId);
    // Image refs are content hashes: anything else could name a file outside images/.
    if (!/^[0-9a-f]{8,128}$/i.test(ref)) throw new Error(`'${ref}' is not an image ref (a content hash)`);
    const path = join(run.dir, 'images', `${ref}.png`);
    if (!existsSync(path)) throw new Error(`run '${run.id}' has no image ${ref} (looked for ${path})`);
    if (promptId === null) return { path, metadata: null };
    const found = await findTaskRecord(run.dir, promptId);
    return { path, metadata: found ? { name: `${promptId}.json`, text: found.line, source: `task ${promptId} in ${found.file}` } : null };
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
