/**
 * The demo's report.html, written by the trainer's own writer (trainer/vistool_trainer/run/
 * demo_report.py through test/fixtures/demo_report_folder.py), read in chromium the ways people
 * read it: in VS Code's report tab under the default dark and light themes (the webview's default
 * styles and body class, on the editor's background), and in a browser with a dark or a light
 * colour scheme. axe-core's colour-contrast rule must find nothing in any of them (issue 44: the
 * report was near-black text on VS Code's #1f1f1f).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../webview/browser-harness.js';

const REPO = resolve(__dirname, '..', '..');
const python = join(REPO, '.venv', 'bin', 'python');
const skip = existsSync(python) ? false : 'no .venv (make venv): the report is written by the trainer';

let browser: Browser;
let report: string;
let axeSource: string;

before(async () => {
  if (skip) return;
  const folder = await mkdtemp(join(tmpdir(), 'vistool-demo-report-'));
  const result = spawnSync(python, [join(REPO, 'test', 'fixtures', 'demo_report_folder.py'), folder], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(REPO, 'trainer') } });
  assert.equal(result.status, 0, result.stderr);
  report = join(folder, 'report.html');
  axeSource = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

/**
 * What VS Code's webview puts around a page (its pre/index.html): the theme's variables on <html>,
 * the theme's class on <body>, default styles before the page's own (the body transparent, in
 * the editor's foreground), and the editor's background behind it all.
 */
const VSCODE_THEMES = {
  'VS Code Dark Modern': { kind: 'vscode-dark', background: '#1f1f1f', foreground: '#cccccc' },
  'VS Code Light Modern': { kind: 'vscode-light', background: '#ffffff', foreground: '#3b3b3b' },
} as const;

async function asVsCodeWebview(page: Page, theme: (typeof VSCODE_THEMES)[keyof typeof VSCODE_THEMES]): Promise<void> {
  await page.evaluate(({ kind, background, foreground }) => {
    document.documentElement.setAttribute('style', `--vscode-editor-background: ${background}; --vscode-editor-foreground: ${foreground}; background-color: ${background};`);
    document.body.classList.add(kind);
    document.body.dataset.vscodeThemeKind = kind;
    const defaults = document.createElement('style');
    defaults.id = '_defaultStyles';
    defaults.textContent = 'body { background-color: transparent; color: var(--vscode-editor-foreground); padding: 0 20px; }';
    document.head.prepend(defaults);
  }, theme);
}

async function contrastViolations(page: Page): Promise<{ target: string; summary: string }[]> {
  await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { nodes: { target: string[]; failureSummary?: string }[] }[] }> } }).axe;
    const { violations } = await axe.run(document, { runOnly: { type: 'rule', values: ['color-contrast'] } });
    return violations.flatMap((v) => v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary ?? '' })));
  });
}

for (const [name, theme] of Object.entries(VSCODE_THEMES)) {
  test(`the demo report is readable in ${name}: no colour-contrast violation on the editor's background`, { skip }, async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, colorScheme: theme.kind === 'vscode-dark' ? 'dark' : 'light' });
    const page = await context.newPage();
    await page.goto(pathToFileURL(report).href);
    await asVsCodeWebview(page, theme);
    const violations = await contrastViolations(page);
    await screenshot(page, `demo-report-${theme.kind}`, true);
    await context.close();
    assert.deepEqual(violations, [], JSON.stringify(violations.slice(0, 5), null, 1));
  });
}

for (const scheme of ['dark', 'light'] as const) {
  test(`the demo report is readable in a browser with a ${scheme} colour scheme`, { skip }, async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, colorScheme: scheme });
    const page = await context.newPage();
    await page.goto(pathToFileURL(report).href);
    const violations = await contrastViolations(page);
    // The page paints its own background: what a reader sees does not depend on the host's.
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await screenshot(page, `demo-report-browser-${scheme}`, true);
    await context.close();
    assert.notEqual(background, 'rgba(0, 0, 0, 0)');
    assert.deepEqual(violations, [], JSON.stringify(violations.slice(0, 5), null, 1));
  });
}

test('the report opens with the evaluation summary: accuracies, the differences with their methods, the off-target calls and each arm\'s answer grid', { skip }, async () => {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  await page.goto(pathToFileURL(report).href);
  assert.equal(await page.locator('h2').first().innerText(), 'Evaluation summary');
  const text = await page.locator('section.eval-summary').innerText();
  assert.match(text, /tools − text, after_rl: \+55\.3 points/);
  assert.match(text, /Newcombe's hybrid score interval/);
  // The fixture's tools arm: one of six calls masked "A" for a question about "D" (test/fixtures/demo_report_folder.py).
  assert.match(text, /1 of 6 calls named another label than the question's/);
  // The grids: the tools arm never answered "high", the text arm answered "low" six times of six.
  const grids = page.locator('table.grid');
  assert.equal(await grids.count(), 2);
  assert.match(await grids.nth(0).innerText(), /answered\t2 \(33%\)\t4 \(67%\)\t0 \(0%\)\t6/);
  assert.match(await grids.nth(1).innerText(), /answered\t6 \(100%\)\t0 \(0%\)\t0 \(0%\)\t6/);
  await context.close();
});
