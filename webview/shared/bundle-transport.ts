/**
 * A static bundle page's transport (`vistool view RUN… --bundle OUT/`): the static backend
 * (static-backend.ts) answers in the page; UI state lives in sessionStorage; a run's files are the
 * bundle's copies under `runs/<id>/`.
 *
 * Browser code only: no Node modules, no vscode import.
 */
import type { HostToPanelMessage, PanelToHostMessage } from '../../protocol/panel/messages.js';
import type { PageConfig } from '../../protocol/panel/panels.js';
import { StaticBackend } from './static-backend.js';
import { isDarkTheme, toggleBrowserTheme } from './theme.js';
import { readPageState, runFileUrl, type Transport, writePageState } from './transport.js';

export class BundleTransport implements Transport {
  readonly kind = 'bundle';
  readonly savesLocally = true;
  private readonly listeners: ((message: HostToPanelMessage) => void)[] = [];
  private readonly backend: StaticBackend;
  private readonly stateKey: string;

  constructor(config: PageConfig) {
    // A bundle's pages are files, with no server to set the theme: `?theme=dark` in the link does.
    if (new URLSearchParams(window.location.search).get('theme') === 'dark' && !isDarkTheme()) toggleBrowserTheme();
    const data = window.__vistoolBundle;
    if (!data || data.format !== 'vistool-bundle') throw new Error("this page's bundle data (data/bundle.js) did not load; open the page from the bundle folder it was written to");
    // As a host does: a panel that says it is ready gets the runs' snapshot (the backend's webview/ready).
    this.backend = new StaticBackend(data, (message) => this.deliver(message));
    this.stateKey = `vistool:bundle:${config.panel}:state`;
  }

  post(message: PanelToHostMessage): void {
    void this.backend.handle(message).then((reply) => {
      if (reply) this.deliver(reply);
    });
  }

  cancel(): void {
    // Answers come from memory or a script already loading: nothing to stop.
  }

  onMessage(listener: (message: HostToPanelMessage) => void): void {
    this.listeners.push(listener);
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
    return runFileUrl('runs', runId, relativePath);
  }
}
