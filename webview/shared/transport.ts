/**
 * How a panel's messages travel, whatever the host: a VS Code webview, `vistool view` over HTTP,
 * or a static bundle's page answering itself. A transport knows nothing about methods or types;
 * host.ts's PanelHost gives the panel the typed protocol on top of one.
 *
 * Browser code only: no Node modules, no vscode import.
 */
import type { HostToPanelMessage, PanelToHostMessage } from '../../protocol/panel/messages.js';

export interface Transport {
  readonly kind: 'vscode' | 'browser' | 'bundle';
  post(message: PanelToHostMessage): void;
  /** Tells the host that the request `id` posted before is no longer wanted. */
  cancel(id: string): void;
  onMessage(listener: (message: HostToPanelMessage) => void): void;
  getState(): unknown;
  setState(state: unknown): void;
  resourceUrl(runId: string, relativePath: string): string;
  /** True when the panel itself can save a file (browser downloads); false: ask the host. */
  readonly savesLocally: boolean;
}

/** A browser page's panel state, kept in the tab's sessionStorage so a reload keeps the panel as it was. */
export function readPageState(key: string): unknown {
  try {
    const text = sessionStorage.getItem(key);
    return text === null ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function writePageState(key: string, state: unknown): void {
  try {
    sessionStorage.setItem(key, JSON.stringify(state));
  } catch {
    // Storage full or disabled: UI state is a convenience, the panel works without it.
  }
}

/** A run file's URL below `prefix` (`files` served, `runs` in a bundle), each path part encoded. */
export function runFileUrl(prefix: string, runId: string, relativePath: string): string {
  return `${prefix}/${encodeURIComponent(runId)}/${relativePath.split('/').map(encodeURIComponent).join('/')}`;
}
