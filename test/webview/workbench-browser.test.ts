/**
 * The workbench telling a run's story (issue 34), in chromium through the real `vistool view`
 * server on a demo-like folder of runs (test/runs/demo-folder.ts: every rollout played through the
 * real engine) and the veRL fixture: the folder's report, the evaluation chart on its own range
 * with Wilson intervals, defaults that follow what varies, one colour per run, nothing cut or
 * cramped, the viewer opening on the run that called tools, evaluations side by side, a task over
 * time, links that reopen a view, annotations, a logged call replayed in the playground, veRL's
 * metric names on the trainer's charts, and the static bundle opened from file://. Expected values
 * come from the fixture's script and files, not from the panels.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import Ajv from 'ajv';
import { writeBundle } from '../../env/view/bundle.js';
import { EVALS, HELD_OUT, OUTCOMES, ROLLOUT_STEPS, writeDemoFolder } from '../runs/demo-folder.js';
import { HOSTILE_GROUP, HOSTILE_TEXT, writeRunDirectory } from '../runs/run-directory.js';
import { ASSETS, ensureBundles, launchBrowser, openPage, screenshot, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;
let verlView: ViewSession;
let root: string;
let demo: { tools: string; text: string };
let hostile: string;
let verl: string;

/** Wilson 95 % intervals of k of 5, from the trainer's own function (trainer/vistool_trainer/algorithms/intervals.py), printed once. */
const WILSON_OF_5: [number, number][] = [[0, 0.434482], [0.036224, 0.624465], [0.117621, 0.769276], [0.230724, 0.882379], [0.375535, 0.963776], [0.565518, 1]];

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-workbench-browser-'));
  [demo, hostile] = await Promise.all([
    writeDemoFolder(join(root, 'demo')),
    writeRunDirectory(join(root, 'hostile'), { rolloutSteps: [1], groups: [HOSTILE_GROUP], question: `Which rider? ${HOSTILE_TEXT}`, metricRows: 3 }),
    ensureBundles(),
  ]);
  verl = join(root, 'verl-run');
  await cp(join(__dirname, '..', 'fixtures', 'verl-run'), verl, { recursive: true });
  browser = await launchBrowser();
  // As `vistool view runs/demo` starts it: the folder's runs (in name order), and the folder as a root.
  view = await startView([demo.text, demo.tools], [join(root, 'demo')]);
  verlView = await startView([demo.tools, verl]);
});

after(async () => {
  await browser?.close();
  await view?.stop();
  await verlView?.stop();
});

async function dashboardReady(page: Page): Promise<void> {
  await page.locator('[data-testid=eval-chart]').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('"tools":4'));
}

test("a folder of runs overlaid in one dashboard, its report one click away under a policy that runs no script", async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await dashboardReady(page);
  assert.deepEqual(await page.locator('.run-toggle vscode-checkbox').evaluateAll((boxes) => boxes.map((b) => b.getAttribute('data-run'))), ['text', 'tools']);
  const opened = page.context().waitForEvent('page');
  await page.locator('[data-testid=open-report]').click();
  const report = await opened;
  await report.waitForLoadState();
  assert.equal(await report.title(), 'vistool demo — tools against text');
  assert.equal(await report.locator('h1').innerText(), 'Demo report');
  const response = await page.request.get(`${view.base}/report/tools/?token=${view.token}`);
  assert.match(response.headers()['content-security-policy'] ?? '', /script-src 'none'/);
  assert.deepEqual(problems, []);
});

test('the evaluation chart spans the evaluations\' steps, each point with its Wilson interval, and marks where RL starts', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await dashboardReady(page);
  const chart = page.locator('[data-testid=eval-chart]');
  await page.waitForFunction(() => document.querySelector('[data-testid=eval-chart]')?.getAttribute('data-phases')?.includes('"rl"'));
  const range = JSON.parse((await chart.getAttribute('data-range')) ?? 'null') as { min: number; max: number };
  const steps = EVALS.map((e) => e.step);
  // The evaluations' steps and a step (or 4 % of the span) either side: not from 0.
  assert.ok(range.min < Math.min(...steps) && range.min >= Math.min(...steps) - 1, `x from ${range.min}, not from 0`);
  assert.ok(range.max > Math.max(...steps) && range.max <= Math.max(...steps) + 1);
  const intervals = JSON.parse((await chart.getAttribute('data-intervals')) ?? '[]') as { run: string; metric: string; label: string; n: number; low: number; high: number }[];
  for (const e of EVALS) {
    const right = OUTCOMES[e.label].filter(Boolean).length;
    const point = intervals.find((p) => p.run === 'tools' && p.metric === 'eval/acc_tools' && p.label === e.label);
    assert.equal(point?.n, HELD_OUT.length);
    const [low, high] = WILSON_OF_5[right] as [number, number];
    assert.ok(Math.abs((point?.low ?? NaN) - low) < 1e-6 && Math.abs((point?.high ?? NaN) - high) < 1e-6, `${e.label}: ${JSON.stringify(point)}`);
  }
  assert.deepEqual(JSON.parse((await chart.getAttribute('data-phases')) ?? '[]'), [{ x: 11, stage: 'rl' }, { x: 11, stage: 'rl' }]);
  // Its key names the lines it draws (no curriculum here: no perception key), and it sits beside the train reward.
  assert.equal(await page.locator('[data-testid=eval-chart-title]').innerText(), 'eval accuracy (with tools: solid ●, without tools: dashed ▲)');
  const order = await page.locator('.chart-grid > *').evaluateAll((cards) => cards.slice(0, 2).map((c) => c.getAttribute('data-metric') ?? c.getAttribute('data-testid')));
  assert.deepEqual(order, ['reward/mean', 'eval-chart']);
  // Every training chart marks the SFT phases (run.json's sft_schedule) and the move to RL (once
  // that chart has drawn the tools run: under load it may draw after the evaluation chart).
  await page.waitForFunction(() => (JSON.parse(document.querySelector('[data-metric="sft/loss"]')?.getAttribute('data-phases') ?? '{}') as Record<string, unknown>)['tools'] !== undefined);
  const loss = JSON.parse((await page.locator('[data-metric="sft/loss"]').getAttribute('data-phases')) ?? '{}') as Record<string, { x: number; stage: string }[]>;
  assert.deepEqual(loss.tools, [{ x: 1, stage: 'sft: answers after tool' }, { x: 5, stage: 'sft: tool trajectories' }, { x: 8, stage: 'sft: mixture' }, { x: 11, stage: 'rl' }]);
  await screenshot(page, 'workbench-dashboard');
  assert.deepEqual(problems, []);
});

test('the evaluation chart has a "log y" too: ticks at powers of ten down to the lowest accuracy drawn, remembered after a reload', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await dashboardReady(page);
  const chart = page.locator('[data-testid=eval-chart]');
  await chart.locator('[data-testid=log-y]').click();
  const logTicks = async () => {
    await page.waitForFunction(() => {
      const el = document.querySelector('[data-testid=eval-chart]') as HTMLElement | null;
      return el?.dataset.yScale === 'logarithmic' && JSON.parse(el.dataset.ticks ?? '{"y":[]}').y.includes('0.01');
    });
    return JSON.parse((await page.locator('[data-testid=eval-chart]').getAttribute('data-ticks')) ?? '{}') as { y: string[] };
  };
  // The lowest interval end (Wilson of 1/5: 0.036) sets the bottom at 0.01; every label a power of ten.
  assert.deepEqual((await logTicks()).y, ['0.01', '0.1', '1']);
  await page.reload();
  await dashboardReady(page);
  assert.deepEqual((await logTicks()).y, ['0.01', '0.1', '1']);
  await page.locator('[data-testid=eval-chart] [data-testid=log-y]').click();
  await page.waitForFunction(() => (document.querySelector('[data-testid=eval-chart]') as HTMLElement | null)?.dataset.yScale === 'linear');
  assert.deepEqual(problems, []);
});

test('the defaults show what the runs vary (components, groups kept and dropped, the SFT probe) and leave out what is flat or two points', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await dashboardReady(page);
  const cards = await page.locator('[data-testid=chart-card]').evaluateAll((all) => all.map((c) => c.getAttribute('data-metric')));
  assert.deepEqual(cards, ['reward/mean', 'reward components', 'acc/mean', 'tool/call_rate', 'tools/*/calls', 'errors/E1–E6', 'sampling/*_groups', 'response_length/mean', 'sft/loss', 'sft/probe_*', 'actor/entropy', 'timing/step_s']);
  const components = JSON.parse((await page.locator('[data-metric="reward components"]').getAttribute('data-members')) ?? '[]') as string[];
  assert.deepEqual(components, ['reward/accuracy', 'reward/tool_bonus'], 'reward/format (always 1) and reward/repetition (always 0) are flat');
  assert.ok(!cards.includes('actor/kl'), 'kl_coef 0: actor/kl is 0 at every step');
  assert.ok(!cards.includes('tools/*/failed'), 'failures logged on two steps');
  assert.deepEqual(problems, []);
});

test('one colour per run on every chart, each arm in the report\'s colour: a group chart draws each run in its colour, its members by dash', async () => {
  const { page, problems } = await openPage(browser, view.url('dashboard'));
  await dashboardReady(page);
  const swatch = async (run: string) => page.locator(`.run-toggle:has(vscode-checkbox[data-run="${run}"]) .swatch`).evaluate((s) => getComputedStyle(s).backgroundColor);
  const hex = (rgb: string) => `#${(rgb.match(/\d+/g) ?? []).slice(0, 3).map((n) => Number(n).toString(16).padStart(2, '0')).join('')}`;
  const colours = { tools: hex(await swatch('tools')), text: hex(await swatch('text')) };
  assert.notEqual(colours.tools, colours.text);
  // The arms keep the report's colours though the folder lists text first (webview/shared/run-colours.ts).
  assert.deepEqual(colours, { tools: '#1a85ff', text: '#d18616' });
  for (const metric of ['errors/E1–E6', 'reward components', 'reward/mean']) {
    await page.waitForFunction((m) => (document.querySelector(`[data-metric="${m}"]`)?.getAttribute('data-datasets') ?? '[]') !== '[]', metric);
    const datasets = JSON.parse((await page.locator(`[data-metric="${metric}"]`).getAttribute('data-datasets')) ?? '[]') as { run: string; colour: string; dash: number[] }[];
    assert.ok(datasets.length >= 2, metric);
    for (const d of datasets) assert.equal(d.colour.toLowerCase(), colours[d.run.split('\u0000')[0] as 'tools' | 'text'], `${metric}: ${d.run}`);
  }
  const errors = JSON.parse((await page.locator('[data-metric="errors/E1–E6"]').getAttribute('data-datasets')) ?? '[]') as { run: string; dash: number[]; kind: string }[];
  const dashOf = (member: string) => errors.find((d) => d.run === `tools\u0000${member}` && d.kind !== 'raw')?.dash;
  assert.deepEqual(dashOf('errors/E1'), []);
  assert.notDeepEqual(dashOf('errors/E4'), []);
  assert.deepEqual(problems, []);
});

for (const width of [1440, 1100]) {
  test(`at ${width} px nothing is cut: the evaluation tables fit their column or scroll inside it`, async () => {
    const { page, problems } = await openPage(browser, view.url('dashboard'), { width, height: 900 });
    await dashboardReady(page);
    const boxes = await page.locator('.eval-panel .table-scroll').evaluateAll((all) =>
      all.map((box) => {
        const table = box.querySelector('table') as HTMLElement;
        const last = table.querySelector('tr:last-child td:last-child') as HTMLElement;
        return { scroll: getComputedStyle(box).overflowX, fits: table.scrollWidth <= box.clientWidth + 1, lastRight: last.getBoundingClientRect().right, boxRight: box.getBoundingClientRect().right, viewport: window.innerWidth };
      }),
    );
    assert.equal(boxes.length, 2);
    for (const box of boxes) {
      assert.equal(box.scroll, 'auto');
      if (box.fits) assert.ok(box.lastRight <= box.boxRight + 1 && box.boxRight <= box.viewport, JSON.stringify(box));
    }
    await screenshot(page, `workbench-dashboard-${width}`);
    assert.deepEqual(problems, []);
  });
}

test('the viewer opens on the run that called tools; its rows keep one line; small images are shown large enough to read', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer'));
  await page.locator('[data-testid=rollout-detail] [data-testid=image-compare] img').first().waitFor();
  assert.equal(await page.locator('select[data-testid=run-select]').inputValue(), 'tools');
  const rows = await page.locator('[data-testid=rollout-row]').evaluateAll((all) => all.map((row) => ({ height: row.getBoundingClientRect().height, toolsLines: (row.querySelector('.tools') as HTMLElement).getClientRects().length, lineHeight: parseFloat(getComputedStyle(row).lineHeight) || 16 })));
  assert.ok(rows.length >= 8);
  for (const row of rows) {
    assert.equal(row.toolsLines, 1);
    assert.ok(row.height < row.lineHeight * 2, JSON.stringify(row));
  }
  await page.waitForFunction(() => Array.from(document.querySelectorAll('[data-testid=rollout-detail] [data-testid=image-compare] img')).every((i) => (i as HTMLImageElement).naturalWidth > 0));
  const widths = await page.locator('[data-testid=rollout-detail] [data-testid=image-compare] img').evaluateAll((all) => all.map((i) => (i as HTMLImageElement).getBoundingClientRect().width));
  assert.ok(widths.length > 0 && widths.every((w) => w >= 280), `images ${widths.join(', ')} px wide at the default zoom`);
  assert.deepEqual(problems, []);
});

test('at 1100 px the reward breakdown keeps each row on one line, alone and side by side', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer', '&run=text&step=12'), { width: 1100, height: 900 });
  const wrapped = async () => {
    await page.locator('[data-testid=reward-breakdown]:visible').first().waitFor();
    return page.locator('[data-testid=reward-breakdown]:visible tr').evaluateAll((rows) => rows.flatMap((row) => Array.from(row.children).flatMap((cell) => {
      const range = document.createRange();
      range.selectNodeContents(cell);
      const lines = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      return lines.size > 1 ? [`${row.getAttribute('data-term') ?? row.getAttribute('data-step') ?? row.className}: ${cell.textContent}`] : [];
    })));
  };
  assert.deepEqual(await wrapped(), []);
  await page.locator('[data-testid=viewer-mode]').selectOption('evals');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-detail] [data-testid=reward-breakdown]').length === 2);
  assert.deepEqual(await wrapped(), []);
  await screenshot(page, 'workbench-viewer-1100-compare', true);
  assert.deepEqual(problems, []);
});

test('two checkpoints side by side: the counts, the fixed task with both rollouts and their images, and its timeline', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer'));
  await page.locator('[data-testid=rollout-row]').first().waitFor();
  await page.locator('[data-testid=viewer-mode]').selectOption('evals');
  await page.locator('[data-testid=compare-row]').first().waitFor();
  // Opened on the run that called tools: its first evaluation against its last, tools on.
  assert.match(await page.locator('[data-testid=compare-counts]').innerText(), /^B fixed 1 · broke 1 · both wrong 1 · both right 2 \(of 5 tasks\)$/);
  assert.match(await page.locator('[data-testid=compare-a-accuracy]').innerText(), /tools · after_sft \(step 10\) · tools on: 3\/5 = 60\.0 % \[23\.1, 88\.2\]/);
  await page.locator('[data-testid=compare-outcome]').selectOption('fixed');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-row]').length === 1);
  assert.equal(await page.locator('[data-testid=compare-row]').getAttribute('data-prompt'), HELD_OUT[0]);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-detail] [data-testid=rollout]').length === 2);
  assert.deepEqual(await page.locator('[data-testid=compare-detail] [data-testid=rollout-answer]').allInnerTexts(), ['28', '34']);
  await page.waitForFunction(() => Array.from(document.querySelectorAll('[data-testid=compare-detail] img')).every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0));
  // The held-out task over time: every evaluation, both arms.
  await page.locator('[data-testid=compare-detail] [data-testid=task-timeline-button]').click();
  await page.locator('[data-testid=timeline-row]').first().waitFor();
  assert.equal(await page.locator('[data-testid=timeline-row]').count(), EVALS.length * 2);
  assert.match(await page.locator('[data-testid=timeline-summary]').innerText(), /^held out: 2 of 6 correct in 3 evaluations$/);
  await screenshot(page, 'workbench-evaluations', true);
  // The link names the view: opened again, the same two sides, the same filter, the same task.
  const again = await openPage(browser, page.url());
  await again.page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-row]').length === 1);
  assert.equal(await again.page.locator('[data-testid=compare-outcome]').inputValue(), 'fixed');
  assert.deepEqual([...problems, ...again.problems], []);
});

test('side by side, the arm follows the chosen evaluation: A = the text arm after RL compares its tools-off records, not "no task in common"', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer'));
  await page.locator('[data-testid=rollout-row]').first().waitFor();
  await page.locator('[data-testid=viewer-mode]').selectOption('evals');
  await page.locator('[data-testid=compare-row]').first().waitFor();
  assert.equal(await page.locator('[data-testid=compare-a-arm]').inputValue(), 'tools');
  // The text arm evaluated without tools only (trainer/vistool_trainer/trainers/evaluate.py): its records are tools-off ones.
  await page.locator('[data-testid=compare-a-run]').selectOption({ label: 'text' });
  await page.waitForFunction(() => /^A text · after_rl/.test(document.querySelector('[data-testid=compare-a-accuracy]')?.textContent ?? ''));
  assert.equal(await page.locator('[data-testid=compare-a-arm]').inputValue(), 'no_tools');
  // Worked out from the fixture: text right on task 5 only; tools after_rl right on 1, 4, 5.
  assert.match(await page.locator('[data-testid=compare-a-accuracy]').innerText(), /text · after_rl \(step 14\) · tools off: 1\/5 = 20\.0 %/);
  assert.match(await page.locator('[data-testid=compare-counts]').innerText(), /^B fixed 2 · broke 0 · both wrong 2 · both right 1 \(of 5 tasks\)$/);
  // Each side in its arm's colour, the dashboard's and the report's: text orange, tools blue.
  assert.equal(await page.locator('[data-testid=compare-a-accuracy] [data-testid=run-swatch]').getAttribute('data-colour'), '#d18616');
  assert.equal(await page.locator('[data-testid=compare-b-accuracy] [data-testid=run-swatch]').getAttribute('data-colour'), '#1a85ff');
  // Another evaluation of the text arm keeps tools off; the tools arm's run brings tools on back.
  await page.locator('[data-testid=compare-a-eval]').selectOption({ label: 'after_sft · step 10' });
  await page.waitForFunction(() => /^A text · after_sft/.test(document.querySelector('[data-testid=compare-a-accuracy]')?.textContent ?? ''));
  assert.doesNotMatch(await page.locator('[data-testid=compare-a-accuracy]').innerText(), /no task in common/);
  await page.locator('[data-testid=compare-a-run]').selectOption({ label: 'tools' });
  await page.waitForFunction(() => /^A tools · after_rl/.test(document.querySelector('[data-testid=compare-a-accuracy]')?.textContent ?? ''));
  assert.equal(await page.locator('[data-testid=compare-a-arm]').inputValue(), 'tools');
  assert.deepEqual(problems, []);
});

test('"this task over time" goes away when the mode changes: the training steps do not keep an evaluation task\'s timeline', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer'));
  await page.locator('[data-testid=rollout-row]').first().waitFor();
  await page.locator('[data-testid=viewer-mode]').selectOption('evals');
  await page.locator('[data-testid=compare-detail] [data-testid=task-timeline-button]').click();
  await page.locator('[data-testid=timeline-row]').first().waitFor();
  await page.locator('[data-testid=viewer-mode]').selectOption('steps');
  await page.waitForFunction(() => (document.querySelector('[data-testid=task-timeline]') as HTMLElement | null)?.hidden === true);
  // Back to the evaluations: still none until asked for again.
  await page.locator('[data-testid=viewer-mode]').selectOption('evals');
  await page.locator('[data-testid=compare-row]').first().waitFor();
  assert.equal(await page.locator('[data-testid=task-timeline]').isHidden(), true);
  assert.deepEqual(problems, []);
});

test('a training task over time lists each step it was rolled out in, and an entry opens that rollout', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer', '&run=tools&step=12'));
  await page.locator('[data-testid=rollout-detail] [data-testid=task-timeline-button]').click();
  await page.locator('[data-testid=timeline-row]').first().waitFor();
  const expected: number[] = [];
  for (const step of ROLLOUT_STEPS) {
    const lines = (await readFile(join(demo.tools, 'rollouts', `step-${String(step).padStart(6, '0')}.jsonl`), 'utf8')).trim().split('\n');
    for (const l of lines) if ((JSON.parse(l) as { prompt_id: string }).prompt_id === 'fixture-table') expected.push(step);
  }
  assert.deepEqual(await page.locator('[data-testid=timeline-row]').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-step')))), expected);
  await page.locator('[data-testid=timeline-row][data-step="14"]').last().click();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('step') === '14');
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('group'), 'fixture-table');
  assert.equal(url.searchParams.get('token'), view.token, 'the link keeps the token of this server');
  assert.deepEqual(problems, []);
});

test('a link opens the same rollout and turn', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer', '&run=tools&step=14'));
  await page.locator('[data-testid=rollout-row]').nth(2).click();
  await page.keyboard.press(']');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('turn') === '1');
  const line = await page.locator('.rollout-row.selected').getAttribute('data-line');
  const again = await openPage(browser, page.url());
  await again.page.waitForFunction(() => document.querySelector('[data-testid=rollout-detail]')?.getAttribute('data-active-turn') === '1');
  assert.equal(await again.page.locator('.rollout-row.selected').getAttribute('data-line'), line);
  assert.deepEqual([...problems, ...again.problems], []);
});

test('an annotation is saved to annotations.jsonl in its schema, marks its row, filters the list, and its text stays text', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer', '&run=tools&step=12'));
  await page.locator('[data-testid=rollout-detail] [data-testid=annotation-tags]').first().fill('copies label, look again');
  await page.locator('[data-testid=rollout-detail] [data-testid=annotation-comment]').first().fill(HOSTILE_TEXT);
  await page.locator('[data-testid=rollout-detail] [data-testid=annotation-save]').first().click();
  await page.locator('[data-testid=rollout-detail] [data-testid=annotation]').waitFor();
  assert.deepEqual(await page.locator('[data-testid=rollout-detail] [data-testid=tag-chip]').allInnerTexts(), ['copies label', 'look again']);
  assert.equal(await page.locator('[data-testid=annotated-mark]').count(), 1);
  const line = Number(await page.locator('.rollout-row.selected').getAttribute('data-line'));
  const saved = (await readFile(join(demo.tools, 'annotations.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const validate = new Ajv({ strict: false }).compile(JSON.parse(await readFile(join(__dirname, '..', '..', 'schemas', 'annotation.schema.json'), 'utf8')) as object);
  assert.equal(saved.length, 1);
  assert.ok(validate(saved[0]), JSON.stringify(validate.errors));
  assert.deepEqual(saved[0]?.target, { kind: 'step', step: 12, line, prompt_id: 'fixture-table' });
  await page.locator('[data-testid=filter-annotation]').selectOption('tag:look again');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=rollout-row]').length === 1);
  assert.equal(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined);
  assert.equal(await page.locator('[data-testid=annotations] img, [data-testid=annotations] script, [data-testid=annotations] iframe').count(), 0);
  assert.deepEqual(problems, []);
});

test('Replay in playground opens the task image with its metadata and applies the logged call; the form holds it', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer', '&run=tools&step=12'));
  const replay = page.locator('[data-testid=rollout-detail] [data-testid=replay-in-playground]').first();
  await replay.waitFor();
  const args = JSON.parse(await page.locator('[data-testid=rollout-detail] [data-testid=call-args]').first().innerText()) as { columns: string[] };
  await replay.click();
  await page.waitForURL(/\/playground\?/);
  await page.waitForFunction(() => document.querySelector('[data-testid=stage]')?.getAttribute('data-images') === '2');
  assert.equal(await page.locator('[data-testid=chain-item]').count(), 1);
  assert.equal(await page.locator('[data-testid=tool-select]').inputValue(), 'focus_on_columns_with_mask');
  const checked = await page.locator('[data-testid=label-option]').evaluateAll((boxes) => boxes.filter((b) => (b as HTMLInputElement).checked).map((b) => (b as HTMLInputElement).value));
  assert.deepEqual(checked.sort(), [...args.columns].sort());
  assert.match(await page.locator('[data-testid=metadata-source]').innerText(), /task fixture-table/);
  assert.match(await page.locator('[data-testid=playground-message]').innerText(), /^Replayed 1 call\(s\) as logged/);
  await page.goBack();
  await page.locator('[data-testid=rollout-row]').first().waitFor();
  assert.deepEqual(problems, []);
});

test("a veRL run and a vistool run draw on one reward chart; a one-step chart spans whole steps; a record's weights are explained", async () => {
  const { page, problems } = await openPage(browser, verlView.url('dashboard'));
  await page.waitForFunction(() => /"verl-run":1/.test(document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points') ?? ''));
  assert.deepEqual(JSON.parse((await page.locator('[data-metric="reward/mean"]').getAttribute('data-points')) ?? '{}'), { tools: 4, 'verl-run': 1 });
  assert.equal(await page.locator('[data-metric="critic/score/mean"]').count(), 0, "veRL's name is drawn under the trainer's");
  const alone = await openPage(browser, verlView.url('dashboard'));
  await alone.page.locator('.run-toggle vscode-checkbox[data-run="tools"]').click();
  await alone.page.waitForFunction(() => document.querySelector('[data-metric="acc/mean"]')?.getAttribute('data-x-range') === '{"min":0,"max":2}');
  const viewer = await openPage(browser, verlView.url('viewer', '&run=verl-run&step=1'));
  await viewer.page.locator('[data-testid=weights-from]').waitFor();
  assert.match(await viewer.page.locator('[data-testid=weights-from]').innerText(), /weights from the env server's default reward config/);
  const shown = Number(await viewer.page.locator('.rollout-row.selected').getAttribute('data-line'));
  const record = JSON.parse((await readFile(join(verl, 'rollouts', 'step-000001.jsonl'), 'utf8')).split('\n')[shown] ?? '{}') as { reward: number };
  assert.equal(await viewer.page.locator('[data-testid=rollout-detail] [data-testid=reward-total]').first().innerText(), String(record.reward));
  assert.deepEqual([...problems, ...alone.problems, ...viewer.problems], []);
});

test('the static bundle opens from file:// with no server: the dashboard, the viewer, the comparison, search and links; hostile text stays inert', async () => {
  const out = join(root, 'bundle');
  await writeBundle([demo.text, demo.tools, hostile], out, ASSETS);
  const dashboard = await openPage(browser, `file://${out}/dashboard.html`);
  await dashboard.page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('"tools":4'));
  await dashboard.page.locator('[data-testid=eval-chart]').waitFor();
  // The folder's report travels with the bundle (runs/<run>/report/report.html), and the Report button opens it.
  const opened = dashboard.page.context().waitForEvent('page');
  await dashboard.page.locator('[data-testid=open-report]').click();
  const reportPage = await opened;
  await reportPage.waitForLoadState();
  assert.equal(await reportPage.locator('h1').innerText(), 'Demo report');
  assert.match(reportPage.url(), /^file:.*\/runs\/(tools|text)\/report\/report\.html$/);
  const viewer = await openPage(browser, `file://${out}/viewer.html?run=hostile&step=1`);
  await viewer.page.locator('[data-testid=rollout-detail] [data-testid=rollout]').waitFor();
  await viewer.page.waitForFunction(() => Array.from(document.querySelectorAll('[data-testid=rollout-detail] img')).every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0));
  assert.equal(await viewer.page.locator('[data-testid=replay-in-playground], [data-testid=open-in-playground]').count(), 0, 'no playground in a bundle');
  for (const rollout of await viewer.page.locator('[data-testid=rollout-row]').all()) await rollout.click();
  assert.equal(await viewer.page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined);
  assert.equal(await viewer.page.locator('[data-testid=rollout-detail] script, [data-testid=rollout-detail] iframe, [data-testid=group-list] img').count(), 0);
  // The search across steps runs in the page.
  await viewer.page.locator('[data-testid=run-search-query] >> input').fill('__xss');
  await viewer.page.locator('[data-testid=run-search-go]').click();
  await viewer.page.waitForFunction(() => document.querySelector('[data-testid=run-search]')?.getAttribute('data-state') === 'done');
  // Every hostile rollout holds the text in its turns (run-directory.ts HOSTILE_GROUP), and its snippets are text.
  assert.equal(await viewer.page.locator('[data-testid=run-search]').getAttribute('data-total'), String(HOSTILE_GROUP.length));
  assert.equal(await viewer.page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined);
  // The comparison and a link to it.
  const compared = await openPage(browser, `file://${out}/viewer.html?run=tools&mode=evals&a=tools|eval-after_sft|tools&b=tools|eval-after_rl|tools&outcome=broken`);
  await compared.page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-row]').length === 1);
  assert.equal(await compared.page.locator('[data-testid=compare-row]').getAttribute('data-prompt'), HELD_OUT[1]);
  await screenshot(compared.page, 'workbench-bundle-evaluations');
  assert.deepEqual([...dashboard.problems, ...viewer.problems, ...compared.problems], []);
});
