/**
 * The evaluation summary at the top of the dashboard (issue 44), on a demo-like folder
 * (test/runs/demo-folder.ts: the tools arm right on 3 of 5 held-out tasks after RL, the text arm on
 * 1): each arm's accuracy with its Wilson interval, tools − text with Newcombe's hybrid interval,
 * after RL − after SFT with the paired one, the gold × answer grid whose cells open the viewer on
 * those episodes, in a served page and in a static bundle, at 1100 and 1440 px. Expected intervals
 * were worked in Python from the papers' formulas (not by this code): hybrid 3/5 − 1/5 →
 * [−0.1626, 0.7264]; paired (2 both right, 1 fixed, 1 broken, 1 both wrong) → [−0.4258, 0.4258].
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { writeDemoFolder } from '../runs/demo-folder.js';
import { writeBundle } from '../../env/view/bundle.js';
import { ASSETS, ensureBundles, launchBrowser, openPage, screenshot, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;
let root: string;
let demo: { tools: string; text: string };

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-eval-summary-browser-'));
  [demo] = await Promise.all([writeDemoFolder(join(root, 'demo')), ensureBundles()]);
  browser = await launchBrowser();
  view = await startView([demo.text, demo.tools], [join(root, 'demo')]);
});

after(async () => {
  await browser?.close();
  await view?.stop();
});

async function summaryReady(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=eval-summary] [data-testid=summary-row]').length === 2);
}

const rowText = (page: Page, run: string, testid: string) => page.locator(`[data-testid=summary-row][data-run=${run}] [data-testid=${testid}]`).innerText();

test('the summary opens the dashboard: each arm at its last evaluation, tools − text and after RL − after SFT with their intervals', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await summaryReady(page);
  // Above the charts.
  const [summaryTop, chartsTop] = await Promise.all([page.locator('[data-testid=eval-summary]').boundingBox(), page.locator('.chart-grid').boundingBox()]);
  assert.ok(summaryTop && chartsTop && summaryTop.y < chartsTop.y);
  assert.equal(await rowText(page, 'tools', 'summary-accuracy'), '60.0 % [23.1, 88.2]');
  assert.equal(await rowText(page, 'text', 'summary-accuracy'), '20.0 % [3.6, 62.4]');
  assert.equal(await rowText(page, 'tools', 'summary-call-rate'), '100.0 %');
  const difference = page.locator('[data-testid=summary-tools-minus-text] [data-testid=summary-difference-value]');
  assert.equal(await difference.innerText(), '+40.0 points [−16.3, 72.6]');
  assert.match((await difference.getAttribute('title')) ?? '', /Newcombe's hybrid score interval/);
  const change = page.locator('[data-testid=summary-row][data-run=tools] [data-testid=summary-change][data-from=after_sft] [data-testid=summary-change-value]');
  // The paired table (2 right both times, 1 each way, 1 wrong both): A = 2·1 − 1·1 = 1 ≤ n/2, so method 10's
  // phi is 0 (an independent computation gives ±46.5; the uncorrected phi gave ±42.6).
  assert.equal(await change.innerText(), '+0.0 points [−46.5, 46.5]');
  assert.match((await change.getAttribute('title')) ?? '', /paired/);
  // The grid: gold 34 answered 34 three times, 28 twice.
  const cell = (gold: string, answer: string) => page.locator(`[data-testid=answer-grid][data-run=tools] [data-testid=grid-cell][data-gold="${gold}"][data-answer="${answer}"]`);
  assert.deepEqual([await cell('34', '34').innerText(), await cell('34', '28').innerText()], ['3', '2']);
  assert.deepEqual(problems, []);
});

test('a grid cell opens the viewer on its episodes: gold 34, answered 28', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await summaryReady(page);
  await page.locator('[data-testid=answer-grid][data-run=tools] [data-testid=grid-cell][data-gold="34"][data-answer="28"] button').click();
  await page.waitForURL(/viewer\?/);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-row]').length === 2);
  assert.deepEqual(await page.locator('[data-testid=compare-row]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-prompt'))), ['test-table-000002', 'test-table-000003']);
  assert.match(await page.locator('[data-testid=compare-cell]').innerText(), /gold "34", answered "28"/);
  assert.match(page.url(), /cell=34%7C28|cell=34\|28/);
  // Cleared, every task is back.
  await page.locator('[data-testid=compare-cell-clear]').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-row]').length === 5);
  assert.deepEqual(problems, []);
});

for (const width of [1100, 1440]) {
  test(`at ${width} px the summary is not cut: its tables fit or scroll inside their box`, async () => {
    const { page, problems } = await openPage(browser, view.url('dashboard'), { width, height: 900 });
    await summaryReady(page);
    const boxes = await page.locator('[data-testid=eval-summary] .table-scroll').evaluateAll((all) =>
      all.map((box) => ({ scroll: getComputedStyle(box).overflowX, right: box.getBoundingClientRect().right, viewport: window.innerWidth })),
    );
    assert.ok(boxes.length >= 3);
    for (const box of boxes) {
      assert.equal(box.scroll, 'auto');
      assert.ok(box.right <= box.viewport, JSON.stringify(box));
    }
    await screenshot(page, `eval-summary-dashboard-${width}`);
    assert.deepEqual(problems, []);
  });
}

test('the static bundle shows the same summary from file://, and a cell opens its viewer page', async () => {
  const out = join(root, 'bundle');
  await writeBundle([demo.text, demo.tools], out, ASSETS);
  const { page, problems } = await openPage(browser, `file://${out}/dashboard.html`);
  await summaryReady(page);
  assert.equal(await rowText(page, 'tools', 'summary-accuracy'), '60.0 % [23.1, 88.2]');
  await page.locator('[data-testid=answer-grid][data-run=tools] [data-testid=grid-cell][data-gold="34"][data-answer="34"] button').click();
  await page.waitForURL(/viewer\.html\?/);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-row]').length === 3);
  assert.deepEqual(problems, []);
});

test("two seeds' demo folders group by arm (the runs' folder names): the mean accuracy with a t interval over the seeds", async () => {
  const second = await writeDemoFolder(join(root, 'demo-seed2'));
  const seeds = await startView([demo.tools, second.tools, demo.text, second.text], [root]);
  try {
    const { page, problems } = await openPage(browser, seeds.url('dashboard'));
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=summary-group]').length === 2);
    // The fixture is deterministic: both seeds score 3/5 (tools) and 1/5 (text), so the spread is 0.
    assert.deepEqual(await page.locator('[data-testid=summary-group]').allInnerTexts(), ['tools (2 runs): accuracy 60.0 % ± 0.0 points [60.0, 60.0]', 'text (2 runs): accuracy 20.0 % ± 0.0 points [20.0, 20.0]']);
    assert.deepEqual(problems, []);
  } finally {
    await seeds.stop();
  }
});
