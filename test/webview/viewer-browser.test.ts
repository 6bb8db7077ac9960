import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { FLAT_GROUP, HOSTILE_GROUP, HOSTILE_TEXT, TABLE_GROUP, writeRunDirectory } from '../runs/run-directory.js';
import { ensureBundles, launchBrowser, openPage, screenshot, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;
let runDir: string;
let hostileView: ViewSession;
/** A run directory name that is itself markup: the index page and the panels must show it as text. */
const HOSTILE_RUN = 'run-<img src=x onerror="window.__xss=9">';

before(async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-viewer-browser-'));
  runDir = join(root, 'run-a');
  const [run, hostile] = await Promise.all([
    writeRunDirectory(join(root, 'run-a'), { rolloutSteps: [1, 2], groups: [TABLE_GROUP, FLAT_GROUP], metricRows: 5, tokenViews: true }),
    writeRunDirectory(join(root, HOSTILE_RUN), { rolloutSteps: [1], groups: [HOSTILE_GROUP], question: `Which rider? ${HOSTILE_TEXT}`, metricRows: 3 }),
    ensureBundles(),
  ]);
  browser = await launchBrowser();
  view = await startView([run]);
  hostileView = await startView([hostile]);
});

after(async () => {
  await browser?.close();
  await view?.stop();
  await hostileView?.stop();
});

async function openViewer(session: ViewSession = view): Promise<{ page: Page; problems: string[] }> {
  const opened = await openPage(browser, session.url('viewer'));
  await opened.page.locator('[data-testid=rollout]').first().waitFor();
  return opened;
}

const rowLines = (page: Page) => page.locator('[data-testid=rollout-row]').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-line'))));
const selectedLine = (page: Page) => page.locator('[data-testid=rollout-row][aria-selected=true]').getAttribute('data-line');

test('the viewer opens the latest step with prompt groups: gold, reward spread, kept or filtered, rollouts best first', async () => {
  const { page, problems } = await openViewer();
  assert.equal(await page.locator('[data-testid=step-select]').inputValue(), '2');
  const groups = page.locator('[data-testid=group]');
  assert.equal(await groups.count(), 2);
  assert.match(await groups.nth(0).innerText(), /How many wins does Merckx have\?[\s\S]*gold 34[\s\S]*reward 0\.\d+–1\.\d+[\s\S]*3\/4 correct[\s\S]*kept/);
  assert.match(await groups.nth(1).innerText(), /Which year has the highest value\?[\s\S]*gold 2020[\s\S]*4\/4 correct[\s\S]*filtered/);
  const rewards = await groups.nth(0).locator('.reward').allInnerTexts();
  assert.deepEqual(rewards.map(Number), [...rewards.map(Number)].sort((a, b) => b - a), 'rollouts are sorted by reward, best first');
  assert.match(await page.locator('[data-testid=rollout-answer]').innerText(), /^34$/);
  assert.deepEqual(problems, []);
});

test('a group the trainer dropped because an episode failed at the env server says so; a flat group still says every rollout scored the same', async () => {
  // The trainer's records with rl.failed_groups 'drop': the table group's second episode failed at
  // the env server, so the group was not trained; the flat group was dropped by dynamic sampling.
  const dir = await writeRunDirectory(join(await mkdtemp(join(tmpdir(), 'vistool-viewer-failed-')), 'run-failed'), { rolloutSteps: [1], groups: [TABLE_GROUP, FLAT_GROUP] });
  const file = join(dir, 'rollouts', 'step-000001.jsonl');
  const lines = (await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  await writeFile(file, lines.map((record, index) => JSON.stringify({ ...record, kept: false, env_failed: index === 1 })).join('\n') + '\n');
  const session = await startView([dir]);
  try {
    const { page, problems } = await openViewer(session);
    const badges = page.locator('[data-testid=group] .group-meta vscode-badge');
    assert.equal(await badges.count(), 2);
    assert.deepEqual(await badges.allInnerTexts(), ['dropped', 'filtered']);
    assert.match((await badges.nth(0).getAttribute('title')) ?? '', /^dropped: an episode failed at the env server/);
    assert.match((await badges.nth(1).getAttribute('title')) ?? '', /^every rollout scored the same: dynamic sampling drops this group$/);
    assert.equal(await page.locator('[data-testid=group]').nth(0).locator('.env-failed').count(), 1, 'the failed episode\'s row says so');
    assert.deepEqual(problems, []);
  } finally {
    await session.stop();
  }
});

test('j and k step through rollouts, ] and [ through turns; a tool turn shows the images before and after, both loaded', async () => {
  const { page, problems } = await openViewer();
  const order = await rowLines(page);
  assert.equal(await selectedLine(page), String(order[0]));
  await page.keyboard.press('j');
  await page.waitForFunction((line) => document.querySelector('[aria-selected=true]')?.getAttribute('data-line') === line, String(order[1]));
  await page.keyboard.press('k');
  await page.waitForFunction((line) => document.querySelector('[aria-selected=true]')?.getAttribute('data-line') === line, String(order[0]));
  const detail = page.locator('[data-testid=rollout-detail]');
  assert.equal(await detail.getAttribute('data-active-turn'), '0');
  await page.keyboard.press(']');
  assert.equal(await detail.getAttribute('data-active-turn'), '1');
  await page.keyboard.press(']');
  await page.keyboard.press('[');
  assert.equal(await detail.getAttribute('data-active-turn'), '1');
  assert.equal(await page.locator('[data-testid=turn].active').getAttribute('data-turn'), '1');

  const compare = page.locator('[data-testid=turn][data-turn="0"] [data-testid=image-compare]').first();
  const images = compare.locator('img');
  assert.deepEqual(await images.evaluateAll((imgs) => imgs.map((i) => i.getAttribute('data-role'))), ['before', 'after']);
  await page.waitForFunction(() => Array.from(document.querySelectorAll('[data-turn="0"] [data-testid=image-compare] img')).every((i) => (i as HTMLImageElement).naturalWidth > 0));
  assert.deepEqual(await images.evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).naturalWidth)), [460, 460]);
  await compare.locator('[data-testid=diff-toggle]').click();
  await compare.locator('[data-testid=diff-summary]').waitFor();
  assert.ok(Number(await compare.locator('[data-testid=diff-summary]').getAttribute('data-changed')) > 10_000, 'masking three columns changes many pixels');
  await page.locator('[data-testid=zoom]').evaluate((input: HTMLInputElement) => {
    input.value = '1';
    input.dispatchEvent(new Event('input'));
  });
  // An image narrower than ZOOM_BASE_WIDTH (560) is shown as if it were that wide (image-compare.ts), so 100 % is 560 px.
  assert.equal(await images.first().evaluate((i) => (i as HTMLImageElement).getBoundingClientRect().width), 560);
  await screenshot(page, 'viewer-turn-images-diff');
  assert.deepEqual(problems, []);
});

test('filters narrow the list by outcome, tool use, error class and tool name, and search finds questions', async () => {
  const { page, problems } = await openViewer();
  const all = (await rowLines(page)).length;
  assert.equal(all, 8);
  const count = async () => (await rowLines(page)).length;
  await page.locator('[data-testid=filter-outcome]').selectOption('incorrect');
  assert.equal(await count(), 1);
  // The detail pane loads the newly selected rollout after the list narrows: wait for it to arrive.
  await page.waitForFunction(() => document.querySelector('[data-testid=rollout-answer]')?.textContent?.trim() === '28', undefined, { timeout: 5000 }).catch(() => undefined);
  assert.match(await page.locator('[data-testid=rollout-answer]').innerText(), /^28$/);
  await page.locator('[data-testid=filter-outcome]').selectOption('all');
  await page.locator('[data-testid=filter-tools]').selectOption('none');
  assert.equal(await count(), 2, 'the no-tool guess and the rollout whose only call failed');
  await page.locator('[data-testid=filter-tools]').selectOption('all');
  await page.locator('[data-testid=filter-error]').selectOption('E4');
  assert.equal(await count(), 1);
  await page.waitForFunction(() => /unknown column 'Points'/.test(document.querySelector('[data-testid=rollout-detail] .call-error')?.textContent ?? ''), undefined, { timeout: 5000 }).catch(() => undefined);
  assert.match(await page.locator('[data-testid=rollout-detail] .call-error').first().innerText(), /E4.*unknown column 'Points'/);
  await page.locator('[data-testid=filter-error]').selectOption('');
  await page.locator('[data-testid=filter-tool]').selectOption('focus_on_x_values_with_highlight');
  assert.equal(await count(), 4);
  await page.locator('[data-testid=filter-tool]').selectOption('');
  await page.locator('[data-testid=search] >> input').fill('year');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=group]').length === 1);
  assert.match(await page.locator('[data-testid=group]').innerText(), /Which year/);
  await screenshot(page, 'viewer-search');
  assert.deepEqual(problems, []);
});

test('the reward breakdown shows each term’s weight and what it adds, and they sum to the recorded reward; checks stand apart', async () => {
  const { page, problems } = await openViewer();
  const line = Number(await selectedLine(page));
  const text = await readFile(join(runDir, 'rollouts', 'step-000002.jsonl'), 'utf8');
  const record = JSON.parse(text.split('\n')[line]!) as { reward: number; reward_breakdown: Record<string, number>; reward_weights: Record<string, number> };
  const table = page.locator('[data-testid=rollout-detail] [data-testid=reward-breakdown]');
  await table.waitFor();
  // Every weighted term is shown with the writer's weight and weight × value (computed here from the file).
  let sum = 0;
  for (const [name, weight] of Object.entries(record.reward_weights)) {
    const value = record.reward_breakdown[name] ?? 0;
    sum += weight * value;
    const cells = await table.locator(`tr[data-term="${name}"] td`).allInnerTexts();
    assert.equal(Number(cells[0]), Number(value.toFixed(3)), `${name} value`);
    assert.equal(cells[1], `× ${Number(weight.toFixed(3))}`, `${name} weight`);
    assert.equal(cells[2], `= ${Number((weight * value).toFixed(3))}`, `${name} adds`);
  }
  assert.ok(Object.keys(record.reward_weights).length >= 3);
  assert.equal(Number(await table.locator('tr.subtotal td').first().innerText()), Number(sum.toFixed(3)));
  assert.equal(Number(await table.locator('[data-testid=reward-total]').innerText()), Number(record.reward.toFixed(3)));
  assert.equal(await page.locator('[data-testid=rollout-detail] [data-testid=reward-mismatch]').count(), 0);
  // accuracy_rule is a check, not a second accuracy term.
  assert.equal(await table.locator('tr[data-term=accuracy_rule]').count(), 0);
  const checks = page.locator('[data-testid=rollout-detail] [data-testid=reward-checks]');
  await checks.locator('summary').click();
  assert.match(await checks.locator('[data-check=accuracy_rule]').innerText(), /accuracy_rule \d.*\(the same as accuracy\)/);
  await screenshot(page, 'viewer-reward-breakdown');
  assert.deepEqual(problems, []);
});

test('groups sort by mean reward or spread (j/k follow), the step slider opens a step, and the step’s histograms count its rollouts', async () => {
  const { page, problems } = await openViewer();
  const lines = (await readFile(join(runDir, 'rollouts', 'step-000002.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { prompt_id: string; reward: number; advantage: number });
  // The expected orders, from the file: mean reward per prompt, and the reward spread.
  const byPrompt = new Map<string, number[]>();
  for (const r of lines) byPrompt.set(r.prompt_id, [...(byPrompt.get(r.prompt_id) ?? []), r.reward]);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const prompts = [...byPrompt.keys()];
  const expected = {
    'reward-desc': [...prompts].sort((a, b) => mean(byPrompt.get(b)!) - mean(byPrompt.get(a)!)),
    'reward-asc': [...prompts].sort((a, b) => mean(byPrompt.get(a)!) - mean(byPrompt.get(b)!)),
    'spread-desc': [...prompts].sort((a, b) => (Math.max(...byPrompt.get(b)!) - Math.min(...byPrompt.get(b)!)) - (Math.max(...byPrompt.get(a)!) - Math.min(...byPrompt.get(a)!))),
  };
  assert.notDeepEqual(expected['reward-desc'], expected['reward-asc'], 'the fixture tells the orders apart');
  for (const [order, prompts] of Object.entries(expected)) {
    await page.locator('[data-testid=group-order]').selectOption(order);
    await page.waitForFunction((first) => document.querySelector('[data-testid=group]')?.getAttribute('data-prompt') === first, prompts[0]);
    assert.deepEqual(await page.locator('[data-testid=group]').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-prompt'))), prompts, order);
    // j walks the list as shown: from the first group's last row to the second group's first.
    await page.locator('[data-testid=group]').first().locator('[data-testid=rollout-row]').last().click();
    await page.keyboard.press('j');
    const next = await page.locator('[data-testid=group]').nth(1).locator('[data-testid=rollout-row]').first().getAttribute('data-line');
    await page.waitForFunction((line) => document.querySelector('[aria-selected=true]')?.getAttribute('data-line') === line, next);
  }
  // Histograms of the whole step: every rollout counted once, in reward and in advantage.
  const counts = async (name: string) => (await page.locator(`[data-testid=histogram-${name}]`).getAttribute('data-counts'))!.split(',').map(Number);
  assert.equal((await counts('reward')).reduce((a, b) => a + b, 0), lines.length);
  assert.equal((await counts('advantage')).reduce((a, b) => a + b, 0), lines.length);
  const rewards = lines.map((r) => r.reward);
  assert.equal((await counts('reward')).at(-1), rewards.filter((r) => r === Math.max(...rewards)).length, 'the top bin holds the best rewards');
  await screenshot(page, 'viewer-sorted-histograms');
  // The slider moves over the step files and opens the one it is released on.
  const slider = page.locator('[data-testid=step-slider]');
  assert.equal(await slider.inputValue(), '1');
  await slider.fill('0');
  await page.waitForFunction(() => (document.querySelector('[data-testid=step-select]') as HTMLSelectElement | null)?.value === '1');
  assert.equal(await page.locator('.step-slider-value').innerText(), 'step 1');
  assert.deepEqual(problems, []);
});

test('the token view shows each scored token of a turn with its log-prob, entropy and loss mask, shaded by surprise or entropy', async () => {
  const { page, problems } = await openViewer();
  const line = Number(await selectedLine(page));
  const text = await readFile(join(runDir, 'rollouts', 'step-000002.jsonl'), 'utf8');
  const record = JSON.parse(text.split('\n')[line]!) as { turns: { role: string; text: string }[]; token_view: { turn: number; tokens: string[]; logprob: number[]; entropy: number[]; mask: number[] }[] };
  const last = record.token_view.at(-1)!;
  const view = page.locator(`[data-testid=rollout-detail] [data-testid=turn][data-turn="${last.turn}"] [data-testid=token-view]`);
  await view.locator('summary').click();
  const tokens = view.locator('[data-testid=token]');
  assert.equal(await tokens.count(), last.tokens.length);
  const shown = await tokens.evaluateAll((spans) => spans.map((s) => ({ lp: Number(s.getAttribute('data-logprob')), entropy: Number(s.getAttribute('data-entropy')), mask: Number(s.getAttribute('data-mask')), strength: Number((s as HTMLElement).style.getPropertyValue('--strength')), struck: getComputedStyle(s).textDecorationLine, title: s.getAttribute('title') })));
  assert.deepEqual(shown.map((s) => [s.lp, s.entropy, s.mask]), last.tokens.map((_, i) => [last.logprob[i], last.entropy[i], last.mask[i]]));
  // Shaded by surprise: 1 − p, from the file's log-probs.
  assert.deepEqual(shown.map((s) => s.strength), last.logprob.map((lp) => Math.round((1 - Math.exp(lp)) * 100) / 100));
  // The token outside the loss is struck through, and its hover says so.
  const outside = last.mask.indexOf(0);
  assert.ok(outside >= 0);
  assert.equal(shown[outside]!.struck, 'line-through');
  assert.match(shown[outside]!.title ?? '', /not in the loss/);
  assert.match(shown[0]!.title ?? '', new RegExp(`log p ${Number(last.logprob[0]!.toFixed(3))}.*entropy ${Number(last.entropy[0]!.toFixed(3))}.*in the loss`));
  // By entropy: each against the turn's largest.
  await view.locator('[data-testid=token-shading]').selectOption('entropy');
  const top = Math.max(...last.entropy);
  const byEntropy = await tokens.evaluateAll((spans) => spans.map((s) => Number((s as HTMLElement).style.getPropertyValue('--strength'))));
  assert.deepEqual(byEntropy, last.entropy.map((e) => Math.round((e / top) * 100) / 100));
  await screenshot(page, 'viewer-token-view');
  assert.deepEqual(problems, []);
});

test('a rollout image opens in the tool playground in the same tab: the task image with its task record’s bands, an edited one on its own', async () => {
  const { page, problems } = await openViewer();
  const detail = page.locator('[data-testid=rollout-detail]');
  await detail.locator('.task-image [data-testid=open-in-playground]').click();
  await page.waitForURL(/\/playground\?/);
  const popup = page;
  await popup.locator('[data-testid=stage] img').first().waitFor();
  assert.match(await popup.locator('[data-testid=metadata-source]').innerText(), /metadata: task fixture-table in .*data\/train\/tasks\.jsonl/);
  // The record's columns, not OCR's guesses: the form offers exactly the table's headers.
  await popup.locator('[data-testid=tool-select]').selectOption('focus_on_columns_with_mask');
  const offered = await popup.locator('.tool-panel input[type=checkbox]').evaluateAll((boxes) => boxes.map((b) => b.parentElement?.textContent?.trim()));
  assert.deepEqual(offered, ['Rider', 'Country', 'Wins', 'Team', 'Year']);
  // The image shown is the rollout's task image, byte for byte.
  const shown = await popup.locator('[data-testid=stage] img').first().evaluate((img) => [(img as HTMLImageElement).naturalWidth, (img as HTMLImageElement).naturalHeight]);
  assert.deepEqual(shown, [460, 220]);
  // Back in the viewer (its place kept), an edited image opens on its own.
  await page.goBack();
  await detail.locator('[data-testid=call] [data-testid=open-in-playground]').first().click();
  await page.waitForURL(/\/playground\?/);
  await page.locator('[data-testid=stage] img').first().waitFor();
  assert.doesNotMatch(await page.locator('[data-testid=metadata-source]').innerText(), /task fixture-table/);
  assert.deepEqual(problems, []);
});

test('compare shows two rollouts of a group side by side', async () => {
  const { page, problems } = await openViewer();
  await page.locator('[data-testid=compare-toggle]').click();
  const lines = await rowLines(page);
  await page.locator(`[data-testid=rollout-row][data-line="${lines[3]}"]`).click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=rollout]').length === 2);
  const answers = await page.locator('[data-testid=rollout-answer]').allInnerTexts();
  assert.deepEqual(answers, ['34', '28']);
  await screenshot(page, 'viewer-compare');
  assert.deepEqual(problems, []);
});

test('the chosen step, rollout and filters survive a reload', async () => {
  const { page, problems } = await openViewer();
  await page.locator('[data-testid=step-select]').selectOption('1');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=rollout-row]').length === 8);
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  const chosen = await selectedLine(page);
  await page.locator('[data-testid=filter-outcome]').selectOption('correct');
  const stillChosen = await selectedLine(page);
  await page.reload();
  await page.locator('[data-testid=rollout]').first().waitFor();
  assert.equal(await page.locator('[data-testid=step-select]').inputValue(), '1');
  assert.equal(await page.locator('[data-testid=filter-outcome]').inputValue(), 'correct');
  assert.equal(await selectedLine(page), stillChosen);
  assert.ok(chosen !== null);
  assert.deepEqual(problems, []);
});

test('model text with script tags, onerror images, javascript: links and markdown stays inert, visible text', async () => {
  const { page, problems } = await openViewer(hostileView);
  const lines = await rowLines(page);
  assert.equal(lines.length, 2);
  for (const line of lines) {
    await page.locator(`[data-testid=rollout-row][data-line="${line}"]`).click();
    await page.waitForFunction((l) => document.querySelector('[aria-selected=true]')?.getAttribute('data-line') === String(l), line);
    await page.locator('[data-testid=rollout]').waitFor();
    await page.waitForTimeout(100); // let any image error handlers that were wrongly created fire
  }
  // The rollout whose own turns carry the hostile text (the other only answers with markup).
  await page.locator(`[data-testid=rollout-row][data-line="${lines[0]}"]`).click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=model-text]').length === 2);
  const text = (await page.locator('[data-testid=model-text]').allInnerTexts()).join('\n');
  for (const fragment of ['<script>window.__xss = "script-tag"</script>', '<img src=x onerror="window.__xss = \'img-onerror\'">', '[click me](javascript:window.__xss="markdown-link")', '**bold**']) {
    assert.ok(text.includes(fragment), `shown as text: ${fragment}`);
  }
  const injected = await page.evaluate(() => ({
    flag: (window as unknown as { __xss?: unknown }).__xss ?? null,
    scripts: document.querySelectorAll('script:not([type="application/json"])').length,
    handlers: document.querySelectorAll('[onerror],[onload],[onclick]').length,
    frames: document.querySelectorAll('iframe,object,embed').length,
    javascriptLinks: Array.from(document.querySelectorAll('a')).filter((a) => a.href.startsWith('javascript:')).length,
    bold: document.querySelectorAll('strong b, .model-text b, .model-text strong').length,
  }));
  assert.deepEqual(injected, { flag: null, scripts: 1, handlers: 0, frames: 0, javascriptLinks: 0, bold: 0 });
  await screenshot(page, 'viewer-hostile-text');
  assert.deepEqual(problems, []);
});

test('a run directory whose name is markup is shown as text on the index page and the dashboard', async () => {
  const index = await openPage(browser, `${hostileView.base}/?token=${hostileView.token}`);
  assert.match(await index.page.locator('.run-list').innerText(), /run-<img src=x onerror="window.__xss=9">/);
  const dashboard = await openPage(browser, hostileView.url('dashboard'));
  await dashboard.page.locator('[data-testid=chart-card]').first().waitFor();
  assert.match(await dashboard.page.locator('.run-toggles').innerText(), /run-<img src=x onerror="window.__xss=9">/);
  for (const page of [index.page, dashboard.page]) assert.equal(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss ?? null), null);
  assert.deepEqual([...index.problems, ...dashboard.problems], []);
  assert.deepEqual([...view.panelErrors, ...hostileView.panelErrors], []);
});
