/**
 * A veRL run as `main_ppo` writes it while it trains, open in chromium: metrics.jsonl in the shape
 * of veRL's `file` logger (`{"step": N, "data": {...}}`, no time), rollouts/step-N.jsonl as the
 * vistool agent loop writes them live (no advantage, no kept: veRL's trainer decides those later)
 * and a validation file beside them (rollouts/val-step-N.jsonl). The lines are made from the real
 * veRL fixture (test/fixtures/verl-run); verl_bridge/tests/test_live_run.py checks that veRL's own
 * logger and the loop write these shapes. Lines appended while the panels are open appear.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { ensureBundles, launchBrowser, openPage, startView, type ViewSession } from './browser-harness.js';

const REPO = resolve(__dirname, '..', '..');
const FIXTURE = join(REPO, 'test', 'fixtures', 'verl-run');
const RUN = 'verl-live';
const skip = existsSync(join(REPO, 'dist', 'webview', 'dashboard.js')) ? false : 'the panel bundles are missing (npm run build)';
/** What veRL logs, and the trainer's name the dashboard shows it under (protocol/metric-vocabulary.ts). */
const METRIC = 'critic/score/mean';
const SHOWN = 'reward/mean';
const SHOWN_AS: Record<string, string> = { 'critic/score/mean': 'reward/mean', 'num_turns/mean': 'turns/mean', 'timing_s/gen': 'timing/gen_s' };

let browser: Browser;
let view: ViewSession;
let runDir: string;
let records: Record<string, unknown>[];
let data: Record<string, number>;

/** What veRL's FileLogger.log(data, step) writes. */
const verlLine = (step: number, values: Record<string, number>) => JSON.stringify({ step, data: values }) + '\n';

before(async () => {
  if (skip) return;
  runDir = join(await mkdtemp(join(tmpdir(), 'vistool-verl-live-')), RUN);
  await cp(FIXTURE, runDir, { recursive: true });
  const row = JSON.parse((await readFile(join(runDir, 'metrics.jsonl'), 'utf8')).split('\n')[0] ?? '{}') as Record<string, unknown>;
  data = Object.fromEntries(Object.entries(row).filter(([key, value]) => !['step', 'time', 'stage'].includes(key) && typeof value === 'number')) as Record<string, number>;
  await writeFile(join(runDir, 'metrics.jsonl'), verlLine(1, data));
  const fixtureLines = (await readFile(join(runDir, 'rollouts', 'step-000001.jsonl'), 'utf8')).split('\n').filter((l) => l.trim() !== '');
  // As the agent loop writes them: no advantage, no kept.
  records = fixtureLines.map((line) => {
    const { advantage: _advantage, kept: _kept, ...rest } = JSON.parse(line) as Record<string, unknown>;
    return { ...rest, group_uid: `uid-${String(rest.prompt_id)}` };
  });
  await writeFile(join(runDir, 'rollouts', 'step-000001.jsonl'), records.map((r) => JSON.stringify(r) + '\n').join(''));
  await writeFile(join(runDir, 'rollouts', 'val-step-000001.jsonl'), JSON.stringify({ ...records[0], group: 0 }) + '\n');
  await rm(join(runDir, 'run.json'));
  await ensureBundles();
  view = await startView([runDir]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await view?.stop();
});

test("the dashboard draws veRL's file-logger metrics by step, and a step veRL appends while it is open", { skip }, async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await page.locator('[data-testid=metrics-button]').click();
  const options = page.locator('[data-testid=metric-option]');
  await options.first().waitFor();
  assert.deepEqual((await options.evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value))).sort(), Object.keys(data).map((k) => SHOWN_AS[k] ?? k).sort());
  const option = page.locator(`[data-testid=metric-option][value="${SHOWN}"]`);
  if (!(await option.isChecked())) await option.check();
  const points = (n: number) => page.waitForFunction(([m, want]) => document.querySelector(`[data-testid=chart-card][data-metric="${m}"]`)?.getAttribute('data-points') === want, [SHOWN, JSON.stringify({ [RUN]: n })] as const);
  await points(1);
  const next = { ...data, [METRIC]: (data[METRIC] ?? 0) + 0.5 };
  await appendFile(join(runDir, 'metrics.jsonl'), verlLine(2, next));
  await points(2);
  const stats = await page.locator(`[data-testid=chart-card][data-metric="${SHOWN}"] .chart-stats`).innerText();
  const last = Number(/last (\S+) · .* · n=2$/.exec(stats.trim())?.[1]);
  assert.ok(Math.abs(last - (next[METRIC] as number)) < 1e-3, `last ${last}, veRL logged ${next[METRIC]} (${stats})`);
  assert.deepEqual(problems, []);
  assert.deepEqual(view.panelErrors, []);
});

test("the viewer lists the agent loop's step file (not the validation one) in prompt groups, with no advantage, and a new step as it appears", { skip }, async () => {
  const { page, problems } = await openPage(browser, view.url('viewer'));
  await page.locator('[data-testid=rollout]').first().waitFor();
  const steps = () => page.locator('[data-testid=step-select] option').evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value));
  assert.deepEqual(await steps(), ['1']);
  const promptIds = [...new Set(records.map((r) => r.prompt_id as string))];
  assert.deepEqual(await page.locator('[data-testid=group]').evaluateAll((sections) => sections.map((s) => s.getAttribute('data-prompt'))), promptIds);
  assert.deepEqual(await page.locator('[data-testid=rollout-row] .advantage').allInnerTexts(), records.map(() => 'adv –'));
  await writeFile(join(runDir, 'rollouts', 'step-000002.jsonl'), records.map((r) => JSON.stringify({ ...r, step: 2 }) + '\n').join(''));
  await page.waitForFunction(() => Array.from(document.querySelectorAll('[data-testid=step-select] option')).some((o) => (o as HTMLOptionElement).value === '2'));
  assert.deepEqual(await steps(), ['1', '2']);
  assert.deepEqual(problems, []);
});
