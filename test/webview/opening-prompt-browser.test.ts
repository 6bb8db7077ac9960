/**
 * The rollout viewer shows the prompt a rollout's policy read (the record's `opening`, written by
 * the env for the run's presentation): the system turn with the env's tool list, the user turn with
 * the task image and the question, as text even when the question is markup; and a record written
 * before `opening` existed says that it does not have it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { HOSTILE_GROUP, HOSTILE_TEXT, TABLE_GROUP, writeRunDirectory } from '../runs/run-directory.js';
import { ensureBundles, launchBrowser, openPage, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;

before(async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-opening-browser-'));
  const [run] = await Promise.all([
    writeRunDirectory(join(root, 'run-a'), { rolloutSteps: [1, 2], groups: [TABLE_GROUP, HOSTILE_GROUP], question: `Which rider? ${HOSTILE_TEXT}` }),
    ensureBundles(),
  ]);
  // Step 1 as an older writer left it: no `opening`.
  const older = join(run, 'rollouts', 'step-000001.jsonl');
  const lines = (await readFile(older, 'utf8')).trim().split('\n').map((line) => {
    const { opening: _opening, ...rest } = JSON.parse(line) as Record<string, unknown>;
    return JSON.stringify(rest);
  });
  await writeFile(older, lines.join('\n') + '\n');
  browser = await launchBrowser();
  view = await startView([run]);
});

after(async () => {
  await browser?.close();
  await view?.stop();
});

test("a rollout shows the prompt its policy read: the env's system turn, then the image and the question, as text", async () => {
  const { page, problems } = await openPage(browser, view.url('viewer'));
  const prompt = page.locator('[data-testid=rollout] [data-testid=opening-prompt]').first();
  await prompt.waitFor();
  assert.match(await prompt.locator('summary').innerText(), /prompt the policy read \(2 messages\)/);
  await prompt.locator('summary').click();
  const system = prompt.locator('[data-role=system] pre');
  assert.match(await system.innerText(), /## Image tools[\s\S]*focus_on_columns_with_mask/);
  const user = prompt.locator('[data-role=user]');
  assert.equal(await user.locator('img').count(), 1);
  await page.waitForFunction(() => Array.from(document.querySelectorAll('[data-testid=opening-prompt] [data-role=user] img')).every((i) => (i as HTMLImageElement).naturalWidth > 0));
  assert.equal(await user.locator('pre').innerText(), `Question: Which rider? ${HOSTILE_TEXT}`);
  assert.equal(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined);
  assert.deepEqual(problems, []);
});

test('a record written before the prompt was kept says so', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer'));
  await page.locator('[data-testid=rollout]').first().waitFor();
  await page.locator('[data-testid=step-select]').selectOption('1');
  await page.waitForFunction(() => /prompt: not in this record/.test(document.querySelector('[data-testid=rollout] [data-testid=opening-prompt]')?.textContent ?? ''));
  assert.deepEqual(problems, []);
});
