/**
 * The HTML pages `vistool view` serves: one shell per panel that loads that panel's bundle
 * with a fresh nonce, and an index that links the panels. The Content-Security-Policy allows
 * scripts only with the nonce and every resource only from this server (`default-src 'none'`,
 * nothing remote). The page config travels as JSON in a non-executable script block, with `<`
 * escaped so no value can close the block. Light and dark themes come from media/browser-theme.css,
 * which defines the `--vscode-*` variables a VS Code webview would get from the editor.
 */
import { randomBytes } from 'node:crypto';
import { type PageConfig, PANEL_TITLES, type PanelKind, type RunSummary } from '../../protocol/panel-protocol.js';

export type Theme = 'light' | 'dark';

const TITLES = PANEL_TITLES;

export function newNonce(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * The policy of a panel page. `source` is where the page's own files come from: `'self'` for
 * `vistool view`, the webview's `cspSource` in VS Code. Only the nonced script runs; nothing
 * loads from anywhere else; images may also be data:/blob: (the playground's results, canvases).
 */
export function contentSecurityPolicy(nonce: string | null, source = "'self'"): string {
  return [
    "default-src 'none'",
    nonce ? `script-src 'nonce-${nonce}'` : "script-src 'none'",
    `style-src ${source}`,
    `img-src ${source} data: blob:`,
    `font-src ${source}`,
    // The browser host talks over fetch and EventSource; a VS Code webview only over postMessage.
    source === "'self'" ? "connect-src 'self'" : "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** JSON safe inside <script type="application/json">: `<`, `>` and `&` become \u escapes. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

export interface PanelPageOptions {
  panel: PanelKind;
  nonce: string;
  config: PageConfig;
  /** URL of a built file (panels.css, dashboard.js, ...): `static/<name>` here, an asWebviewUri in VS Code. */
  assetUrl: (name: string) => string;
  /**
   * The browser host's default theme. null inside VS Code: the editor puts its own theme class on
   * the body and defines the --vscode-* variables, so browser-theme.css is not loaded.
   */
  theme: Theme | null;
  /** Put the CSP in a <meta> tag too (VS Code webviews have no response headers). */
  metaCsp?: string;
}

/** The page of one panel; the same shell serves both hosts. */
export function panelPage(options: PanelPageOptions): string {
  const { panel, nonce, config, assetUrl, theme } = options;
  const attr = (text: string) => escapeHtml(text);
  const bodyClass = theme ? `vscode-${theme} panel-${panel}` : `panel-${panel}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
${options.metaCsp ? `<meta http-equiv="Content-Security-Policy" content="${attr(options.metaCsp)}">\n` : ''}<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vistool · ${TITLES[panel]}</title>
${theme ? `<link rel="stylesheet" href="${attr(assetUrl('browser-theme.css'))}">\n` : ''}<link rel="stylesheet" href="${attr(assetUrl('codicon.css'))}" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${attr(assetUrl('panels.css'))}">
<script type="application/json" id="vistool-config">${scriptJson(config)}</script>
</head>
<body class="${bodyClass}"${theme ? ` data-vscode-theme-kind="vscode-${theme}"` : ''}>
<div id="app" aria-live="polite"><p class="loading">Loading ${TITLES[panel].toLowerCase()}…</p></div>
<script nonce="${nonce}" src="${attr(assetUrl(`${panel}.js`))}"></script>
</body>
</html>
`;
}

export function indexPage(runs: RunSummary[], theme: Theme): string {
  const rows = runs
    .map((run) => `<li><strong>${escapeHtml(run.name)}</strong> <span class="muted">${escapeHtml(run.path)} · ${escapeHtml(run.status ?? 'no run.json')}${run.engine ? ` · trained on ${escapeHtml(run.engine)}` : ''} · ${run.metricRows} metric rows · ${run.rolloutSteps} rollout steps</span></li>`)
    .join('\n');
  const links = (Object.keys(TITLES) as PanelKind[]).map((panel) => `<li><a href="${panel}">${TITLES[panel]}</a></li>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>vistool view</title>
<link rel="stylesheet" href="static/browser-theme.css">
<link rel="stylesheet" href="static/panels.css">
</head>
<body class="vscode-${theme} index">
<main class="index-page">
<h1>vistool view</h1>
<h2>Panels</h2>
<ul class="panel-links">${links}</ul>
<h2>Runs</h2>
<ul class="run-list">${rows || '<li class="muted">No run directories were given; the playground still works.</li>'}</ul>
</main>
</body>
</html>
`;
}
