/**
 * Issue 43 in the panels, on a run whose records carry the contract's fields (test/runs/findings-run.ts):
 * the viewer's finding badges, call targets, finding filter and an evaluated episode's counterfactual
 * answer; the dashboard's tool-effect chart with its interval and its findings table, whose count
 * opens the viewer filtered to that finding. Each in the light and the dark theme, in the served
 * panels and in a static bundle from file://; a finding name and a counterfactual answer holding
 * markup are shown as text. Expected values are read from the run's files here, not from the panels.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { writeBundle } from '../../env/view/bundle.js';
import { EVAL_LINES, HOSTILE_ANSWER, HOSTILE_FINDING, writeFindingsRun } from '../runs/findings-run.js';
import { ASSETS, ensureBundles, launchBrowser, openPage, screenshot, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;
let runDir: string;
let bundleDir: string;

type Rec = { findings?: string[]; counterfactual?: { answer: string | null; correct: boolean; changed: boolean }; turns: { role: string; calls?: { ok: boolean; target?: string }[] }[] };

async function stepRecords(step: number): Promise<Rec[]> {
  const text = await readFile(join(runDir, 'rollouts', `step-${String(step).padStart(6, '0')}.jsonl`), 'utf8');
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Rec);
}

before(async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-findings-browser-'));
  [runDir] = await Promise.all([writeFindingsRun(join(root, 'findings')), ensureBundles()]);
  browser = await launchBrowser();
  view = await startView([runDir]);
  bundleDir = join(root, 'bundle');
  await writeBundle([runDir], bundleDir, ASSETS);
});

after(async () => {
  await browser?.close();
  await view?.stop();
});

const THEMES = ['light', 'dark'] as const;
const served = (panel: string, query: string) => view.url(panel, query);
const bundled = (panel: string, query: string) => `file://${bundleDir}/${panel}.html?${query.replace(/^&/, '')}`;
const WHERE = [['served', served], ['bundle', bundled]] as const;

async function rowsShown(page: Page): Promise<number[]> {
  return page.locator('[data-testid=rollout-row]').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-line'))).sort((a, b) => a - b));
}

for (const [where, url] of WHERE) {
  for (const theme of THEMES) {
    test(`viewer (${where}, ${theme}): a badge per finding, each call's target in words, and the finding filter keeps what the file says`, async () => {
      const records = await stepRecords(4);
      const { page, problems } = await openPage(browser, url('viewer', `&theme=${theme}&run=findings&step=4&line=1`));
      await page.locator('[data-testid=rollout]').waitFor();
      // Badges in the list: per row, the known findings of its record.
      const known = (r: Rec) => (r.findings ?? []).filter((f) => f !== HOSTILE_FINDING).sort();
      const badges = await page.locator('[data-testid=rollout-row]').evaluateAll((rows) => rows.map((r) => [Number(r.getAttribute('data-line')), Array.from(r.querySelectorAll('[data-testid=finding-badge]')).map((b) => b.getAttribute('data-finding')).sort()] as const));
      for (const [line, names] of badges) assert.deepEqual(names, known(records[line] as Rec), `line ${line}`);
      // Line 1: its off-target badge with the scanner's meaning as tooltip, and its calls' targets.
      const badge = page.locator('[data-testid=rollout] [data-testid=finding-badge][data-finding=off_target_call]');
      assert.equal((await badge.innerText()).trim(), 'off target');
      assert.match((await badge.getAttribute('title')) ?? '', /acted on something other than what the task asks about/);
      const expectedTargets = (records[1] as Rec).turns.flatMap((t) => (t.calls ?? []).map((c) => c.target ?? null)).filter((t) => t !== null);
      const shownTargets = await page.locator('[data-testid=rollout] [data-testid=call-target]').evaluateAll((els) => els.map((e) => [e.getAttribute('data-target'), e.textContent?.trim()]));
      assert.deepEqual(shownTargets.map(([t]) => t), expectedTargets);
      // Words, not colour alone.
      assert.deepEqual(shownTargets.map(([, text]) => text), expectedTargets.map((t) => ({ on: 'on target', partly: 'partly on target', off: 'off target', unknown: 'target unknown' })[t as string]));
      // The filter: only the rollouts whose record names the finding, and the link says so.
      await page.locator('[data-testid=filter-finding]').selectOption('ignored_tool_error');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid=rollout-row]').length === 1);
      assert.deepEqual(await rowsShown(page), records.flatMap((r, i) => ((r.findings ?? []).includes('ignored_tool_error') ? [i] : [])));
      assert.match(page.url(), /finding=ignored_tool_error/);
      await page.locator('[data-testid=filter-finding]').selectOption('none');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid=rollout-row]').length === 1);
      assert.deepEqual(await rowsShown(page), records.flatMap((r, i) => ((r.findings ?? []).length === 0 ? [i] : [])));
      await screenshot(page, `findings-viewer-${where}-${theme}`);
      assert.deepEqual(problems, []);
    });
  }

  test(`viewer (${where}): a finding name and a counterfactual answer holding markup are shown as text, and run nothing`, async () => {
    const { page, problems } = await openPage(browser, url('viewer', '&run=findings&step=4&line=2'));
    await page.locator('[data-testid=rollout] [data-testid=rollout-findings]').waitFor();
    const unknown = page.locator('[data-testid=rollout] [data-testid=finding-badge][data-finding=unrecognised]');
    assert.equal(await unknown.innerText(), `unrecognised: ${HOSTILE_FINDING}`);
    assert.equal(await page.locator('[data-testid=rollout] [data-testid=rollout-findings] script, [data-testid=rollout] [data-testid=rollout-findings] img').count(), 0);
    // The evaluated episode whose replay answered with markup.
    const side = encodeURIComponent('findings|eval-after_rl|tools');
    await page.goto(url('viewer', `&run=findings&mode=evals&a=${side}&b=${side}&task=held-4`));
    const answer = page.locator('[data-testid=counterfactual-answer]').first();
    await answer.waitFor();
    assert.equal(await answer.innerText(), HOSTILE_ANSWER);
    assert.equal(await page.locator('[data-testid=counterfactual] img').count(), 0);
    assert.equal(await page.evaluate(() => (window as { __xss?: unknown }).__xss), undefined);
    assert.deepEqual(problems, []);
  });

  test(`dashboard (${where}): an evaluation's count opens its episodes on which the scanner fired, in the evaluations view`, async () => {
    const evalRecords = (await readFile(join(runDir, 'rollouts', 'eval-after_rl.jsonl'), 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Rec & { prompt_id: string });
    const { page, problems } = await openPage(browser, url('dashboard', ''));
    const link = page.locator('[data-testid=findings-table] [data-testid=findings-eval-count][data-finding=answered_without_looking] [data-testid=findings-eval-link]');
    await link.click();
    await page.waitForURL(/viewer(\.html)?\?/);
    assert.match(page.url(), /mode=evals/);
    assert.match(page.url(), /finding=answered_without_looking/);
    const expected = evalRecords.filter((r) => (r.findings ?? []).includes('answered_without_looking')).map((r) => r.prompt_id);
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=compare-row]').length === n, expected.length);
    assert.deepEqual(await page.locator('[data-testid=compare-row]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-prompt'))), expected);
    assert.match(await page.locator('[data-testid=compare-finding]').innerText(), /answered without looking/);
    // Cleared, every task is back.
    await page.locator('[data-testid=compare-finding-clear]').click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=compare-row]').length === n, evalRecords.length);
    assert.deepEqual(problems, []);
  });

  for (const theme of THEMES) {
    test(`viewer (${where}, ${theme}): an evaluated episode shows its answer with the tool's result withheld beside its own, changed or not, right or wrong`, async () => {
      const evalRecords = (await readFile(join(runDir, 'rollouts', 'eval-after_rl.jsonl'), 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Rec & { prompt_id: string; answer: string });
      const side = encodeURIComponent('findings|eval-after_rl|tools');
      const { page, problems } = await openPage(browser, url('viewer', `&theme=${theme}&run=findings&mode=evals&a=${side}&b=${side}`));
      for (const record of evalRecords) {
        await page.locator(`[data-testid=compare-row][data-prompt="${record.prompt_id}"]`).click();
        const rollout = page.locator(`[data-testid=rollout][data-prompt="${record.prompt_id}"]`).first();
        await rollout.waitFor();
        const cf = rollout.locator('[data-testid=counterfactual]');
        if (!record.counterfactual) {
          assert.equal(await cf.count(), 0, record.prompt_id);
          continue;
        }
        assert.equal(await cf.getAttribute('data-changed'), String(record.counterfactual.changed));
        assert.equal(await cf.locator('[data-testid=counterfactual-answer]').innerText(), record.counterfactual.answer ?? '(no answer)');
        assert.equal((await cf.locator('[data-testid=counterfactual-changed]').innerText()).trim(), record.counterfactual.changed ? 'changed' : 'unchanged');
        assert.equal((await cf.locator('[data-testid=counterfactual-correct]').innerText()).trim(), record.counterfactual.correct ? 'correct' : 'incorrect');
        // Beside the real answer: in the same summary block, right after the outcome line.
        assert.equal(await rollout.locator('.rollout-summary > .outcome + [data-testid=counterfactual]').count(), 1);
      }
      await page.locator('[data-testid=compare-row][data-prompt="held-2"]').click();
      await page.locator('[data-testid=rollout][data-prompt="held-2"] [data-testid=finding-badge][data-finding=answered_without_looking]').first().waitFor();
      await screenshot(page, `findings-counterfactual-${where}-${theme}`);
      assert.deepEqual(problems, []);
    });

    test(`dashboard (${where}, ${theme}): the tool effect with its interval beside the accuracy, the on-target rate, and a findings table whose count opens the viewer filtered`, async () => {
      const { page, problems } = await openPage(browser, url('dashboard', `&theme=${theme}`));
      const chart = page.locator('[data-testid=tool-effect-chart]');
      await page.waitForFunction(() => (document.querySelector('[data-testid=tool-effect-chart]') as HTMLElement | null)?.dataset.datasets !== undefined);
      const intervals = JSON.parse((await chart.getAttribute('data-intervals')) ?? '[]') as { label: string; x: number; y: number; low: number; high: number }[];
      assert.deepEqual(intervals.map((p) => [p.label, p.x, p.y, p.low, p.high]).sort(), EVAL_LINES.map((e) => [e.label, e.step, e['eval/tool_effect'], e['eval/tool_effect_lo'], e['eval/tool_effect_hi']]).sort());
      const series = JSON.parse((await chart.getAttribute('data-series')) ?? '[]') as { metric: string }[];
      assert.deepEqual(series.map((s) => s.metric), ['eval/tool_effect', 'eval/tool_call_rate', 'eval/call_on_target_rate']);
      // Beside the accuracy: the next card in the grid after the evaluation chart.
      assert.equal(await page.locator('[data-testid=eval-chart]:not(.tool-effect-chart) + [data-testid=tool-effect-chart]').count(), 1);
      assert.equal(await page.locator('[data-testid=chart-card][data-metric="tools/call_on_target_rate"]').count(), 1);
      // The evaluation summary's headline (after_rl) with its tool effect: 0.5 [0.05, 0.8] in points.
      const after = EVAL_LINES[2];
      assert.deepEqual([after?.['eval/tool_effect'], after?.['eval/tool_effect_lo'], after?.['eval/tool_effect_hi']], [0.5, 0.05, 0.8]);
      assert.equal(await page.locator('[data-testid=summary-row] [data-testid=summary-tool-effect]').innerText(), '+50.0 points [5.0, 80.0]');
      // The findings table: step 4's counts, as the step file's records have them.
      const records = await stepRecords(4);
      const table = page.locator('[data-testid=findings-table]');
      await table.waitFor();
      for (const name of ['off_target_call', 'repeated_call', 'ignored_tool_error', 'degenerate_edit', 'format_collapse', 'answered_without_looking']) {
        const expected = records.filter((r) => (r.findings ?? []).includes(name)).length;
        assert.equal((await table.locator(`[data-testid=findings-step-count][data-finding=${name}]`).innerText()).trim(), String(expected), name);
        const evalCount = (EVAL_LINES[2] as Record<string, unknown>)[`scan/${name}`];
        assert.equal((await table.locator(`[data-testid=findings-eval-count][data-finding=${name}]`).innerText()).trim(), String(evalCount), name);
      }
      await screenshot(page, `findings-dashboard-${where}-${theme}`, true);
      await table.locator('[data-testid=findings-step-count][data-finding=off_target_call] button').click();
      await page.waitForURL(/viewer(\.html)?\?/);
      assert.match(page.url(), /finding=off_target_call/);
      assert.match(page.url(), /step=4/);
      await page.locator('[data-testid=rollout]').waitFor();
      assert.equal(await page.locator('[data-testid=filter-finding]').inputValue(), 'off_target_call');
      assert.deepEqual(await rowsShown(page), records.flatMap((r, i) => ((r.findings ?? []).includes('off_target_call') ? [i] : [])));
      assert.deepEqual(problems, []);
    });
  }
}
