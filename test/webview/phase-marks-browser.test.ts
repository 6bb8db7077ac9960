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
  browser = await launchBrowser();
  view = await startView([dir]);
});

after(async () => {
  await browser?.close();
  await view?.stop();
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
