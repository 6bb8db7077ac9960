/**
 * What every panel does first: register the @vscode-elements it uses, connect to the host, mount
 * into #app, show a failure as a readable message (and report it to the host), and offer a theme
 * switch when running in a browser, where no editor sets the theme.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-divider/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import { connectHost, type PanelHost } from './host.js';
import { button, h, replaceChildren } from './dom.js';
import { toggleBrowserTheme } from './theme.js';

export function startPanel(mount: (host: PanelHost, root: HTMLElement) => Promise<void>): void {
  const root = document.getElementById('app');
  if (!root) throw new Error('the page has no #app element to mount the panel in');
  let host: PanelHost;
  try {
    host = connectHost();
  } catch (err) {
    replaceChildren(root, h('p', { class: 'banner error', role: 'alert' }, (err as Error).message));
    return;
  }
  mount(host, root).catch((err: unknown) => {
    host.reportError(err);
    root.prepend(h('p', { class: 'banner error', role: 'alert' }, `This panel failed: ${(err as Error).message ?? String(err)}`));
  });
}

/** The panel's title bar: a title, the panel's controls, and (browser only) a theme switch. */
export function panelHeader(title: string, host: PanelHost, ...controls: (Node | null)[]): HTMLElement {
  const themeSwitch = host.inVsCode ? null : button('', () => toggleBrowserTheme(), { icon: 'color-mode', secondary: true, title: 'Switch light / dark theme', testid: 'theme-toggle' });
  return h('header', { class: 'panel-header', 'data-panel': host.panel }, h('div', { class: 'panel-title' }, h('h1', null, title), themeSwitch), h('div', { class: 'panel-controls' }, ...controls));
}
