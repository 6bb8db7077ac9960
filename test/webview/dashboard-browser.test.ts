import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { decodeImage } from '../../env/core/image.js';
import { tableFixture } from '../fixtures/render.js';
import { appendMetrics, HOSTILE_TEXT, metricRow, writeRunDirectory } from '../runs/run-directory.js';
import { ensureBundles, launchBrowser, openPage, pixelsNear, screenshot, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;
let root: string;
let runA: string;
let runB: string;
/** The first series colour of the light theme (--vscode-charts-blue), in which run-a is drawn. */
const RUN_A_BLUE: [number, number, number] = [0x1a, 0x85, 0xff];

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-dashboard-browser-'));
  [runA, runB] = await Promise.all([
    writeRunDirectory(join(root, 'run-a'), { metricRows: 60, trend: 'fading', evaluations: true, status: 'running' }),
    writeRunDirectory(join(root, 'run-b'), { metricRows: 45, trend: 'healthy', status: 'finished' }),
    ensureBundles(),
  ]);
  browser = await launchBrowser();
  view = await startView([runA, runB]);
});

after(async () => {
  await browser?.close();
  await view?.stop();
});

function points(raw: string | null): Record<string, number> {
  return JSON.parse(raw ?? '{}') as Record<string, number>;
}

test('the dashboard draws every default metric, overlaying both runs with one point per metrics line', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  const reward = page.locator('[data-testid=chart-card][data-metric="reward/mean"]');
  await reward.waitFor();
  await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('"run-b":45'));
  const metrics = await page.locator('[data-testid=chart-card]').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-metric')));
  // The reward's components are one chart after the reward; timing/step_s, 12.5 s at every step, is flat and stays in the picker.
  assert.deepEqual(metrics, ['reward/mean', 'reward components', 'acc/mean', 'tool/call_rate', 'response_length/mean', 'actor/entropy', 'actor/kl', 'actor/pg_clipfrac']);
  assert.deepEqual(points(await reward.getAttribute('data-points')), { 'run-a': 60, 'run-b': 45 });
  assert.ok((await pixelsNear(page, '[data-metric="reward/mean"] canvas', RUN_A_BLUE)) > 100, 'run-a\'s line is drawn on the reward chart');
  assert.match(await reward.locator('.chart-stats').innerText(), /run-a: last 0\.\d+ · min 0\.3\d* · max 0\.\d+ · n=60/);
  await screenshot(page, 'dashboard-light', true);
  assert.deepEqual(problems, []);
});

test('a line appended to metrics.jsonl while the page is open shows up on the charts', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  const card = page.locator('[data-metric="acc/mean"]');
  await page.waitForFunction(() => document.querySelector('[data-metric="acc/mean"]')?.getAttribute('data-points')?.includes('"run-b":45'));
  const started = Date.now();
  await appendMetrics(runB, 46, 3);
  await page.waitForFunction(() => document.querySelector('[data-metric="acc/mean"]')?.getAttribute('data-points')?.includes('"run-b":48'));
  process.stdout.write(`# live update: 3 appended lines drawn ${Date.now() - started} ms after the write\n`);
  assert.deepEqual(points(await card.getAttribute('data-points')), { 'run-a': 60, 'run-b': 48 });
  assert.match(await card.locator('.chart-stats').innerText(), /run-b: .* n=48/);
  assert.deepEqual(problems, []);
});

test('search in the metric picker keeps the names holding every typed word, and a live update keeps the search', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await page.locator('[data-testid=chart-card]').first().waitFor();
  await page.locator('[data-testid=metrics-button]').click();
  const options = page.locator('[data-testid=metric-option]');
  await options.first().waitFor();
  const all = await options.evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value));
  const visible = () => options.evaluateAll((boxes) => boxes.filter((b) => (b as HTMLElement).offsetParent !== null).map((b) => (b as HTMLInputElement).value));
  const search = page.locator('[data-testid=metric-search]');
  await search.fill('Reward');
  assert.deepEqual(await visible(), all.filter((name) => name.toLowerCase().includes('reward')));
  await search.fill('mean acc');
  const both = all.filter((name) => name.includes('mean') && name.includes('acc'));
  assert.ok(both.length > 0 && both.length < all.length);
  assert.deepEqual(await visible(), both);
  // A new metrics line re-renders the picker: the words stay, and so does the filter.
  const before = await page.locator('[data-metric="acc/mean"]').getAttribute('data-points');
  await appendMetrics(runB, 49, 1);
  await page.waitForFunction((b) => document.querySelector('[data-metric="acc/mean"]')?.getAttribute('data-points') !== b, before);
  assert.equal(await search.inputValue(), 'mean acc');
  assert.deepEqual(await visible(), both);
  await search.fill('');
  assert.deepEqual(await visible(), all);
  assert.deepEqual(problems, []);
});

test('the tool-collapse warning names the run whose call rate fell from its peak, and only that run, and shows its chart', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  const warning = page.locator('[data-testid=tool-fading-warning]');
  await warning.waitFor();
  assert.equal(await warning.count(), 1);
  assert.equal(await warning.getAttribute('data-run'), 'run-a');
  assert.match(await warning.innerText(), /Tool use collapsed in run-a: tool\/call_rate fell from 0\.\d\d \(median of steps 1–10\) to 0\.\d\d \(median of steps 51–60\), while reward\/mean rose/);
  assert.match(await warning.innerText(), /rewards\.tool\.no_tool_factor/);
  // The button brings the call-rate chart (far down the page) into view.
  const chart = page.locator('[data-metric="tool/call_rate"]');
  await page.evaluate(() => window.scrollTo(0, 0));
  await warning.locator('[data-testid=show-call-rate]').click();
  await page.waitForFunction(() => {
    const box = document.querySelector('[data-metric="tool/call_rate"]')?.getBoundingClientRect();
    return box !== undefined && box.top >= 0 && box.bottom <= window.innerHeight;
  });
  assert.equal(await chart.count(), 1);
  assert.deepEqual(problems, []);
});

test('evaluations with and without tools are shown beside the curves, with the difference', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  const table = page.locator('[data-testid=eval-table]');
  await table.waitFor();
  const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td.textContent)));
  assert.deepEqual(rows, [
    ['before', '0', '0.25', '0.31', '0.4', '16', '-0.06'],
    ['after_rl', '60', '0.62', '0.44', '0.81', '16', '+0.18'],
  ]);
  assert.deepEqual(problems, []);
});

test('smoothing, wall-time x axis and hiding a run change the charts, and the choices survive a reload', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('run-b'));
  await page.locator('[data-testid=smoothing]').evaluate((input: HTMLInputElement) => {
    input.value = '0';
    input.dispatchEvent(new Event('input'));
  });
  await page.locator('[data-testid=x-axis]').selectOption('time');
  assert.equal(await page.locator('[data-metric="reward/mean"] canvas').getAttribute('aria-label'), 'reward/mean by wall time');
  await page.locator('vscode-checkbox[data-run="run-b"]').click();
  await page.waitForFunction(() => !document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('run-b'));
  await page.reload();
  await page.locator('[data-metric="reward/mean"]').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('run-a'));
  assert.deepEqual(Object.keys(points(await page.locator('[data-metric="reward/mean"]').getAttribute('data-points'))), ['run-a']);
  assert.equal(await page.locator('[data-testid=x-axis]').inputValue(), 'time');
  assert.equal(await page.locator('.smoothing-value').innerText(), '0.00');
  await screenshot(page, 'dashboard-wall-time-one-run');
  assert.deepEqual(problems, []);
});

test('CSV and PNG exports download the shown data', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('run-b'));
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid=export-csv]').click()]);
  assert.equal(csvDownload.suggestedFilename(), 'metrics.csv');
  const csv = await readFile(await csvDownload.path(), 'utf8');
  const lines = csv.trimEnd().split('\n');
  assert.match(lines[0] ?? '', /^run,step,time_s,reward\/mean,reward\/accuracy,reward\/format,acc\/mean,/); // the shown charts' metrics, in their order (a group's members in its place)
  assert.equal(lines.filter((l) => l.startsWith('run-a,')).length, 60);
  assert.ok(lines.filter((l) => l.startsWith('run-b,')).length >= 45);
  const [pngDownload] = await Promise.all([page.waitForEvent('download'), page.locator('[data-metric="tool/call_rate"] [data-testid=export-png]').click()]);
  assert.equal(pngDownload.suggestedFilename(), 'tool_call_rate.png');
  const png = await decodeImage(await readFile(await pngDownload.path()));
  assert.ok(png.width > 200 && png.height > 100);
  assert.deepEqual(problems, []);
});

test('the dark theme gives the page and the charts dark colours', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard', '&theme=dark'));
  await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('run-b'));
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(background, 'rgb(31, 31, 31)');
  // run-a in the dark theme's --vscode-charts-blue (#3794ff).
  assert.ok((await pixelsNear(page, '[data-metric="reward/mean"] canvas', [0x37, 0x94, 0xff])) > 100);
  await screenshot(page, 'dashboard-dark', true);
  assert.deepEqual(problems, []);
});

// Drawing used to receive every row and decimate in the page (LTTB, at most 600 points); the host
// now sends a line about one point per pixel of the chart (each bucket's min and max), so what
// is drawn is bounded by the chart's width, and a zoomed range comes at full resolution.
test('a long run arrives downsampled by the host: 5000 points per line are drawn as about one per pixel, a zoomed range in full, and appends still arrive', async () => {
  const long = await writeRunDirectory(join(root, 'long-run'), { metricRows: 5000 });
  const longView = await startView([long]);
  try {
    const { page, problems } = await openPage(browser, longView.url('dashboard'));
    const card = page.locator('[data-metric="reward/mean"]');
    await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('5000'));
    const width = await card.evaluate((c) => c.clientWidth);
    const drawn = Number(await card.getAttribute('data-drawn'));
    assert.ok(drawn > 0 && drawn <= 600 && drawn <= width + 50, `drawn ${drawn} points on a ${width} px chart`);

    // Drag across a few percent of the plot: those steps come back one point each.
    const box = await card.locator('.chart-box').boundingBox();
    assert.ok(box);
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width * 0.4, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.43, y, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(() => (document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-zoom') ?? '') !== '');
    const zoom = JSON.parse((await card.getAttribute('data-zoom')) ?? '{}') as { min: number; max: number };
    // Steps are 1…5000, one per line: those in the range, and one beyond each edge.
    const inRange = Math.floor(zoom.max) - Math.ceil(zoom.min) + 1;
    assert.ok(inRange > 10 && inRange < 400, `zoomed to ${JSON.stringify(zoom)}`);
    assert.equal(Number(await card.getAttribute('data-drawn')), inRange + 2);
    assert.equal(await card.locator('[data-testid=reset-zoom]').isVisible(), true);
    await card.locator('[data-testid=reset-zoom]').click();
    await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-zoom') === '');
    assert.equal(Number(await card.getAttribute('data-drawn')), drawn);

    await appendMetrics(long, 5001, 3);
    await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('5003'));
    assert.match(await card.locator('.chart-stats').innerText(), /n=5003/);
    assert.deepEqual(problems, []);
  } finally {
    await longView.stop();
  }
});

test('a notification without new rows redraws no chart; an appended line redraws each chart once', async () => {
  const quiet = await writeRunDirectory(join(root, 'quiet-run'), { metricRows: 30, status: 'running' });
  const quietView = await startView([quiet]);
  try {
    const { page, problems } = await openPage(browser, quietView.url('dashboard'));
    const cards = page.locator('[data-testid=chart-card]');
    // Every line of every chart (a group chart's too: a line per member) has its 30 points.
    const allAt = (n: number) => {
      const all = Array.from(document.querySelectorAll('[data-testid=chart-card]'));
      return all.length > 0 && all.every((c) => {
        const counts = Object.values(JSON.parse(c.getAttribute('data-points') ?? '{}') as Record<string, number>);
        return counts.length > 0 && counts.every((count) => count === n);
      });
    };
    await page.waitForFunction(allAt, 30);
    const draws = () => cards.evaluateAll((all) => all.map((c) => Number(c.getAttribute('data-draws'))));
    const before = await draws();
    // run.json changes: the panels get a new snapshot (the status badge shows it), the rows do not.
    const runJson = JSON.parse(await readFile(join(quiet, 'run.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(quiet, 'run.json'), JSON.stringify({ ...runJson, status: 'finished' }));
    await page.waitForFunction(() => document.querySelector('.run-toggles')?.textContent?.includes('finished'));
    assert.deepEqual(await draws(), before);
    await appendMetrics(quiet, 31, 1);
    await page.waitForFunction(allAt, 31);
    assert.deepEqual(await draws(), before.map((n) => n + 1));
    assert.deepEqual(problems, []);
  } finally {
    await quietView.stop();
  }
});

test('the playground opens a PNG with its metadata, applies a tool from the generated form, and the image changes', async () => {
  const fixture = await tableFixture();
  await writeFile(join(root, 'table.png'), fixture.png);
  await writeFile(join(root, 'table.json'), JSON.stringify(fixture.meta));
  const { page, problems } = await openPage(browser, view.url('playground'));
  await page.locator('[data-testid=tool-select]').waitFor();
  await page.locator('[data-testid=metadata-input]').setInputFiles(join(root, 'table.json'));
  await page.locator('[data-testid=image-input]').setInputFiles(join(root, 'table.png'));
  await page.waitForFunction(() => document.querySelector('[data-testid=stage]')?.getAttribute('data-images') === '1');
  await page.locator('[data-testid=tool-select]').selectOption('focus_on_columns_with_mask');
  assert.deepEqual(await page.locator('[data-testid=label-option]').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value)), ['Rider', 'Country', 'Wins', 'Team', 'Year']);
  await page.locator('[data-testid=label-option][value=Rider]').check();
  await page.locator('[data-testid=label-option][value=Wins]').check();
  await page.locator('[data-testid=apply]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=stage]')?.getAttribute('data-images') === '2');
  assert.match(await page.locator('[data-testid=playground-message]').innerText(), /kept columns Rider, Wins; masked 3 others/);
  await page.locator('[data-testid=diff-toggle]').click();
  const changed = Number(await page.locator('[data-testid=diff-summary]').getAttribute('data-changed'));
  assert.ok(changed > 10_000, `the mask changed ${changed} pixels`);
  await page.locator('[data-testid=copy-refocus]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=copied]')?.textContent?.includes('focus_on_columns_with_mask'));
  assert.match(await page.locator('[data-testid=copied]').innerText(), /focus_on_columns_with_mask\(image_1, \["Rider", "Wins"\], columns_bbox\)/);
  await screenshot(page, 'playground-after-apply');
  await page.locator('[data-testid=undo]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=stage]')?.getAttribute('data-images') === '1');
  assert.deepEqual(problems, []);
});

test('in the playground a wrong label comes back as the engine\'s E4 error, and the image is unchanged', async () => {
  const { page, problems } = await openPage(browser, view.url('playground'));
  await page.locator('[data-testid=tool-select]').waitFor();
  await page.locator('[data-testid=metadata-input]').setInputFiles(join(root, 'table.json'));
  await page.locator('[data-testid=image-input]').setInputFiles(join(root, 'table.png'));
  await page.waitForFunction(() => document.querySelector('[data-testid=stage]')?.getAttribute('data-images') === '1');
  await page.locator('[data-testid=tool-select]').selectOption('focus_on_rows_with_draw');
  await page.locator('[data-testid=arg-rows-extra]').fill('Pogacar');
  await page.locator('[data-testid=apply]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=playground-message]')?.getAttribute('data-error-class') === 'E4');
  assert.match(await page.locator('[data-testid=playground-message]').innerText(), /E4: .*Pogacar/);
  assert.equal(await page.locator('[data-testid=stage]').getAttribute('data-images'), '1');
  assert.deepEqual(problems, []);
  assert.deepEqual(view.panelErrors, []);
});

// ---------------------------------------------------------------------------------------------
// Comparing two runs that log per-tool and per-error counts, with different configs.

/** Counts as trainer/vistool_trainer/rollouts/tool_metrics.py logs them, made up per step. */
function countsRow(step: number): Record<string, number> {
  return {
    'tools/focus_on_columns_with_mask/calls': 3 + (step % 4),
    'tools/focus_on_columns_with_mask/failed': step % 2,
    'tools/zoom_in/calls': 1,
    'tools/zoom_in/failed': step % 3 === 0 ? 1 : 0,
    ...Object.fromEntries(['E1', 'E2', 'E3', 'E4', 'E5', 'E6'].map((c, i) => [`errors/${c}`, i === 3 ? step % 2 : 0])),
  };
}

/** An evaluation line as the trainer writes it into metrics.jsonl (trainer/vistool_trainer/run/stage_context.py, evaluate_now). */
const evalLine = (label: string, step: number, metrics: Record<string, number>) => ({ step, stage: 'eval', label, 'eval/n': 16, ...metrics });

async function writeCompareRun(name: string, rows: number, config: Record<string, unknown>, evaluations: Record<string, unknown>[]): Promise<string> {
  const dir = await writeRunDirectory(join(root, 'compare', name), { metricRows: 0, status: 'finished' });
  const lines = [...Array.from({ length: rows }, (_, i) => ({ ...metricRow(i + 1, 'healthy'), ...countsRow(i + 1) })), ...evaluations];
  await appendFile(join(dir, 'metrics.jsonl'), lines.map((line) => JSON.stringify(line) + '\n').join(''));
  await writeFile(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  return dir;
}

const CONFIG_C = { name: 'arm-tools', seed: 7, rl: { group_size: 4, lr: 1e-6, steps: 30 }, rewards: { tool: { no_tool_factor: 0.5 } }, data: { train: ['tasks/a.jsonl'] }, notes: 'plain' };
const CONFIG_D = { name: 'arm-text', seed: 7, rl: { group_size: 8, lr: 1e-6, steps: 30 }, rewards: { tool: { no_tool_factor: 1 } }, data: { train: ['tasks/a.jsonl', 'tasks/b.jsonl'] }, notes: HOSTILE_TEXT, sft: { steps: 5 } };

async function compareView(): Promise<ViewSession> {
  const [c, d] = await Promise.all([
    // run-c evaluates every 10 RL steps (with tools only, as the trainer's rl_step_N do) between its before and after_rl.
    writeCompareRun('run-c', 30, CONFIG_C, [
      evalLine('before', 0, { 'eval/acc_tools': 0.25, 'eval/acc_no_tools': 0.3 }),
      evalLine('rl_step_10', 10, { 'eval/acc_tools': 0.35 }),
      evalLine('rl_step_20', 20, { 'eval/acc_tools': 0.5 }),
      evalLine('after_rl', 30, { 'eval/acc_tools': 0.6, 'eval/acc_no_tools': 0.4 }),
    ]),
    // run-d has one evaluation per phase edge only.
    writeCompareRun('run-d', 20, CONFIG_D, [evalLine('before', 0, { 'eval/acc_tools': 0.2, 'eval/acc_no_tools': 0.3 }), evalLine('after_rl', 20, { 'eval/acc_tools': 0.3, 'eval/acc_no_tools': 0.35 })]),
  ]);
  return startView([c, d]);
}

test('the default layout shows the per-tool and per-error-class counts that move after the call rate, as group charts with a line per tool or class in the run\'s colour', async () => {
  const compare = await compareView();
  try {
    const { page, problems } = await openPage(browser, compare.url('dashboard'));
    const errors = page.locator('[data-metric="errors/E1–E6"]');
    await page.waitForFunction(() => document.querySelector('[data-metric="errors/E1–E6"]')?.getAttribute('data-points')?.includes('"run-d · E4":20'));
    const metrics = await page.locator('[data-testid=chart-card]').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-metric')));
    assert.deepEqual(metrics, ['reward/mean', 'reward components', 'acc/mean', 'tool/call_rate', 'tools/*/calls', 'tools/*/failed', 'errors/E1–E6',
      'response_length/mean', 'actor/entropy', 'actor/kl', 'actor/pg_clipfrac']);
    // Only E4 moves (countsRow: the other classes are 0 at every step), so it is the group's only default member.
    assert.deepEqual(JSON.parse((await errors.getAttribute('data-members')) ?? '[]'), ['errors/E4']);
    // A line per run: run-c with 30 rows and run-d with 20.
    assert.deepEqual(points(await errors.getAttribute('data-points')), { 'run-c · E4': 30, 'run-d · E4': 20 });
    // Counts are drawn from the rows: run-c's E4 alternates 1, 0 over 30 steps, so its max is 1 and its last (step 30) 0.
    assert.match(await errors.locator('.chart-stats').innerText(), /run-c · E4: last 0 · min 0 · max 1 · n=30/);
    const calls = page.locator('[data-metric="tools/*/calls"]');
    // zoom_in is called once at every step: a flat line, left in the picker.
    assert.deepEqual(Object.keys(points(await calls.getAttribute('data-points'))), ['run-c · focus_on_columns_with_mask', 'run-d · focus_on_columns_with_mask']);
    // step % 4 + 3 over steps 1…30 ends at 30 % 4 + 3 = 5, and ranges over 3…6.
    assert.match(await calls.locator('.chart-stats').innerText(), /run-c · focus_on_columns_with_mask: last 5 · min 3 · max 6 · n=30/);
    // Each run keeps its colour on the group charts too: run-c (the first run) is the first series colour.
    type Drawn = { run: string; kind: string; visible: boolean; colour: string };
    const drawn = JSON.parse((await errors.getAttribute('data-datasets')) ?? '[]') as Drawn[];
    assert.equal(drawn.filter((d) => d.kind === 'smoothed').length, 2);
    assert.equal(new Set(drawn.filter((d) => d.run.startsWith('run-c')).map((d) => d.colour)).size, 1);
    assert.ok((await pixelsNear(page, '[data-metric="errors/E1–E6"] canvas', RUN_A_BLUE)) > 50, "run-c's E4 is drawn in run-c's colour");
    assert.deepEqual(problems, []);
  } finally {
    await compare.stop();
  }
});

test('comparing runs shows the config keys that differ, a column per run, with model text shown as text', async () => {
  const compare = await compareView();
  try {
    const { page, problems } = await openPage(browser, compare.url('dashboard'));
    const table = page.locator('[data-testid=config-diff-table]');
    await table.waitFor();
    const header = await table.locator('thead th').allInnerTexts();
    assert.deepEqual(header, ['key', 'run-c', 'run-d']);
    const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children, (cell) => cell.textContent)));
    // Worked out by hand from CONFIG_C and CONFIG_D: seed and rl.lr/rl.steps are equal, so they are not listed.
    assert.deepEqual(rows, [
      ['name', '"arm-tools"', '"arm-text"'],
      ['rl.group_size', '4', '8'],
      ['rewards.tool.no_tool_factor', '0.5', '1'],
      ['data.train', '["tasks/a.jsonl"]', '["tasks/a.jsonl","tasks/b.jsonl"]'],
      // A value over 48 characters is cut to 47 and an ellipsis; the whole of it is the cell's tooltip.
      ['notes', '"plain"', `${JSON.stringify(HOSTILE_TEXT).slice(0, 47)}…`],
      ['sft.steps', '—', '5'],
    ]);
    assert.equal(await table.locator('tr[data-key="notes"] td').nth(1).getAttribute('title'), JSON.stringify(HOSTILE_TEXT));
    // The hostile note stayed text: no element it names was made, and nothing it would run ran.
    assert.equal(await page.locator('[data-testid=config-diff] img, [data-testid=config-diff] script, [data-testid=config-diff] svg, [data-testid=config-diff] iframe, [data-testid=config-diff] a').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined);
    // One run shown: nothing to compare, the diff goes away; both again: it comes back.
    await page.locator('vscode-checkbox[data-run="run-d"]').click();
    await page.locator('[data-testid=config-diff]').waitFor({ state: 'hidden' });
    await page.locator('vscode-checkbox[data-run="run-d"]').click();
    await table.waitFor();
    assert.equal(await table.locator('tbody tr').count(), 6);
    await screenshot(page, 'dashboard-config-diff', true);
    assert.deepEqual(problems, []);
    assert.deepEqual(compare.panelErrors, []);
  } finally {
    await compare.stop();
  }
});

test('a compared run without a config.json is named in the diff, which is read again once the run writes it', async () => {
  const [c, d] = await Promise.all([writeCompareRun('late-c', 5, CONFIG_C, []), writeCompareRun('late-d', 5, CONFIG_D, [])]);
  await rm(join(d, 'config.json'));
  const lateView = await startView([c, d]);
  try {
    const { page, problems } = await openPage(browser, lateView.url('dashboard'));
    await page.locator('[data-testid=config-missing]').waitFor();
    assert.equal(await page.locator('[data-testid=config-missing]').innerText(), 'late-d: no config.json');
    assert.equal(await page.locator('[data-testid=config-diff-table]').count(), 0);
    // The trainer writes config.json, then run.json moves on: the diff is asked again and shows.
    await writeFile(join(d, 'config.json'), JSON.stringify(CONFIG_D));
    const runJson = JSON.parse(await readFile(join(d, 'run.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(d, 'run.json'), JSON.stringify({ ...runJson, updated_at: 1_700_000_700 }));
    await page.locator('[data-testid=config-diff-table]').waitFor();
    assert.equal(await page.locator('[data-testid=config-diff-table] tbody tr').count(), 6);
    assert.equal(await page.locator('[data-testid=config-missing]').count(), 0);
    assert.deepEqual(problems, []);
  } finally {
    await lateView.stop();
  }
});

test('with smoothing on, the raw series is drawn faintly behind the smoothed line, and "show raw" hides and shows it', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  const card = page.locator('[data-metric="reward/mean"]');
  await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('"run-b"'));
  type Drawn = { run: string; kind: string; points: number; visible: boolean };
  const datasets = async () => JSON.parse((await card.getAttribute('data-datasets')) ?? '[]') as Drawn[];
  const runA = async () => (await datasets()).filter((d) => d.run === 'run-a').map(({ kind, visible }) => ({ kind, visible }));
  // The default smoothing is 0.6: run-a has its raw 60 points and the smoothed line, both visible.
  assert.equal(await page.locator('.smoothing-value').innerText(), '0.60');
  assert.deepEqual(await runA(), [{ kind: 'raw', visible: true }, { kind: 'smoothed', visible: true }]);
  assert.equal((await datasets()).find((d) => d.run === 'run-a' && d.kind === 'raw')?.points, 60);
  // The canvas is kept in the page; after the toggle, the pixels that changed are where the raw lines were.
  const keepPixels = () => page.locator('[data-metric="reward/mean"] canvas').evaluate((canvas: HTMLCanvasElement) => {
    (window as unknown as { __kept: Uint8ClampedArray }).__kept = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? new Uint8ClampedArray();
  });
  const changedPixels = () => page.locator('[data-metric="reward/mean"] canvas').evaluate((canvas: HTMLCanvasElement) => {
    const before = (window as unknown as { __kept: Uint8ClampedArray }).__kept;
    const now = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? new Uint8ClampedArray();
    let changed = 0;
    for (let i = 0; i < now.length; i += 4) if (Math.abs((now[i] ?? 0) - (before[i] ?? 0)) + Math.abs((now[i + 1] ?? 0) - (before[i + 1] ?? 0)) + Math.abs((now[i + 2] ?? 0) - (before[i + 2] ?? 0)) > 24) changed += 1;
    return changed;
  });
  await keepPixels();
  const toggle = page.locator('[data-testid=show-raw]');
  await toggle.click();
  await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-datasets')?.includes('"kind":"raw","points":60,"visible":false'));
  assert.deepEqual(await runA(), [{ kind: 'raw', visible: false }, { kind: 'smoothed', visible: true }]);
  const changed = await changedPixels();
  process.stdout.write(`# hiding the raw lines changed ${changed} pixels of the reward chart\n`);
  assert.ok(changed > 150, `hiding the raw lines changed ${changed} pixels`);
  // The choice survives a reload, and turning it back on draws the raw line again.
  await page.reload();
  await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-datasets')?.includes('"visible":false'));
  assert.equal(await toggle.evaluate((box) => (box as HTMLElement & { checked: boolean }).checked), false);
  await toggle.click();
  await page.waitForFunction(() => !document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-datasets')?.includes('"visible":false'));
  assert.deepEqual(await runA(), [{ kind: 'raw', visible: true }, { kind: 'smoothed', visible: true }]);
  // Without smoothing the raw values are the line, and the toggle is off duty.
  await page.locator('[data-testid=smoothing]').evaluate((input: HTMLInputElement) => {
    input.value = '0';
    input.dispatchEvent(new Event('input'));
  });
  await page.waitForFunction(() => !document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-datasets')?.includes('smoothed'));
  assert.deepEqual(await runA(), [{ kind: 'line', visible: true }]);
  assert.equal(await toggle.evaluate((box) => (box as HTMLElement & { disabled: boolean }).disabled), true);
  assert.deepEqual(problems, []);
});

test('clicking a point of a training chart offers the nearest step with rollouts, and opens the viewer there with the run and step in the URL', async () => {
  // Rollout files at steps 10 and 20 only; the viewer's own default would be the newest (20).
  const dir = await writeRunDirectory(join(root, 'clicks', 'run-e'), { metricRows: 30, rolloutSteps: [10, 20], status: 'finished' });
  const clickView = await startView([dir]);
  try {
    const { page, problems } = await openPage(browser, clickView.url('dashboard'));
    const card = page.locator('[data-metric="reward/mean"]');
    await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('"run-e":30'));
    await page.waitForFunction(() => Number(document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-draws')) > 0);
    const box = await card.locator('.chart-box').boundingBox();
    assert.ok(box);
    // A fifth of the way across the plot: a step of about 1–10 (steps 1…30).
    await page.mouse.click(box.x + box.width * 0.2, box.y + box.height / 2);
    const pick = card.locator('[data-testid=chart-pick] [data-step]');
    await pick.waitFor();
    const clicked = Number(await pick.getAttribute('data-clicked'));
    assert.ok(clicked >= 1 && clicked <= 14, `clicked step ${clicked}`);
    // Worked out here, not by the page: of the files' steps 10 and 20, the nearer (ties to the earlier).
    const expected = Math.abs(clicked - 10) <= Math.abs(clicked - 20) ? 10 : 20;
    assert.equal(Number(await pick.getAttribute('data-step')), expected);
    assert.match(await pick.innerText(), new RegExp(`run-e · step ${clicked}${clicked === expected ? '' : ` \\(nearest step with rollouts: ${expected}\\)`}`));
    await card.locator('[data-testid=open-rollouts]').click();
    await page.waitForURL(/\/viewer\?/);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('run'), 'run-e');
    assert.equal(url.searchParams.get('step'), String(expected));
    await page.locator('[data-testid=rollout-row]').first().waitFor();
    assert.equal(await page.locator('[data-testid=step-select]').inputValue(), String(expected));
    // Back on the dashboard, a click near the end picks step 20.
    await page.goBack();
    await page.waitForFunction(() => Number(document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-draws')) > 0);
    await page.mouse.click(box.x + box.width * 0.97, box.y + box.height / 2);
    await card.locator('[data-testid=chart-pick] [data-step="20"]').waitFor();
    assert.deepEqual(problems, []);
    assert.deepEqual(clickView.panelErrors, []);
  } finally {
    await clickView.stop();
  }
});

/** Each theme's first two series colours (media/browser-theme.css, --vscode-charts-blue and -orange): run-a's and run-b's. */
const RUN_COLOURS = {
  light: { 'run-a': [0x1a, 0x85, 0xff], 'run-b': [0xd1, 0x86, 0x16] },
  dark: { 'run-a': [0x37, 0x94, 0xff], 'run-b': [0xd1, 0x86, 0x16] },
} as const satisfies Record<string, Record<'run-a' | 'run-b', [number, number, number]>>;

/**
 * Where on a chart's plot a click lands on `colour`'s line at full opacity and on no other
 * line: a pixel of that colour below the legend with no pixel of `other` within 12 pixels.
 * Viewport coordinates, or null when there is none.
 */
async function clickableLine(page: Page, canvas: string, colour: readonly number[], other: readonly number[]): Promise<{ x: number; y: number } | null> {
  return page.locator(canvas).evaluate((element: HTMLCanvasElement, [want, avoid]) => {
    // No named functions in here: the test's compiler would wrap them in a helper the page lacks.
    const { width, height } = element;
    const data = element.getContext('2d')?.getImageData(0, 0, width, height).data;
    if (!data) return null;
    // 1: the wanted colour, 2: the avoided one, each within the tolerance pixelsNear uses.
    const kind = new Uint8Array(width * height);
    for (let p = 0; p < width * height; p += 1) {
      const [r, g, b] = [data[p * 4] ?? 0, data[p * 4 + 1] ?? 0, data[p * 4 + 2] ?? 0];
      if (Math.abs(r - (want[0] ?? 0)) + Math.abs(g - (want[1] ?? 0)) + Math.abs(b - (want[2] ?? 0)) < 40) kind[p] = 1;
      else if (Math.abs(r - (avoid[0] ?? 0)) + Math.abs(g - (avoid[1] ?? 0)) + Math.abs(b - (avoid[2] ?? 0)) < 40) kind[p] = 2;
    }
    const rect = element.getBoundingClientRect();
    const scale = width / rect.width;
    const candidates: { x: number; y: number }[] = [];
    for (let y = Math.round(50 * scale); y < height; y += 1) {
      for (let x = Math.round(60 * scale); x < width - 10 * scale; x += 1) {
        if (kind[y * width + x] !== 1) continue;
        let clear = true;
        for (let dy = -12; dy <= 12 && clear; dy += 1) {
          for (let dx = -12; dx <= 12 && clear; dx += 1) {
            const [nx, ny] = [x + dx, y + dy];
            if (nx >= 0 && ny >= 0 && nx < width && ny < height && kind[ny * width + nx] === 2) clear = false;
          }
        }
        if (clear) candidates.push({ x, y });
      }
    }
    const middle = candidates[Math.floor(candidates.length / 2)];
    return middle ? { x: rect.left + middle.x / scale, y: rect.top + middle.y / scale } : null;
  }, [colour, other] as const);
}

for (const theme of ['light', 'dark'] as const) {
  for (const width of [1100, 1440]) {
    test(`a clicked point selects its run: drawn at full opacity on the charts, the other run dimmed, until the pick is dismissed (${theme}, ${width} px)`, async () => {
      const { page, problems } = await openPage(browser, view.url('dashboard', theme === 'dark' ? '&theme=dark' : ''), { width, height: 950 });
      const colours = RUN_COLOURS[theme];
      // Of the fixture's charts, tool/call_rate shows both runs apart (run-a's falls, run-b's holds); on
      // the others run-b's line runs under run-a's. The evaluation chart has run-a's evaluations only.
      const calls = '[data-metric="tool/call_rate"]';
      const reward = '[data-metric="reward/mean"]';
      const evals = '[data-testid=eval-chart]';
      await page.waitForFunction((card) => document.querySelector(card)?.getAttribute('data-datasets')?.includes('"run":"run-b'), calls);
      await page.waitForFunction((card) => document.querySelector(card)?.hasAttribute('data-datasets'), evals);
      // Lines at full opacity: pixels of the run's own colour (a dimmed line blends with the background, far from it).
      // The dashboard paints only the charts on screen: each is brought into view before it is read.
      const full = async (card: string, run: 'run-a' | 'run-b') => {
        await page.locator(card).scrollIntoViewIfNeeded();
        return pixelsNear(page, `${card} canvas`, [...colours[run]] as [number, number, number]);
      };
      type Counts = { callsA: number; callsB: number; rewardA: number; evalA: number };
      const settled = async (expect: (c: Counts) => boolean): Promise<Counts> => {
        let counts: Counts = { callsA: 0, callsB: 0, rewardA: 0, evalA: 0 };
        for (let i = 0; i < 50; i += 1) {
          counts = { callsA: await full(calls, 'run-a'), callsB: await full(calls, 'run-b'), rewardA: await full(reward, 'run-a'), evalA: await full(evals, 'run-a') };
          if (expect(counts)) break;
          await page.waitForTimeout(100);
        }
        return counts;
      };
      const allFull = (c: Counts) => Object.values(c).every((n) => n > 30);
      // Nothing selected: both runs at full opacity.
      let counts = await settled(allFull);
      assert.ok(allFull(counts), `before any pick: ${JSON.stringify(counts)}`);
      // A click on a run's line on the call-rate chart selects the run.
      const pick = async (run: 'run-a' | 'run-b', other: 'run-a' | 'run-b') => {
        await page.locator(calls).scrollIntoViewIfNeeded();
        const at = await clickableLine(page, `${calls} canvas`, colours[run], colours[other]);
        assert.ok(at, `${run}'s line is somewhere clear of ${other}'s`);
        await page.mouse.click(at.x, at.y);
        await page.locator(`${calls} [data-testid=chart-pick] [data-run="${run}"]`).waitFor();
      };
      // run-b selected: drawn at full opacity, run-a dimmed on every chart.
      await pick('run-b', 'run-a');
      counts = await settled((c) => c.callsA === 0 && c.rewardA === 0 && c.evalA === 0);
      assert.ok(counts.callsB > 30, `run-b selected, at full opacity: ${JSON.stringify(counts)}`);
      assert.deepEqual([counts.callsA, counts.rewardA, counts.evalA], [0, 0, 0], 'run-b selected: run-a is drawn dimmed on the call-rate, reward and evaluation charts');
      await page.locator(calls).scrollIntoViewIfNeeded();
      await screenshot(page, `dashboard-selected-run-b-${theme}-${width}`);
      // Dismissed: no run is selected, both at full opacity again.
      await page.locator(`${calls} [data-testid=dismiss-pick]`).click();
      counts = await settled(allFull);
      assert.ok(allFull(counts), `after the dismissal: ${JSON.stringify(counts)}`);
      // run-a selected: the other way round.
      await pick('run-a', 'run-b');
      counts = await settled((c) => c.callsB === 0);
      assert.ok(counts.callsA > 30 && counts.rewardA > 30 && counts.evalA > 30, `run-a selected, at full opacity: ${JSON.stringify(counts)}`);
      assert.equal(counts.callsB, 0, 'run-a selected: run-b is drawn dimmed');
      assert.deepEqual(problems, []);
      await page.context().close();
    });
  }
}

test('evaluations at several steps are drawn as accuracy against step beside the train reward and accuracy; one per phase edge stays marks', async () => {
  const compare = await compareView();
  try {
    const { page, problems } = await openPage(browser, compare.url('dashboard'));
    const card = page.locator('[data-testid=eval-chart]');
    await card.waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid=eval-chart]')?.hasAttribute('data-datasets'));
    // Written out by hand from the evaluation lines above: only run-c's periodic evaluations with tools are joined.
    assert.deepEqual(JSON.parse((await card.getAttribute('data-series')) ?? '[]'), [
      { run: 'run-c', metric: 'eval/acc_tools', curve: [[10, 0.35], [20, 0.5]], marks: [[0, 0.25, 'before'], [30, 0.6, 'after_rl']] },
      { run: 'run-c', metric: 'eval/acc_no_tools', curve: [], marks: [[0, 0.3, 'before'], [30, 0.4, 'after_rl']] },
      { run: 'run-d', metric: 'eval/acc_tools', curve: [], marks: [[0, 0.2, 'before'], [20, 0.3, 'after_rl']] },
      { run: 'run-d', metric: 'eval/acc_no_tools', curve: [], marks: [[0, 0.3, 'before'], [20, 0.35, 'after_rl']] },
    ]);
    const datasets = JSON.parse((await card.getAttribute('data-datasets')) ?? '[]') as { label: string; line: boolean; points: number }[];
    assert.deepEqual(datasets.filter((d) => d.line), [{ label: 'run-c · with tools', line: true, points: 2 }]);
    assert.deepEqual(datasets.map((d) => [d.label, d.points]), [['run-c · with tools', 2], ['run-c · with tools', 2], ['run-c · without tools', 2], ['run-d · with tools', 2], ['run-d · without tools', 2]]);
    // Right after the train reward, on the first row beside it.
    const order = await page.locator('.chart-grid > *').evaluateAll((cards) => cards.slice(0, 5).map((c) => c.getAttribute('data-metric') ?? c.getAttribute('data-testid')));
    assert.deepEqual(order, ['reward/mean', 'eval-chart', 'reward components', 'acc/mean', 'tool/call_rate']);
    assert.ok((await pixelsNear(page, '[data-testid=eval-chart] canvas', RUN_A_BLUE)) > 50, 'run-c (the first run, blue) is drawn on the eval chart');
    // Hiding run-c leaves run-d's marks, and no line at all.
    await page.locator('vscode-checkbox[data-run="run-c"]').click();
    await page.waitForFunction(() => !document.querySelector('[data-testid=eval-chart]')?.getAttribute('data-series')?.includes('run-c'));
    await page.waitForFunction(() => !document.querySelector('[data-testid=eval-chart]')?.getAttribute('data-datasets')?.includes('run-c'));
    assert.deepEqual(JSON.parse((await card.getAttribute('data-datasets')) ?? '[]').map((d: { line: boolean }) => d.line), [false, false]);
    await screenshot(page, 'dashboard-eval-chart');
    assert.deepEqual(problems, []);
  } finally {
    await compare.stop();
  }
});

// axe-core on the compared dashboard (config diff, evaluation chart, a picked point's line), in both
// themes. As in accessibility-browser.test.ts, axe needs playwright's bypassCSP to be added to the
// page; the other tests run the panels under the real CSP.
test('the compared dashboard, with its config diff, evaluation chart and a picked point, has no serious or critical axe violation in either theme', async () => {
  const axeSource = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  const compare = await compareView();
  try {
    for (const theme of ['light', 'dark']) {
      const context = await browser.newContext({ viewport: { width: 1400, height: 950 }, bypassCSP: true });
      const page = await context.newPage();
      await page.goto(compare.url('dashboard', `&theme=${theme}`));
      await page.locator('[data-testid=config-diff-table]').waitFor();
      await page.waitForFunction(() => document.querySelector('[data-testid=eval-chart]')?.hasAttribute('data-datasets'));
      await page.waitForFunction(() => Number(document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-draws')) > 0);
      const box = await page.locator('[data-metric="reward/mean"] .chart-box').boundingBox();
      assert.ok(box);
      await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      await page.locator('[data-metric="reward/mean"] [data-testid=chart-pick] [data-clicked]').waitFor();
      await page.addScriptTag({ content: axeSource });
      const violations = await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run: (context: Document) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
        const { violations } = await axe.run(document);
        return violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
      });
      process.stdout.write(`# axe on the compared dashboard (${theme}): ${violations.length} violation(s) of any impact: ${violations.map((v) => `${v.id} [${v.impact}]`).join(", ") || "none"}\n`);
      const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      assert.deepEqual(serious, [], `${theme}: ${JSON.stringify(serious)}`);
      await screenshot(page, `dashboard-compare-${theme}`, true);
      await context.close();
    }
  } finally {
    await compare.stop();
  }
});
