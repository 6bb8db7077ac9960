import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { FLAT_GROUP, HOSTILE_GROUP, HOSTILE_TEXT, TABLE_GROUP, writeRunDirectory } from '../runs/run-directory.js';
import { ensureBundles, launchBrowser, openPage, screenshot, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;
let bigView: ViewSession;
let hostileView: ViewSession;
let sparseView: ViewSession;
let sparseDir: string;
let runDir: string;
let bigDir: string;

before(async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-viewer-search-'));
  const [run, big, hostile, sparse] = await Promise.all([
    writeRunDirectory(join(root, 'run-a'), { rolloutSteps: [1, 2, 3], groups: [TABLE_GROUP, FLAT_GROUP], metricRows: 3 }),
    writeRunDirectory(join(root, 'run-big'), { rolloutSteps: [1], groups: [TABLE_GROUP, FLAT_GROUP], metricRows: 3 }),
    writeRunDirectory(join(root, 'run-hostile'), { rolloutSteps: [1, 2], groups: [HOSTILE_GROUP], question: `Which rider? ${HOSTILE_TEXT}`, metricRows: 3 }),
    writeRunDirectory(join(root, 'run-sparse'), { rolloutSteps: [1, 2], groups: [TABLE_GROUP, FLAT_GROUP], metricRows: 3 }),
    ensureBundles(),
  ]);
  // The last step keeps only the bar-chart group: no E4 and no table tools in the step the viewer opens first.
  const last = join(sparse, 'rollouts', 'step-000002.jsonl');
  const kept = (await readFile(last, 'utf8')).split('\n').filter((l) => l !== '' && (JSON.parse(l) as { prompt_id: string }).prompt_id === 'fixture-vbar');
  assert.equal(kept.length, 4);
  await writeFile(last, kept.join('\n') + '\n');
  sparseDir = sparse;
  // 26 steps of 8 rollouts: 208, more than the 200 matches a search lists.
  for (let step = 2; step <= 26; step++) await copyFile(join(big, 'rollouts', 'step-000001.jsonl'), join(big, 'rollouts', `step-${String(step).padStart(6, '0')}.jsonl`));
  runDir = run;
  bigDir = big;
  browser = await launchBrowser();
  [view, bigView, hostileView, sparseView] = await Promise.all([startView([run]), startView([big]), startView([hostile]), startView([sparse])]);
});

after(async () => {
  await browser?.close();
  await Promise.all([view?.stop(), bigView?.stop(), hostileView?.stop(), sparseView?.stop()]);
});

/** Every rollout of the run as [step, line, record], read from the files here (not through the host). */
async function records(dir: string): Promise<{ step: number; line: number; record: Record<string, unknown> & { turns: { text: string }[]; task: { question: string } } }[]> {
  const names = (await readdir(join(dir, 'rollouts'))).filter((n) => /^step-\d+\.jsonl$/.test(n)).sort();
  const out = [];
  for (const name of names) {
    const lines = (await readFile(join(dir, 'rollouts', name), 'utf8')).split('\n').filter((l) => l !== '');
    for (const [line, text] of lines.entries()) out.push({ step: Number(name.slice(5, 11)), line, record: JSON.parse(text) });
  }
  return out;
}

async function openViewer(session: ViewSession): Promise<{ page: Page; problems: string[] }> {
  const opened = await openPage(browser, session.url('viewer'));
  await opened.page.locator('[data-testid=rollout]').first().waitFor();
  return opened;
}

/** Searches and waits for this search's answer (each answer counts up data-answers). */
async function searchAllSteps(page: Page, query: string): Promise<void> {
  const answers = Number((await page.locator('[data-testid=run-search]').getAttribute('data-answers')) ?? 0);
  await page.locator('[data-testid=run-search-query] >> input').fill(query);
  await page.locator('[data-testid=run-search-go]').click();
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=run-search]')?.getAttribute('data-answers') ?? 0) > n, answers);
}

const matchKeys = (page: Page) => page.locator('[data-testid=run-search-match]').evaluateAll((ms) => ms.map((m) => [Number(m.getAttribute('data-step')), Number(m.getAttribute('data-line'))]));
const stepCounts = (page: Page) => page.locator('[data-testid=run-search-step]').evaluateAll((bs) => bs.map((b) => [Number(b.getAttribute('data-step')), Number(b.getAttribute('data-matches'))]));

test('a search across steps finds text the model wrote in every step, counts it per step, and opens a match in another step at its turn', async () => {
  const { page, problems } = await openViewer(view);
  assert.equal(await page.locator('[data-testid=step-select]').inputValue(), '3');
  // Expected from the files: rollouts whose turns say "remember" (the question does not, so the list's own search finds nothing).
  const all = await records(runDir);
  const expected = all.filter(({ record }) => record.turns.some((t) => /remember/i.test(t.text))).map(({ step, line }) => [step, line]);
  assert.equal(expected.length, 3);
  await searchAllSteps(page, 'remember');
  assert.deepEqual(await matchKeys(page), expected);
  assert.deepEqual(await stepCounts(page), expected.map(([step]) => [step, 1]));
  assert.equal(await page.locator('[data-testid=run-search-summary]').innerText(), `3 of ${all.length} rollouts in 3 of 3 steps match “remember”`);
  assert.deepEqual(await page.locator('[data-testid=run-search-match] mark').allInnerTexts(), ['remember', 'remember', 'remember']);
  assert.match(await page.locator('[data-testid=run-search-match]').first().innerText(), /step 1 · line 3 · fixture-table · turn 1 \(assistant\)[\s\S]*<think>I remember it is 28\.<\/think> <answer>28<\/answer>/);
  // The match in step 1 opens step 1 at that rollout.
  const [step, line] = expected[0]!;
  await page.locator(`[data-testid=run-search-match][data-step="${step}"][data-line="${line}"]`).click();
  await page.waitForFunction(() => (document.querySelector('[data-testid=step-select]') as HTMLSelectElement | null)?.value === '1');
  await page.waitForFunction((l) => document.querySelector('[data-testid=rollout-row][aria-selected=true]')?.getAttribute('data-line') === String(l), line);
  await page.waitForFunction(() => document.querySelector('[data-testid=rollout-answer]')?.textContent?.trim() === '28');
  assert.deepEqual(await page.locator('[data-testid=run-search-match][aria-current]').evaluateAll((ms) => ms.map((m) => [Number(m.getAttribute('data-step')), Number(m.getAttribute('data-line'))])), [expected[0]]);
  assert.equal(await page.locator('[data-testid=rollout-detail]').getAttribute('data-active-turn'), '0');
  await screenshot(page, 'viewer-search-all-steps');
  // A call made in a later turn: the match opens that turn (its index, from the file).
  const later = all.filter(({ record }) => record.turns.some((t) => t.text.includes('focus_on_rows_with_highlight')));
  assert.equal(later.length, 3);
  const turn = later[1]!.record.turns.findIndex((t) => t.text.includes('focus_on_rows_with_highlight'));
  assert.ok(turn > 0);
  await searchAllSteps(page, 'focus_on_rows_with_highlight');
  assert.deepEqual(await matchKeys(page), later.map(({ step, line }) => [step, line]));
  await page.locator(`[data-testid=run-search-match][data-step="${later[1]!.step}"]`).click();
  await page.waitForFunction((s) => (document.querySelector('[data-testid=step-select]') as HTMLSelectElement | null)?.value === String(s), later[1]!.step);
  await page.waitForFunction((t) => document.querySelector('[data-testid=rollout-detail]')?.getAttribute('data-active-turn') === String(t), turn);
  assert.equal(await page.locator('[data-testid=rollout-row][aria-selected=true]').getAttribute('data-line'), String(later[1]!.line));
  assert.equal(await page.locator('[data-testid=turn].active').getAttribute('data-turn'), String(turn));
  // The search's text is kept with the viewer's place; its results are asked for again, not kept.
  await page.reload();
  await page.locator('[data-testid=rollout]').first().waitFor();
  assert.equal(await page.locator('[data-testid=run-search-query] >> input').inputValue(), 'focus_on_rows_with_highlight');
  assert.equal(await page.locator('[data-testid=run-search-match]').count(), 0);
  await page.locator('[data-testid=run-search-query] >> input').press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=run-search]')?.getAttribute('data-state') === 'done');
  assert.deepEqual(await matchKeys(page), later.map(({ step, line }) => [step, line]));
  assert.deepEqual(problems, []);
});

test('the list’s filters apply across steps, and a match the list’s own search hides is shown with the search’s filters instead', async () => {
  const { page, problems } = await openViewer(view);
  const all = await records(runDir);
  // Expected from the files: the rollouts with an E4 error in a call.
  const e4 = all.filter(({ record }) => JSON.stringify(record.turns).includes('"class":"E4"')).map(({ step, line }) => [step, line]);
  assert.equal(e4.length, 3);
  await page.locator('[data-testid=filter-error]').selectOption('E4');
  await searchAllSteps(page, '');
  assert.deepEqual(await matchKeys(page), e4);
  assert.match(await page.locator('[data-testid=run-search-summary]').innerText(), /^3 of 24 rollouts in 3 of 3 steps match error E4$/);
  // Now the list searches its questions for "year": the E4 rollout (a table question) is not in it.
  await page.locator('[data-testid=filter-error]').selectOption('');
  await page.locator('[data-testid=search] >> input').fill('year');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=group]').length === 1);
  await page.locator('[data-testid=run-search-step][data-step="2"]').click();
  await page.waitForFunction(() => (document.querySelector('[data-testid=step-select]') as HTMLSelectElement | null)?.value === '2');
  await page.waitForFunction(() => document.querySelector('[data-testid=rollout-row][aria-selected=true]')?.getAttribute('data-line') === '3');
  assert.equal(await page.locator('[data-testid=filter-error]').inputValue(), 'E4');
  assert.equal(await page.locator('[data-testid=search] >> input').inputValue(), '');
  await page.waitForFunction(() => /unknown column 'Points'/.test(document.querySelector('[data-testid=rollout-detail] .call-error')?.textContent ?? ''));
  assert.deepEqual(problems, []);
});

test('after a search the filters offer the error classes and tools of every step, so one the open step lacks can be searched for', async () => {
  const { page, problems } = await openViewer(sparseView);
  const options = (id: string) => page.locator(`[data-testid=${id}] option`).evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter((v) => v !== '' && v !== 'none'));
  // Expected from the files: the classes and tools of step 2 alone, and of the whole run.
  const all = await records(sparseDir);
  const classesOf = (rs: typeof all) => [...new Set(rs.flatMap(({ record }) => [...JSON.stringify(record.turns).matchAll(/"class":"(E\d)"/g)].map((m) => m[1]!)))].sort();
  const toolsOf = (rs: typeof all) => [...new Set(rs.flatMap(({ record }) => (record.turns as { calls?: { name: string }[] }[]).flatMap((t) => (t.calls ?? []).map((c) => c.name))))].sort();
  const lastStep = all.filter(({ step }) => step === 2);
  assert.deepEqual(await options('filter-error'), classesOf(lastStep));
  assert.deepEqual(await options('filter-tool'), toolsOf(lastStep));
  assert.deepEqual(classesOf(all), ['E4']);
  await searchAllSteps(page, '');
  assert.deepEqual(await options('filter-error'), classesOf(all));
  assert.deepEqual(await options('filter-tool'), toolsOf(all));
  await page.locator('[data-testid=filter-error]').selectOption('E4');
  await searchAllSteps(page, '');
  const e4 = all.filter(({ record }) => JSON.stringify(record.turns).includes('"class":"E4"')).map(({ step, line }) => [step, line]);
  assert.deepEqual(await matchKeys(page), e4);
  assert.deepEqual(await stepCounts(page), [[1, 1]]);
  await page.locator('[data-testid=run-search-match]').first().click();
  await page.waitForFunction(() => (document.querySelector('[data-testid=step-select]') as HTMLSelectElement | null)?.value === '1');
  await page.waitForFunction((line) => document.querySelector('[data-testid=rollout-row][aria-selected=true]')?.getAttribute('data-line') === String(line), e4[0]![1]);
  assert.deepEqual(problems, []);
});

test('a search over more rollouts than it lists says how many it lists, and counts every step', async () => {
  const { page, problems } = await openViewer(bigView);
  const all = await records(bigDir);
  assert.equal(all.length, 208);
  await searchAllSteps(page, '');
  assert.equal(await page.locator('[data-testid=run-search-match]').count(), 200);
  assert.equal(await page.locator('[data-testid=run-search]').getAttribute('data-capped'), 'true');
  assert.equal(await page.locator('[data-testid=run-search-summary]').innerText(), '208 of 208 rollouts in 26 of 26 steps match everything · the first 200 are listed');
  assert.deepEqual(await stepCounts(page), Array.from({ length: 26 }, (_, i) => [i + 1, 8]));
  // The last listed is the 200th in step and line order: step 25 (8 × 24 = 192, then 8 more).
  assert.deepEqual((await matchKeys(page)).at(-1), [25, 7]);
  // More: the next matches after the last listed, added to the list; then nothing is left out.
  await page.locator('[data-testid=run-search-more]').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=run-search-match]').length === 208);
  assert.equal(await page.locator('[data-testid=run-search]').getAttribute('data-capped'), 'false');
  assert.deepEqual((await matchKeys(page)).slice(198, 202), [[25, 6], [25, 7], [26, 0], [26, 1]]);
  assert.equal(await page.locator('[data-testid=run-search-more]').count(), 0);
  // A step whose matches are not listed: its count asks for them and opens the first. (The viewer is moved to step 1 first: it opened on 26, the latest.)
  await page.locator('[data-testid=step-select]').selectOption('1');
  await searchAllSteps(page, '');
  assert.equal(await page.locator('[data-testid=run-search-match][data-step="26"]').count(), 0);
  await page.locator('[data-testid=run-search-step][data-step="26"]').click();
  await page.waitForFunction(() => (document.querySelector('[data-testid=step-select]') as HTMLSelectElement | null)?.value === '26');
  await page.waitForFunction(() => document.querySelector('[data-testid=rollout-row][aria-selected=true]')?.getAttribute('data-line') === '0');
  assert.deepEqual(await matchKeys(page), Array.from({ length: 8 }, (_, line) => [26, line]));
  assert.equal(await page.locator('[data-testid=run-search-summary]').innerText(), '208 of 208 rollouts in 26 of 26 steps match everything · 8 listed from step 26');
  // Text found in every step's table questions: 4 per step, 104 in all, none left out.
  await searchAllSteps(page, 'Merckx');
  assert.equal(await page.locator('[data-testid=run-search]').getAttribute('data-capped'), 'false');
  assert.equal(await page.locator('[data-testid=run-search-match]').count(), all.filter(({ record }) => record.task.question.includes('Merckx')).length);
  assert.deepEqual(problems, []);
});

test('snippets of hostile model text found across steps are shown as inert text', async () => {
  const { page, problems } = await openViewer(hostileView);
  await searchAllSteps(page, 'onerror');
  // Both steps' two rollouts: the question itself carries the markup.
  assert.deepEqual(await matchKeys(page), [[1, 0], [1, 1], [2, 0], [2, 1]]);
  const snippets = (await page.locator('[data-testid=run-search-snippet]').allInnerTexts()).join('\n');
  assert.ok(snippets.includes('<img src=x onerror="window.__xss = \'img-onerror\'">'), 'the markup is shown as text');
  await searchAllSteps(page, 'window.__xss = "script-tag"');
  assert.ok((await page.locator('[data-testid=run-search-snippet]').first().innerText()).includes('<script>window.__xss = "script-tag"</script>'));
  // Text only the model wrote: the second rollout's answer markup.
  await searchAllSteps(page, "__xss='answer'");
  assert.deepEqual(await matchKeys(page), [[1, 1], [2, 1]]);
  assert.match(await page.locator('[data-testid=run-search-snippet]').first().innerText(), /<img src=x onerror="window\.__xss='answer'">28/);
  await page.locator('[data-testid=run-search-match]').first().click();
  await page.waitForFunction(() => document.querySelector('[data-testid=rollout-row][aria-selected=true]')?.getAttribute('data-line') === '1');
  await page.waitForTimeout(100); // let any wrongly created image error handler fire
  const injected = await page.evaluate(() => ({
    flag: (window as unknown as { __xss?: unknown }).__xss ?? null,
    scripts: document.querySelectorAll('script:not([type="application/json"])').length,
    handlers: document.querySelectorAll('[onerror],[onload],[onclick]').length,
    images: document.querySelectorAll('[data-testid=run-search] img, [data-testid=run-search] svg, [data-testid=run-search] iframe, [data-testid=run-search] a').length,
  }));
  assert.deepEqual(injected, { flag: null, scripts: 1, handlers: 0, images: 0 });
  await screenshot(page, 'viewer-search-hostile');
  assert.deepEqual(problems, []);
  assert.deepEqual([...view.panelErrors, ...bigView.panelErrors, ...hostileView.panelErrors], []);
});
