/**
 * The panel's view of its host. A panel calls `request`, `command`, `onNotification`,
 * `getState`/`setState`, `resourceUrl` and `saveFile`, and never learns which host it runs in.
 * Three transports (transport.ts) carry the messages of the panel protocol (protocol/panel/):
 *   - VS Code: `acquireVsCodeApi().postMessage` out, `window` 'message' events in, state in
 *     the webview's setState (restored by a WebviewPanelSerializer after a reload);
 *   - browser (`vistool view`): one POST /api/ipc per message (the response is the reply), and
 *     notifications over Server-Sent Events from /api/events; state in sessionStorage;
 *   - a static bundle's page (bundle-transport.ts): its static backend answers in the page.
 * Only navigation and UI state is ever persisted; data always comes back from the host.
 *
 * Browser code only: no Node modules, no vscode import (the VS Code API is a global there).
 */
import {
  CancelRequestCommand,
  type CommandType,
  ErrorCommand,
  type HostToPanelMessage,
  isNotificationMessage,
  isResponseMessage,
  type NotificationType,
  type PanelKind,
  type PanelToHostMessage,
  type RequestParams,
  type RequestResult,
  type RequestType,
  SaveFileCommand,
  type PageConfig,
  type PlaygroundCall,
  type PlaygroundMetadata,
  PlaygroundOpenRequest,
  ShowInPlaygroundCommand,
  ShowInViewerCommand,
  type ShowInViewerParams,
  ShowReportCommand,
} from '../../protocol/panel-protocol.js';
import { cellText, sideText } from './eval-link.js';
import { hasFields, isRecord, isString, optional } from '../../protocol/guards.js';
import { BundleTransport } from './bundle-transport.js';
import { readPageState, runFileUrl, type Transport, writePageState } from './transport.js';

export type { Transport };

export function readPageConfig(doc: Document): PageConfig {
  const element = doc.getElementById('vistool-config');
  let parsed: unknown;
  try {
    parsed = JSON.parse(element?.textContent ?? 'null');
  } catch {
    parsed = null;
  }
  const ok = hasFields(parsed, {
    panel: (v) => v === 'dashboard' || v === 'viewer' || v === 'playground',
    transport: (v) => v === 'browser' || v === 'vscode' || v === 'bundle',
    token: optional(isString),
    resourceBases: optional(isRecord),
  });
  if (!ok) throw new Error('the page has no valid <script type="application/json" id="vistool-config"> block; open the panel through `vistool view` or the VS Code command');
  return parsed as unknown as PageConfig;
}

function newSessionId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare const acquireVsCodeApi: (() => VsCodeApi) | undefined;

export class VsCodeTransport implements Transport {
  readonly kind = 'vscode';
  readonly savesLocally = false;
  private readonly api: VsCodeApi;

  constructor(private readonly config: PageConfig) {
    if (typeof acquireVsCodeApi !== 'function') throw new Error('acquireVsCodeApi is not defined: this page is not running inside a VS Code webview');
    this.api = acquireVsCodeApi();
  }

  post(message: PanelToHostMessage): void {
    this.api.postMessage(message);
  }

  cancel(id: string): void {
    this.api.postMessage({ kind: 'command', id: `${id}-cancel`, method: CancelRequestCommand.method, params: { id } });
  }

  onMessage(listener: (message: HostToPanelMessage) => void): void {
    window.addEventListener('message', (event: MessageEvent) => {
      const data: unknown = event.data;
      if (isResponseMessage(data) || isNotificationMessage(data)) listener(data);
    });
  }

  getState(): unknown {
    return this.api.getState();
  }

  setState(state: unknown): void {
    this.api.setState(state);
  }

  resourceUrl(runId: string, relativePath: string): string {
    const base = this.config.resourceBases?.[runId];
    if (base === undefined) throw new Error(`no resource base for run '${runId}'; the host must list every run in resourceBases`);
    return `${base.replace(/\/$/, '')}/${relativePath.split('/').map(encodeURIComponent).join('/')}`;
  }
}

export class BrowserTransport implements Transport {
  readonly kind = 'browser';
  readonly savesLocally = true;
  private readonly listeners: ((message: HostToPanelMessage) => void)[] = [];
  private events: EventSource | null = null;
  private readonly stateKey: string;
  /** Requests whose answer has not come, so that a cancelled one's connection can be closed (the host then stops working on it). */
  private readonly inFlight = new Map<string, AbortController>();

  constructor(private readonly config: PageConfig) {
    this.stateKey = `vistool:${config.panel}:state`;
  }

  post(message: PanelToHostMessage): void {
    void this.send(message);
  }

  cancel(id: string): void {
    this.inFlight.get(id)?.abort();
  }

  private async send(message: PanelToHostMessage): Promise<void> {
    const connection = new AbortController();
    if (message.kind === 'request') this.inFlight.set(message.id, connection);
    let reply: unknown;
    try {
      const response = await fetch('api/ipc', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.config.token ? { authorization: `Bearer ${this.config.token}` } : {}) },
        body: JSON.stringify(message),
        signal: connection.signal,
      });
      reply = response.status === 204 ? null : await response.json();
    } catch (err) {
      if (connection.signal.aborted) return; // cancelled: the panel has stopped waiting for it
      reply = { kind: 'response', id: message.id, method: message.method, ok: false, error: { message: `the vistool view server did not answer (${(err as Error).message}); is it still running?` } };
    } finally {
      this.inFlight.delete(message.id);
    }
    if (message.kind === 'request' && isResponseMessage(reply)) this.deliver(reply);
  }

  onMessage(listener: (message: HostToPanelMessage) => void): void {
    this.listeners.push(listener);
    if (this.events === null) {
      const query = this.config.token ? `?token=${encodeURIComponent(this.config.token)}` : '';
      this.events = new EventSource(`api/events${query}`);
      this.events.addEventListener('message', (event: MessageEvent<string>) => {
        let data: unknown;
        try {
          data = JSON.parse(event.data);
        } catch {
          return;
        }
        if (isNotificationMessage(data)) this.deliver(data);
      });
    }
  }

  private deliver(message: HostToPanelMessage): void {
    for (const listener of this.listeners) listener(message);
  }

  getState(): unknown {
    return readPageState(this.stateKey);
  }

  setState(state: unknown): void {
    writePageState(this.stateKey, state);
  }

  resourceUrl(runId: string, relativePath: string): string {
    return runFileUrl('files', runId, relativePath);
  }
}

type Pending = { resolve(value: unknown): void; reject(error: Error): void };

export class PanelHost {
  private nextId = 1;
  private readonly pending = new Map<string, Pending>();
  private readonly handlers = new Map<string, ((params: unknown) => void)[]>();

  constructor(
    private readonly transport: Transport,
    readonly panel: PanelKind,
    private readonly config?: PageConfig,
  ) {
    transport.onMessage((message) => this.receive(message));
  }

  /** True in a static bundle (`vistool view --bundle`): the data is what was exported; nothing can be saved or run. */
  get isStatic(): boolean {
    return this.config?.transport === 'bundle';
  }

  /** True inside a VS Code webview (the editor owns the theme, saving goes through the host). */
  get inVsCode(): boolean {
    return this.transport.kind === 'vscode';
  }

  /**
   * Asks the host. When `signal` is aborted before the answer comes, the promise rejects with the
   * signal's reason (an AbortError) and the host is told to stop working on it.
   */
  request<T extends RequestType<unknown, unknown>>(type: T, params: RequestParams<T>, signal?: AbortSignal): Promise<RequestResult<T>> {
    const id = `${this.panel}-${this.nextId++}`;
    return new Promise<RequestResult<T>>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        this.transport.cancel(id);
        reject(signal?.reason);
      };
      const settle = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        resolve: (value) => (settle(), resolve(value as RequestResult<T>)),
        reject: (error) => (settle(), reject(error)),
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.transport.post({ kind: 'request', id, method: type.method, params });
    });
  }

  command<P>(type: CommandType<P>, params: P): void {
    this.transport.post({ kind: 'command', id: `${this.panel}-${this.nextId++}`, method: type.method, params });
  }

  onNotification<P>(type: NotificationType<P>, listener: (params: P) => void): () => void {
    const list = this.handlers.get(type.method) ?? [];
    const wrapped = (params: unknown) => {
      if (type.isParams(params)) listener(params);
    };
    list.push(wrapped);
    this.handlers.set(type.method, list);
    return () => list.splice(list.indexOf(wrapped), 1);
  }

  getState<S>(isState: (value: unknown) => value is S): S | undefined {
    const state = this.transport.getState();
    return isState(state) ? state : undefined;
  }

  setState(state: unknown): void {
    this.transport.setState(state);
  }

  resourceUrl(runId: string, relativePath: string): string {
    return this.transport.resourceUrl(runId, relativePath);
  }

  /**
   * Opens an image file in the tool playground, and replays `calls` on it (a logged call and those
   * before it). VS Code: the host opens or reveals its one playground panel. Browser: the image
   * opens in a new playground session on the server, and this tab goes to the playground page on
   * that session (the back button returns here, whose UI state is kept).
   */
  async showInPlayground(path: string, metadata: PlaygroundMetadata | null, calls: PlaygroundCall[] = []): Promise<void> {
    if (this.transport.kind === 'vscode') {
      this.command(ShowInPlaygroundCommand, { path, metadata, ...(calls.length > 0 ? { calls } : {}) });
      return;
    }
    const session = newSessionId();
    await this.request(PlaygroundOpenRequest, { session, image: { path }, ...(metadata ? { metadata } : {}), ...(calls.length > 0 ? { calls } : {}) });
    const token = this.config?.token;
    window.location.assign(`playground?${token ? `token=${encodeURIComponent(token)}&` : ''}session=${session}`);
  }

  /**
   * Opens the rollout viewer on a run at a step. VS Code: the host opens or reveals its viewer
   * panel and tells it the step. Browser: this page goes to the viewer page with the run and step
   * in its URL (the browser's back button returns to the dashboard, whose UI state is kept).
   */
  showInViewer(params: ShowInViewerParams): void {
    if (this.transport.kind === 'vscode') {
      this.command(ShowInViewerCommand, params);
      return;
    }
    const token = this.config?.token;
    // A bundle's pages are files: viewer.html beside this one.
    const page = this.transport.kind === 'bundle' ? 'viewer.html' : 'viewer';
    const query = new URLSearchParams(token ? { token } : {});
    query.set('run', params.runId);
    const evals = params.evals;
    if (evals) {
      // The viewer's evaluations view of one evaluation (both sides the same), optionally one cell of its answer grid (webview/shared/eval-link.ts).
      const side = sideText({ runId: params.runId, key: evals.key, arm: evals.arm }) ?? '';
      query.set('mode', 'evals');
      query.set('a', side);
      query.set('b', side);
      const cell = evals.gold !== undefined && evals.answer !== undefined ? cellText({ gold: evals.gold, answer: evals.answer }) : null;
      if (cell !== null) query.set('cell', cell);
      if (evals.finding !== undefined) query.set('finding', evals.finding);
    } else {
      query.set('step', String(params.step));
      if (params.finding !== undefined) query.set('finding', params.finding);
    }
    window.location.assign(`${page}?${query.toString()}`);
  }

  /**
   * Opens the report.html a run is read with (RunSummary.report). VS Code: the host opens it in an
   * editor tab. Browser: a new tab on the server's `report/<runId>/` page.
   */
  showReport(runId: string): void {
    if (this.transport.kind === 'vscode') {
      this.command(ShowReportCommand, { runId });
      return;
    }
    if (this.transport.kind === 'bundle') {
      // A bundle keeps the report beside the run's files (env/view/bundle.ts): runs/<run>/report/report.html.
      window.open(this.transport.resourceUrl(runId, 'report/report.html'), '_blank', 'noopener');
      return;
    }
    const token = this.config?.token;
    window.open(`report/${encodeURIComponent(runId)}/${token ? `?token=${encodeURIComponent(token)}` : ''}`, '_blank', 'noopener');
  }

  /** The page's URL query (a browser page, a bundle); null inside VS Code, whose webviews have no address. */
  pageQuery(): URLSearchParams | null {
    return this.transport.kind === 'vscode' ? null : new URLSearchParams(window.location.search);
  }

  /** Puts a new query in the page's URL without loading it, so the address names what is shown (no-op in VS Code). */
  setPageQuery(query: URLSearchParams): void {
    if (this.transport.kind === 'vscode') return;
    const text = query.toString();
    const url = `${window.location.pathname}${text ? `?${text}` : ''}${window.location.hash}`;
    if (url !== `${window.location.pathname}${window.location.search}${window.location.hash}`) window.history.replaceState(window.history.state, '', url);
  }

  /** Saves an export: a browser download here, a save dialog in VS Code. */
  saveFile(name: string, mime: string, base64: string): void {
    if (!this.transport.savesLocally) {
      this.command(SaveFileCommand, { name, mime, base64 });
      return;
    }
    const link = document.createElement('a');
    link.href = `data:${mime};base64,${base64}`;
    link.download = name;
    link.rel = 'noopener';
    document.body.append(link);
    link.click();
    link.remove();
  }

  reportError(error: unknown): void {
    const message = error instanceof Error ? `${error.message}${error.stack ? `\n${error.stack}` : ''}` : String(error);
    this.command(ErrorCommand, { panel: this.panel, message });
  }

  private receive(message: HostToPanelMessage): void {
    if (message.kind === 'response') {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.ok) waiting.resolve(message.result);
      else waiting.reject(new Error(message.error.message));
      return;
    }
    for (const handler of this.handlers.get(message.method) ?? []) handler(message.params);
  }
}

/** The host for this page: VS Code when the page says so, the browser otherwise. */
export function connectHost(doc: Document = document): PanelHost {
  const config = readPageConfig(doc);
  const transport = config.transport === 'vscode' ? new VsCodeTransport(config) : config.transport === 'bundle' ? new BundleTransport(config) : new BrowserTransport(config);
  const host = new PanelHost(transport, config.panel, config);
  window.addEventListener('error', (event) => host.reportError(event.error ?? event.message));
  window.addEventListener('unhandledrejection', (event) => host.reportError(event.reason));
  return host;
}
