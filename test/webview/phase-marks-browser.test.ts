import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { writeRunDirectory } from '../runs/run-directory.js';
import { ensureBundles, launchBrowser, openPage, screenshot, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;
let twoArms: ViewSession;
const RUN = 'sft-then-rl';
const FIRST_RL_STEP = 11;

before(async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-phase-marks-'));
  const dir = await writeRunDirectory(join(root, RUN), { status: 'finished' });
  // Ten SFT lines, then ten RL lines, as the trainer writes them (stage on every line).
  const lines = Array.from({ length: 20 }, (_, i) => {
    const step = i + 1;
    const rl = step >= FIRST_RL_STEP;
    return JSON.stringify({ step, stage: rl ? 'rl' : 'sft', time: 1_700_000_000 + step * 10, 'sft/loss': 2 - step * 0.05, ...(rl ? { 'reward/mean': 0.2 + step * 0.01 } : {}) });
  });
  await Promise.all([writeFile(join(dir, 'metrics.jsonl'), lines.join('\n') + '\n'), ensureBundles()]);
  // Two arms whose SFT ends a few seconds apart (as the demo's do): on the wall-time axis their RL marks are close.
  const arms = await Promise.all(['text', 'tools'].map(async (name, k) => {
    const arm = await writeRunDirectory(join(root, 'arms', name), { status: 'finished' });
    const rows = Array.from({ length: 20 }, (_, i) => {
      const step = i + 1;
      const rl = step >= FIRST_RL_STEP;
      return JSON.stringify({ step, stage: rl ? 'rl' : 'sft', time: 1_700_000_000 + step * 10 + (rl ? k * 3 : 0), 'sft/loss': 2 - step * 0.05, 'reward/mean': 0.2 + step * 0.01 });
    });
    await writeFile(join(arm, 'metrics.jsonl'), rows.join('\n') + '\n');
    return arm;
  }));
  browser = await launchBrowser();
  view = await startView([dir]);
  twoArms = await startView(arms);
});

after(async () => {
  await browser?.close();
  await view?.stop();
  await twoArms?.stop();
});

test('every chart marks the step where the run moves from SFT to RL, and by wall time on the time axis', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  const loss = page.locator('[data-testid=chart-card][data-metric="sft/loss"]');
  await loss.waitFor();
  await page.waitForFunction(() => document.querySelector('[data-metric="sft/loss"]')?.getAttribute('data-phases')?.includes('"rl"'));
  for (const metric of ['sft/loss', 'reward/mean']) {
    const phases = JSON.parse((await page.locator(`[data-metric="${metric}"]`).getAttribute('data-phases')) ?? '{}') as Record<string, unknown>;
    assert.deepEqual(phases, { [RUN]: [{ x: FIRST_RL_STEP, stage: 'rl' }] }, metric);
  }
  await screenshot(page, 'dashboard-phase-marks');
  await page.locator('[data-testid=x-axis]').selectOption('time');
  // 10 s per step from step 1: RL starts 100 s after the first line.
  await page.waitForFunction(() => document.querySelector('[data-metric="sft/loss"]')?.getAttribute('data-phases')?.includes('"x":100'));
  assert.deepEqual(problems, []);
});

test('stage names never overlap: two runs entering RL seconds apart on the wall-time axis have their names on two rows, and at one step one name', async () => {
  const { page, problems } = await openPage(browser, twoArms.url('dashboard'));
  type Label = { x: number; width: number; text: string; row: number };
  const labels = async (axis: 'step' | 'time'): Promise<Label[]> => {
    await page.waitForFunction((a) => {
      const el = document.querySelector('[data-metric="reward/mean"]') as HTMLElement | null;
      return el?.dataset.phases?.includes(a === 'time' ? '"x":103' : '"x":11') && (el.dataset.phaseLabels ?? '[]') !== '[]';
    }, axis);
    await page.waitForFunction((a) => document.querySelector('[data-metric="reward/mean"] canvas')?.getAttribute('aria-label')?.endsWith(a === 'time' ? 'wall time' : 'step'), axis);
    return JSON.parse((await page.locator('[data-metric="reward/mean"]').getAttribute('data-phase-labels')) ?? '[]') as Label[];
  };
  // By step both enter RL at step 11: one name.
  assert.deepEqual((await labels('step')).map((l) => [l.text, l.row]), [['rl', 0]]);
  await page.locator('[data-testid=x-axis]').selectOption('time');
  await page.waitForFunction(() => JSON.parse((document.querySelector('[data-metric="reward/mean"]') as HTMLElement).dataset.phaseLabels ?? '[]').length === 2);
  const placed = await labels('time');
  assert.equal(placed.length, 2);
  const [a, b] = placed as [Label, Label];
  const overlap = a.row === b.row && a.x < b.x + b.width && b.x < a.x + a.width;
  assert.ok(!overlap, `stage names overlap: ${JSON.stringify(placed)}`);
  assert.deepEqual(placed.map((l) => l.row).sort(), [0, 1]);
  await screenshot(page, 'dashboard-phase-marks-two-arms-time');
  assert.deepEqual(problems, []);
});
