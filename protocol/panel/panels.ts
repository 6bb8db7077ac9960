/**
 * The panels themselves: which there are, what a page tells its panel about its host, and the
 * commands every panel sends whatever it shows (ready, error, save a file, cancel a request).
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { hasFields, isString } from '../guards.js';
import { command } from './messages.js';

export type PanelKind = 'dashboard' | 'viewer' | 'playground';

/** Each panel's name, the same in its header, its browser page title and its editor tab. */
export const PANEL_TITLES: Readonly<Record<PanelKind, string>> = { dashboard: 'Training dashboard', viewer: 'Rollout viewer', playground: 'Tool playground' };
export const PANEL_KINDS: readonly PanelKind[] = ['dashboard', 'viewer', 'playground'];

const isPanelKind = (v: unknown): v is PanelKind => PANEL_KINDS.includes(v as PanelKind);

/** What the page tells the panel about its host, as JSON in <script type="application/json" id="vistool-config">. */
export interface PageConfig {
  panel: PanelKind;
  /** browser: `vistool view`; vscode: a webview; bundle: a static copy read from its own data files (`vistool view --bundle`). */
  transport: 'browser' | 'vscode' | 'bundle';
  /** Browser host: the access token (also held in a cookie), sent with every request. */
  token?: string;
  /** VS Code host: a webview URI per run id under which the run directory's files are reachable. */
  resourceBases?: Record<string, string>;
}

/** The panel has loaded and listens: the host sends the current snapshots. */
export const ReadyCommand = command<{ panel: PanelKind }>()('webview/ready', (p): p is { panel: PanelKind } => hasFields(p, { panel: isPanelKind }));

/** An error inside a panel, reported so the host can log it (tests fail on these). */
export const ErrorCommand = command<{ panel: PanelKind; message: string }>()('webview/error', (p): p is { panel: PanelKind; message: string } =>
  hasFields(p, { panel: isPanelKind, message: isString }),
);

/** Save a file the panel made (PNG or CSV export). The VS Code host shows a save dialog; the browser host downloads it locally. */
export const SaveFileCommand = command<{ name: string; mime: string; base64: string }>()('file/save', (p): p is { name: string; mime: string; base64: string } =>
  hasFields(p, { name: isString, mime: isString, base64: isString }),
);

/**
 * The panel no longer wants the answer to its request `id` (a search superseded or cleared): the
 * host stops working on it where it can (a search across steps stops reading step files) and
 * answers it as cancelled. A browser page also cancels by closing the request's connection.
 */
export const CancelRequestCommand = command<{ id: string }>()('request/cancel', (p): p is { id: string } => hasFields(p, { id: isString }));
