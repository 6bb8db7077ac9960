/**
 * The dashboard's charts under the pointer and the axes (issue 44): a click picks the curve under
 * the pointer, not the first run drawn at that step; a zoomed axis is labelled with round ticks; a
 * chart's y axis can be switched to a log scale, remembered in the panel's state. Two arms, as the demo leaves them (`text` and
 * `tools`, text listed first), with reward curves far apart, through the real `vistool view`
 * server in chromium.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { metricRow, writeRunDirectory } from '../runs/run-directory.js';
import { ensureBundles, launchBrowser, openPage, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;
let root: string;

/** The light theme's first two series colours (--vscode-charts-blue, --vscode-charts-orange). */
const BLUE: [number, number, number] = [0x1a, 0x85, 0xff];
const ORANGE: [number, number, number] = [0xd1, 0x86, 0x16];

/** A run of 30 RL steps whose reward sits at `level` (the text arm low, the tools arm high). */
async function writeArm(name: string, level: number): Promise<string> {
  const dir = await writeRunDirectory(join(root, name), { metricRows: 0, rolloutSteps: [10, 20], status: 'finished' });
  // actor/kl spans four decades from 1e-4, after a first step of 0 (what a log axis cannot draw).
  const rows = Array.from({ length: 30 }, (_, i) => ({ ...metricRow(i + 1, 'healthy'), 'reward/mean': level + 0.01 * Math.sin(i), 'actor/kl': i === 0 ? 0 : level * 1e-3 * 10 ** (i / 7) }));
  await appendFile(join(dir, 'metrics.jsonl'), rows.map((row) => JSON.stringify(row) + '\n').join(''));
  return dir;
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-chart-interaction-'));
  const [text, tools] = await Promise.all([writeArm('text', 0.2), writeArm('tools', 0.8), ensureBundles()]);
  browser = await launchBrowser();
  view = await startView([text, tools]);
});

after(async () => {
  await browser?.close();
  await view?.stop();
});

async function chartReady(page: Page, metric: string): Promise<void> {
  await page.waitForFunction((m) => document.querySelector(`[data-metric="${m}"]`)?.getAttribute('data-points')?.includes('"tools":30'), metric);
  await page.waitForFunction((m) => Number(document.querySelector(`[data-metric="${m}"]`)?.getAttribute('data-draws')) > 0, metric);
}

/**
 * Where a run's line crosses a column of the chart, in page coordinates: the middle of the
 * pixels of its colour in that column of the canvas.
 */
async function lineAt(page: Page, metric: string, fraction: number, rgb: [number, number, number]): Promise<{ x: number; y: number }> {
  const canvas = page.locator(`[data-metric="${metric}"] canvas`);
  const box = await canvas.boundingBox();
  assert.ok(box);
  const rows = await canvas.evaluate((c: HTMLCanvasElement, [fx, r, g, b]) => {
    const scale = c.width / c.clientWidth;
    const column = Math.round(c.width * fx);
    const data = c.getContext('2d')?.getImageData(column, 0, 1, c.height).data;
    const hits: number[] = [];
    for (let y = 0; data && y < c.height; y += 1) if (Math.abs((data[y * 4] ?? 0) - r) + Math.abs((data[y * 4 + 1] ?? 0) - g) + Math.abs((data[y * 4 + 2] ?? 0) - b) < 40) hits.push(y / scale);
    return hits;
  }, [fraction, rgb[0], rgb[1], rgb[2]] as const);
  assert.ok(rows.length > 0, `a line of colour ${rgb.join(',')} crosses ${metric} at ${fraction}`);
  return { x: box.x + box.width * fraction, y: box.y + rows[Math.floor(rows.length / 2)]! };
}

test('a click on a curve offers that curve\'s run: the tools arm\'s line above the text arm\'s opens the tools arm\'s rollouts', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await chartReady(page, 'reward/mean');
  const card = page.locator('[data-metric="reward/mean"]');
  // The arms' own colours (webview/shared/run-colours.ts): tools blue, text orange.
  for (const [run, colour] of [['tools', BLUE], ['text', ORANGE]] as const) {
    const at = await lineAt(page, 'reward/mean', 0.5, colour);
    await page.mouse.click(at.x, at.y);
    await page.waitForFunction(() => !(document.querySelector('[data-metric="reward/mean"] [data-testid=chart-pick]') as HTMLElement | null)?.hidden);
    const pick = card.locator('[data-testid=chart-pick] [data-run]');
    assert.match(await pick.innerText(), new RegExp(`^${run} · step \\d+`), `clicking the ${run} arm's line`);
    await card.locator('[data-testid=dismiss-pick]').click();
  }
  assert.deepEqual(problems, []);
});

test('after a drag-zoom the x axis is labelled with round steps, not the raw ends of the drag', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await chartReady(page, 'reward/mean');
  const box = await page.locator('[data-metric="reward/mean"] .chart-box').boundingBox();
  assert.ok(box);
  const y = box.y + box.height * 0.6;
  await page.mouse.move(box.x + box.width * 0.23, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.45, y, { steps: 5 });
  await page.mouse.move(box.x + box.width * 0.61, y, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => (document.querySelector('[data-metric="reward/mean"]') as HTMLElement | null)?.dataset.zoom?.startsWith('{') && JSON.parse((document.querySelector('[data-metric="reward/mean"]') as HTMLElement).dataset.ticks ?? '{"x":[]}').x.length > 0 && (document.querySelector('[data-metric="reward/mean"]') as HTMLElement).dataset.xRange?.includes('.'));
  const zoom = JSON.parse((await page.locator('[data-metric="reward/mean"]').getAttribute('data-zoom')) ?? '{}') as { min: number; max: number };
  assert.ok(!Number.isInteger(zoom.min) || !Number.isInteger(zoom.max), `the drag ended off a whole step: ${JSON.stringify(zoom)}`);
  const ticks = JSON.parse((await page.locator('[data-metric="reward/mean"]').getAttribute('data-ticks')) ?? '{}') as { x: string[] };
  assert.ok(ticks.x.length >= 2, JSON.stringify(ticks));
  for (const label of ticks.x) assert.match(label, /^\d+$/, `x tick labels ${JSON.stringify(ticks.x)}`);
  assert.deepEqual(problems, []);
});

test('a chart\'s "log y" draws it on a log scale with ticks at powers of ten, says which values ≤ 0 it left out, and is remembered after a reload', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await chartReady(page, 'actor/kl');
  const card = page.locator('[data-metric="actor/kl"]');
  assert.equal(await card.getAttribute('data-y-scale'), 'linear');
  await card.locator('[data-testid=log-y]').click();
  const logTicks = async (p: Page) => {
    await p.waitForFunction(() => {
      const el = document.querySelector('[data-metric="actor/kl"]') as HTMLElement | null;
      return el?.dataset.yScale === 'logarithmic' && JSON.parse(el.dataset.ticks ?? '{"y":[]}').y.every((l: string) => /^(0\.0*1|1|10*|1e[-+]\d+)$/.test(l));
    });
    return JSON.parse((await p.locator('[data-metric="actor/kl"]').getAttribute('data-ticks')) ?? '{}') as { y: string[] };
  };
  // From 1e-4 (the text arm's second step) to about 1.1 (the tools arm's last): every power of ten between.
  const ticks = await logTicks(page);
  for (const power of ['0.001', '0.01', '0.1', '1']) assert.ok(ticks.y.includes(power), `y ticks ${JSON.stringify(ticks.y)}`);
  assert.equal(await card.locator('[data-testid=log-y]').getAttribute('aria-pressed'), 'true');
  assert.match(await card.locator('[data-testid=log-note]').innerText(), /^Log scale: not drawn, as ≤ 0: text 1 point · tools 1 point\.$/);
  // The other charts stay linear; the choice survives a reload.
  assert.equal(await page.locator('[data-metric="reward/mean"]').getAttribute('data-y-scale'), 'linear');
  await page.reload();
  await chartReady(page, 'actor/kl');
  await logTicks(page);
  assert.equal(await page.locator('[data-metric="reward/mean"]').getAttribute('data-y-scale'), 'linear');
  // And back to linear: every point drawn, no note.
  await card.locator('[data-testid=log-y]').click();
  await page.waitForFunction(() => (document.querySelector('[data-metric="actor/kl"]') as HTMLElement | null)?.dataset.yScale === 'linear');
  await page.waitForFunction(() => (document.querySelector('[data-metric="actor/kl"] [data-testid=log-note]') as HTMLElement | null)?.hidden === true);
  assert.deepEqual(problems, []);
});

test('the config diff shows what ran beside what was asked: sft.steps 650 and 1500, both of which ran 650 SFT steps', async () => {
  // Two arms as the issue found them: the text arm's config asked 1500 SFT steps, yet both ran 650 (then 30 RL steps).
  const dirs = await Promise.all([['a-tools', 650], ['b-text', 1500]].map(async ([name, asked]) => {
    const dir = await writeRunDirectory(join(root, 'budgets', String(name)), { status: 'finished' });
    await writeFile(join(dir, 'config.json'), JSON.stringify({ name, sft: { enabled: true, steps: asked }, rl: { steps: 30 } }));
    const rows = [...Array.from({ length: 650 }, (_, i) => ({ step: i + 1, stage: 'sft', 'sft/step': i + 1, 'sft/loss': 1 / (i + 1) })), ...Array.from({ length: 30 }, (_, i) => ({ ...metricRow(651 + i, 'healthy'), 'rl/step': i + 1 }))];
    await writeFile(join(dir, 'metrics.jsonl'), rows.map((row) => JSON.stringify(row) + '\n').join(''));
    // The text arm finished and wrote its final state (trainer/.../train.py): its "ran" is run.json's; the other's, its metrics'.
    if (name === 'b-text') await writeFile(join(dir, 'run.json'), JSON.stringify({ status: 'finished', state: { global_step: 680, sft_step: 650, rl_step: 30, stage: 'done' } }));
    return dir;
  }));
  const budgets = await startView(dirs);
  try {
    const { page, problems } = await openPage(browser, budgets.url('dashboard'));
    const row = page.locator('[data-testid=config-diff-table] tr[data-key="sft.steps"]');
    await row.waitFor();
    assert.deepEqual(await row.locator('td').allInnerTexts(), ['650 · ran 650', '1500 · ran 650']);
    assert.deepEqual(await row.locator('[data-testid=config-ran]').evaluateAll((notes) => notes.map((n) => n.getAttribute('data-from'))), ['metrics', 'run.json']);
    assert.deepEqual(problems, []);
  } finally {
    await budgets.stop();
  }
});
