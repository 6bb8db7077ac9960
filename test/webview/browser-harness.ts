/**
 * What the browser tests share: bundles built (with esbuild's API) when dist/webview is missing
 * or older than its sources, a headless Debian chromium driven by playwright-core, `vistool
 * view`'s server on real run directories, and a page wrapper that records every console error,
 * uncaught exception and CSP violation so a test can assert there were none. Screenshots go to
 * out/test-artefacts/webview/ (out/ is gitignored) for a person to look at.
 */
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { type Browser, chromium, type Page } from 'playwright-core';
import { PanelBackend, type PanelBackendOptions } from '../../env/view/panel-backend.js';
import { ViewServer } from '../../env/view/view-server.js';

const REPO = resolve(__dirname, '..', '..');
export const ASSETS = join(REPO, 'dist', 'webview');
export const ARTEFACTS = join(REPO, 'out', 'test-artefacts', 'webview');
const OUTPUTS = ['dashboard.js', 'viewer.js', 'playground.js', 'panels.css', 'browser-theme.css', 'codicon.css', 'codicon.ttf'];

async function newestMtime(path: string): Promise<number> {
  const info = await stat(path).catch(() => null);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(path);
  const times = await Promise.all(entries.map((name) => newestMtime(join(path, name))));
  return Math.max(info.mtimeMs, ...times);
}

/** Builds the panel bundles unless every output exists and is newer than every source. */
export async function ensureBundles(): Promise<void> {
  // The same targets `npm run build` uses (a computed specifier: it is plain JavaScript, not typed).
  const bundles = pathToFileURL(join(REPO, 'webview', 'bundles.mjs')).href;
  const { webviewTargets, webviewSources } = (await import(bundles)) as { webviewTargets: esbuild.BuildOptions[]; webviewSources: string[] };
  const sources = Math.max(...(await Promise.all(webviewSources.map((s) => newestMtime(join(REPO, s))))));
  const outputs = await Promise.all(OUTPUTS.map((name) => stat(join(ASSETS, name)).then((s) => s.mtimeMs, () => 0)));
  if (outputs.every((t) => t > sources)) return;
  // Build into a private folder, then rename into place: a parallel test file never reads half a bundle.
  await mkdir(join(REPO, 'dist'), { recursive: true });
  const staging = await mkdtemp(join(REPO, 'dist', '.webview-build-'));
  try {
    await Promise.all(webviewTargets.map((target) => esbuild.build({ ...target, bundle: true, sourcemap: false, logLevel: 'silent', absWorkingDir: REPO, outdir: staging })));
    await mkdir(ASSETS, { recursive: true });
    for (const name of await readdir(staging)) await rename(join(staging, name), join(ASSETS, name));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

export function launchBrowser(): Promise<Browser> {
  // playwright gives every launch a fresh temporary profile (its own --user-data-dir).
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // The browser's own address-bar popup, a web page of its own in this Chromium, is built for
      // every new window (each browser context): about 0.5 s of CPU per context on this machine,
      // at the moment the page under test loads. No panel host has it (VS Code's webviews have no
      // address bar), so the tests and `npm run bench -- view` leave it out.
      '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup',
    ],
  });
}

export interface ViewSession {
  base: string;
  token: string;
  backend: PanelBackend;
  /** Errors the panels reported to the host (webview/error commands). */
  panelErrors: string[];
  url(panel: string, query?: string): string;
  stop(): Promise<void>;
}

export async function startView(runs: string[], roots: string[] = [], options: Pick<PanelBackendOptions, 'replayPolicy'> = {}): Promise<ViewSession> {
  const panelErrors: string[] = [];
  const backend = new PanelBackend({ runs, roots, pollMs: 200, log: (level, message) => void (level === 'error' && panelErrors.push(message)), ...options });
  await backend.start();
  const token = 'browser-test-token-0123456789abcdef';
  const server = new ViewServer({ backend, assetsDir: ASSETS, token });
  const base = await server.start();
  return {
    base,
    token,
    backend,
    panelErrors,
    url: (panel, query = '') => `${base}/${panel}?token=${token}${query}`,
    stop: async () => {
      backend.stop();
      await server.stop();
    },
  };
}

export interface WatchedPage {
  page: Page;
  /** Console errors, page errors and CSP violations seen so far. */
  problems: string[];
}

export async function openPage(browser: Browser, url: string, viewport = { width: 1400, height: 950 }): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => console.error(`Content Security Policy violation: ${event.violatedDirective} ${event.blockedURI}`));
  });
  await page.goto(url);
  return { page, problems };
}

export async function screenshot(page: Page, name: string, fullPage = false): Promise<void> {
  await mkdir(ARTEFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTEFACTS, `${name}.png`), fullPage });
}

/** How many pixels of a canvas are close to an RGB colour (the tests' way to see that a line was drawn). */
export async function pixelsNear(page: Page, selector: string, rgb: [number, number, number], tolerance = 40): Promise<number> {
  return page.locator(selector).evaluate((canvas: HTMLCanvasElement, [r, g, b, tol]) => {
    const data = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data;
    if (!data) return 0;
    let count = 0;
    for (let i = 0; i < data.length; i += 4) if (Math.abs((data[i] ?? 0) - r) + Math.abs((data[i + 1] ?? 0) - g) + Math.abs((data[i + 2] ?? 0) - b) < tol) count += 1;
    return count;
  }, [rgb[0], rgb[1], rgb[2], tolerance] as const);
}
