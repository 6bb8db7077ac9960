/**
 * A run directory written by vistool's veRL integration (test/fixtures/verl-run, cut from a real
 * `python -m vistool_verl smoke` run), opened through the real `vistool view` CLI in chromium:
 * the rollout viewer lists its rollouts, shows a tool call's images (each one loads from the
 * run's images/) and the reward and advantage its JSONL holds; the dashboard offers and draws
 * its veRL metric names. Expected values are read from the fixture's files, not from the viewer.
 *
 * The panels do not show run.json's `engine` or `verl_version` anywhere (RunSummary carries
 * status, times and counts only), so this test cannot check that the run reads as veRL's.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser, Locator, Page } from 'playwright-core';
import { ensureBundles, launchBrowser, openPage, screenshot } from './browser-harness.js';

const REPO = resolve(__dirname, '..', '..');
const FIXTURE = join(REPO, 'test', 'fixtures', 'verl-run');
const CLI = join(REPO, 'bin', 'vistool.js');
/** The run's id and name in the panels: its folder name. */
const RUN = 'verl-run';
const skip = existsSync(join(REPO, 'dist', 'cli.js')) ? false : 'dist/cli.js is missing (npm run build): this test runs the built `vistool view`';

interface Call {
  name: string;
  image_in?: string | null;
  image_out?: string | null;
}
interface Turn {
  role: string;
  images?: string[];
  calls?: Call[];
}
interface Rollout {
  prompt_id: string;
  task: { question: string; image: string };
  turns: Turn[];
  reward: number;
  advantage: number;
  correct: boolean;
  kept: boolean;
}
interface Listening {
  event: string;
  url: string;
  dashboard: string;
  viewer: string;
}

let browser: Browser;
let child: ChildProcess | undefined;
let listening: Listening;
let runDir: string;
let rollouts: Rollout[];
let runJson: { engine: string };
let metricsRow: Record<string, unknown>;
/** Lines `vistool view` logged at level error (its panel backend's failures). */
const serverErrors: string[] = [];

before(async () => {
  if (skip) return;
  // A copy: nothing the test or the server does can touch the committed fixture.
  runDir = join(await mkdtemp(join(tmpdir(), 'vistool-verl-run-browser-')), RUN);
  await cp(FIXTURE, runDir, { recursive: true });
  rollouts = (await readFile(join(runDir, 'rollouts', 'step-000001.jsonl'), 'utf8')).split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Rollout);
  runJson = JSON.parse(await readFile(join(runDir, 'run.json'), 'utf8')) as { engine: string };
  metricsRow = JSON.parse((await readFile(join(runDir, 'metrics.jsonl'), 'utf8')).split('\n')[0] ?? '{}') as Record<string, unknown>;
  await ensureBundles();
  child = spawn(process.execPath, [CLI, 'view', runDir], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  const errors = createInterface({ input: child.stderr as NodeJS.ReadableStream });
  errors.on('line', (line) => {
    if (/"level":"error"/.test(line)) serverErrors.push(line);
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = await new Promise<string>((resolveLine, reject) => {
    lines.once('line', resolveLine);
    child?.once('exit', (code) => reject(new Error(`vistool view exited with ${code} before it listened`)));
  });
  listening = JSON.parse(first) as Listening;
  assert.equal(listening.event, 'listening');
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((done) => child?.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  }
});

/** The refs of every image a record names: the task image, the images shown in turns, each call's input and output. */
function imageRefs(record: Rollout): Set<string> {
  const refs = new Set([record.task.image]);
  for (const turn of record.turns) {
    for (const ref of turn.images ?? []) refs.add(ref);
    for (const call of turn.calls ?? []) for (const ref of [call.image_in, call.image_out]) if (ref) refs.add(ref);
  }
  return refs;
}

/** Width and height from a PNG's IHDR chunk. */
async function pngSize(path: string): Promise<[number, number]> {
  const bytes = await readFile(path);
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

/** A number as shown (rounded to `digits` decimals, or in exponent form) against the exact value. */
function assertShown(shown: string, expected: number, digits: number, what: string): void {
  const value = Number(shown.trim());
  assert.ok(Number.isFinite(value), `${what}: shown '${shown}' is not a number (expected ${expected})`);
  const tolerance = Math.max(0.5 * 10 ** -digits, Math.abs(expected) * 0.01);
  assert.ok(Math.abs(value - expected) <= tolerance, `${what}: shown ${shown}, the JSONL has ${expected}`);
}

/** The text after `label` in the rollout's outcome line ("reward 0.2" → "0.2"). */
async function outcomeValue(rollout: Locator, label: string): Promise<string> {
  const text = await rollout.locator('.outcome > span', { hasText: new RegExp(`^${label} `) }).innerText();
  return text.replace(new RegExp(`^${label}\\s+`), '');
}

async function openViewer(): Promise<{ page: Page; problems: string[] }> {
  const opened = await openPage(browser, listening.viewer);
  await opened.page.locator('[data-testid=rollout]').first().waitFor();
  return opened;
}

test('the index page lists the veRL run by its folder name with run.json\'s status and engine', { skip }, async () => {
  const { page, problems } = await openPage(browser, listening.url);
  const runs = await page.locator('.run-list').innerText();
  assert.match(runs, new RegExp(`${RUN}[\\s\\S]*finished · trained on ${runJson.engine} · 1 metric rows · 1 rollout steps`));
  assert.deepEqual(problems, []);
});

test('the viewer lists the veRL run\'s step-1 rollouts in their prompt groups with the JSONL\'s rewards and advantages', { skip }, async () => {
  const { page, problems } = await openViewer();
  assert.equal(await page.locator('[data-testid=step-select]').inputValue(), '1');
  const rows = page.locator('[data-testid=rollout-row]');
  assert.equal(await rows.count(), rollouts.length);
  assert.equal(rollouts.length, 4);
  const promptIds = [...new Set(rollouts.map((r) => r.prompt_id))];
  assert.equal(await page.locator('.viewer-status').innerText(), `${rollouts.length} of ${rollouts.length} rollouts in ${promptIds.length} of ${promptIds.length} groups`);
  const groups = page.locator('[data-testid=group]');
  assert.deepEqual(await groups.evaluateAll((sections) => sections.map((s) => s.getAttribute('data-prompt'))), promptIds);
  for (const [i, promptId] of promptIds.entries()) {
    const members = rollouts.filter((r) => r.prompt_id === promptId);
    const group = groups.nth(i);
    assert.match(await group.innerText(), new RegExp(`${members.filter((m) => m.correct).length}/${members.length} correct`));
    // The bridge's kept flag (dynamic sampling) decides kept or filtered.
    assert.equal(await group.evaluate((s) => s.classList.contains('kept')), members.every((m) => m.kept), `group ${promptId}: kept`);
  }
  for (const [line, record] of rollouts.entries()) {
    const row = page.locator(`[data-testid=rollout-row][data-line="${line}"]`);
    assertShown(await row.locator('.reward').innerText(), record.reward, 3, `line ${line} reward in the list`);
    assertShown((await row.locator('.advantage').innerText()).replace(/^adv\s+/, ''), record.advantage, 2, `line ${line} advantage in the list`);
  }
  assert.deepEqual(problems, []);
});

test('opening the first veRL rollout with a tool call shows its reward, advantage and every image it names, each loaded from images/', { skip }, async () => {
  const line = rollouts.findIndex((r) => r.turns.some((t) => (t.calls ?? []).length > 0));
  assert.ok(line >= 0, 'the fixture has a rollout with a tool call');
  const record = rollouts[line] as Rollout;
  const { page, problems } = await openViewer();
  await page.locator(`[data-testid=rollout-row][data-line="${line}"]`).click();
  await page.waitForFunction((l) => document.querySelector('[data-testid=rollout-row][aria-selected=true]')?.getAttribute('data-line') === l, String(line));
  // The detail re-renders after the click: wait for the clicked line's, not the one shown first.
  const rollout = page.locator(`[data-testid=rollout-detail] .detail-column[data-line="${line}"] [data-testid=rollout]`);
  await rollout.waitFor();
  assert.equal(await rollout.getAttribute('data-prompt'), record.prompt_id);
  assertShown(await outcomeValue(rollout, 'reward'), record.reward, 3, 'reward in the detail');
  assertShown(await outcomeValue(rollout, 'advantage'), record.advantage, 3, 'advantage in the detail');
  const callNames = record.turns.flatMap((t) => (t.calls ?? []).map((c) => c.name));
  assert.deepEqual(await rollout.locator('[data-testid=call] .call-name').allInnerTexts(), callNames);

  const images = rollout.locator('img');
  const count = await images.count();
  const shown: string[] = [];
  for (let i = 0; i < count; i++) {
    const image = images.nth(i);
    const src = (await image.getAttribute('src')) ?? '';
    const ref = /(?:^|\/)files\/[^/]+\/images\/([0-9a-f]{64})\.png$/.exec(src)?.[1];
    assert.ok(ref, `image ${i} comes from the run's images/: ${src}`);
    shown.push(ref);
    // The panels load images lazily: bring each into view, then wait until it loaded or failed.
    await image.scrollIntoViewIfNeeded();
    await image.evaluate((img: HTMLImageElement) => (img.complete ? undefined : new Promise((done) => {
      img.addEventListener('load', done, { once: true });
      img.addEventListener('error', done, { once: true });
    })));
    const natural = await image.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight]);
    assert.ok((natural[0] ?? 0) > 0, `images/${ref}.png (${await image.getAttribute('alt')}) did not load`);
    assert.deepEqual(natural, await pngSize(join(runDir, 'images', `${ref}.png`)), `images/${ref}.png is shown at its own size`);
  }
  assert.deepEqual(new Set(shown), imageRefs(record), 'every image the record names is shown, and no other');
  // The call's before and after images are the call's image_in and image_out.
  const call = record.turns.flatMap((t) => t.calls ?? [])[0] as Call;
  const compare = rollout.locator('[data-testid=image-compare]').first().locator('img');
  const compared = await compare.evaluateAll((imgs) => imgs.map((i) => [i.getAttribute('data-role'), /images\/([0-9a-f]{64})\.png$/.exec(i.getAttribute('src') ?? '')?.[1]]));
  assert.deepEqual(compared, [['before', call.image_in], ['after', call.image_out]]);
  await screenshot(page, 'viewer-verl-run-tool-call');
  assert.deepEqual(problems, []);
});

/** veRL's names the dashboard shows under the trainer's (protocol/metric-vocabulary.ts), for the ones this fixture logs. */
const SHOWN_AS: Record<string, string> = { 'critic/score/mean': 'reward/mean', 'num_turns/mean': 'turns/mean', 'timing_s/gen': 'timing/gen_s' };

test("the dashboard offers every veRL metric, those the trainer also logs under the trainer's names, and draws critic/score/mean as reward/mean", { skip }, async () => {
  const logged = 'critic/score/mean';
  const metric = 'reward/mean';
  const expected = metricsRow[logged];
  assert.equal(typeof expected, 'number', `the fixture's metrics.jsonl has ${logged}`);
  const names = Object.keys(metricsRow).filter((k) => !['step', 'time', 'timestamp', 'stage', 'label'].includes(k) && typeof metricsRow[k] === 'number').map((k) => SHOWN_AS[k] ?? k).sort();
  const { page, problems } = await openPage(browser, listening.dashboard);
  await page.locator('[data-testid=chart-card]').first().waitFor();
  const defaults = await page.locator('[data-testid=chart-card]').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-metric')));
  assert.ok(defaults.every((name) => name !== null && names.includes(name)), `the default charts (${defaults.join(', ')}) are metrics the run logged`);
  assert.match(await page.locator('.run-toggles').innerText(), new RegExp(`${RUN}[\\s\\S]*finished`));
  assert.equal(await page.locator('[data-testid=run-engine]').innerText(), runJson.engine);

  await page.locator('[data-testid=metrics-button]').click();
  const options = page.locator('[data-testid=metric-option]');
  await options.first().waitFor();
  assert.deepEqual((await options.evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value))).sort(), names);
  const option = page.locator(`[data-testid=metric-option][value="${metric}"]`);
  if (!(await option.isChecked())) await option.check();
  const card = page.locator(`[data-testid=chart-card][data-metric="${metric}"]`);
  await card.waitFor();
  await page.waitForFunction((m) => document.querySelector(`[data-testid=chart-card][data-metric="${m}"]`)?.getAttribute('data-points') === JSON.stringify({ 'verl-run': 1 }), metric);
  const stats = await card.locator('.chart-stats').innerText();
  const last = /last (\S+) · .* · n=1$/.exec(stats.trim())?.[1];
  assert.ok(last !== undefined, `the chart's stats line: ${stats}`);
  assertShown(last, expected as number, 3, `${metric} last value`);
  await screenshot(page, 'dashboard-verl-run', true);
  assert.deepEqual(problems, []);
  assert.deepEqual(serverErrors, []);
});
