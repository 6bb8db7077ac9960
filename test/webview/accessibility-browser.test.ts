/**
 * Accessibility of every page `vistool view` serves, in the light and the dark theme: the index
 * page, the dashboard, the rollout viewer (a rollout open with its reward breakdown and the step's
 * histograms) and the tool playground (an image open and an error shown). Each page is checked by
 * axe-core (no serious or critical violation) and, independently of axe, by this file's own WCAG
 * contrast computation from the computed colours: every visible text, and by name the texts users
 * measured (the playground's error text, the muted texts) and those on backgrounds of their own.
 * Then the page background: html and body paint the theme's editor background and the body
 * reaches the bottom of the viewport (no strip of another colour under a short page).
 * A screenshot and an axe report (JSON) of each page and theme go to out/test-artefacts/webview/.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { tableFixture } from '../fixtures/render.js';
import { FLAT_GROUP, TABLE_GROUP, writeRunDirectory } from '../runs/run-directory.js';
import { ARTEFACTS, ASSETS, ensureBundles, launchBrowser, openPage, screenshot, startView, type ViewSession, type WatchedPage } from './browser-harness.js';
import { writeDemoFolder } from '../runs/demo-folder.js';
import { writeBundle } from '../../env/view/bundle.js';
import { writeFindingsRun } from '../runs/findings-run.js';

type Theme = 'light' | 'dark';
const THEMES: Theme[] = ['light', 'dark'];

let browser: Browser;
let view: ViewSession;
/** A run whose records carry issue 43's targets, findings and counterfactuals (test/runs/findings-run.ts), served on its own. */
let findingsView: ViewSession;
let imageDir: string;
let bundle: string;
let axeSource: string;

before(async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-a11y-browser-'));
  imageDir = join(root, 'images');
  const [run, fixture, demo] = await Promise.all([
    writeRunDirectory(join(root, 'run-a'), { rolloutSteps: [1, 2], groups: [TABLE_GROUP, FLAT_GROUP], metricRows: 12, evaluations: true, status: 'finished' }),
    tableFixture(),
    // A demo-like folder: evaluations kept task by task, for the evaluations view, a task's timeline and a bundle.
    writeDemoFolder(join(root, 'demo')),
    ensureBundles(),
  ]);
  bundle = join(root, 'bundle');
  await writeBundle([demo.tools, demo.text], bundle, ASSETS);
  await mkdir(imageDir);
  await writeFile(join(imageDir, 'table.png'), fixture.png);
  axeSource = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  browser = await launchBrowser();
  view = await startView([run, demo.tools, demo.text], [imageDir]);
  findingsView = await startView([await writeFindingsRun(join(root, 'findings'))]);
});

after(async () => {
  await browser?.close();
  await view?.stop();
  await findingsView?.stop();
});

// ---------------------------------------------------------------------------------------------
// WCAG 2.x contrast, computed here from the browser's computed colours (not from axe).

type Rgba = [number, number, number, number];

/** Parses a computed colour: rgb()/rgba() as Chromium serialises them, or `transparent`. */
function parseColour(text: string): Rgba {
  if (text === 'transparent') return [0, 0, 0, 0];
  const m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:[\s,/]+([\d.]+%?))?\s*\)$/.exec(text.trim());
  if (!m) throw new Error(`unparsed colour ${text}`);
  const alpha = m[4] === undefined ? 1 : m[4].endsWith('%') ? Number(m[4].slice(0, -1)) / 100 : Number(m[4]);
  return [Number(m[1]), Number(m[2]), Number(m[3]), alpha];
}

/** `top` painted over an opaque `bottom` (source-over). */
function over(top: Rgba, bottom: Rgba): Rgba {
  const a = top[3];
  return [top[0] * a + bottom[0] * (1 - a), top[1] * a + bottom[1] * (1 - a), top[2] * a + bottom[2] * (1 - a), 1];
}

/** WCAG 2.x relative luminance of an sRGB colour (0–255 channels). */
function luminance([r, g, b]: Rgba): number {
  const lin = (c: number) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

function contrastRatio(a: Rgba, b: Rgba): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** One text's painting chain, from the root element down to the element holding the text, as the browser computed it. */
interface Chain {
  text: string;
  colour: string;
  /** background-color and opacity of each element, root first, the element last (shadow roots crossed through their hosts). */
  layers: { background: string; opacity: number }[];
}

/**
 * The painting chains of the elements `selector` matches (playwright's CSS reaches into open shadow
 * roots), or with no selector of every element that holds visible text itself. Hidden, clipped and
 * disabled ones are left out (WCAG does not ask contrast of them).
 */
async function chainsOf(page: Page, selector: string | null): Promise<Chain[]> {
  return page.locator(selector ?? '*').evaluateAll(
    (elements, scan) =>
      elements
        .filter((e) => !scan || (!e.closest('head, script, style, option, canvas, svg') && Array.from(e.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && (n.textContent ?? '').trim() !== '')))
        .map((element) => {
          const owner = element.getRootNode() instanceof ShadowRoot ? (element.getRootNode() as ShadowRoot).host : element;
          const text = (owner.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 60);
          const rect = element.getBoundingClientRect();
          const style = getComputedStyle(element);
          const clipped = element.closest('.visually-hidden, .offscreen') !== null || owner.closest('.visually-hidden, .offscreen') !== null;
          const disabled = owner.closest(':disabled, [disabled], [aria-disabled=true]') !== null;
          if (text === '' || rect.width < 2 || rect.height < 2 || style.visibility !== 'visible' || clipped || disabled) return null;
          const layers: { background: string; opacity: number }[] = [];
          for (let e: Element | null = element; e; e = e.parentElement ?? (e.getRootNode() instanceof ShadowRoot ? (e.getRootNode() as ShadowRoot).host : null)) {
            const computed = getComputedStyle(e);
            layers.unshift({ background: computed.backgroundColor, opacity: Number(computed.opacity) });
          }
          return { text, colour: style.color, layers };
        })
        .filter((c) => c !== null),
    selector === null,
  );
}

/**
 * The text's contrast with the background right behind it: every ancestor's background and the
 * text colour composited as the browser paints them (an element with opacity < 1 is a group
 * blended over what lies behind it), over the white canvas.
 */
function chainContrast(chain: Chain): number {
  const paint = (withText: boolean): Rgba => {
    // From the root down: each element's background over its backdrop, its children over that,
    // the text last; then the whole group blended over the backdrop by the element's opacity.
    const render = (i: number, backdrop: Rgba): Rgba => {
      const { background, opacity } = chain.layers[i]!;
      let inside = over(parseColour(background), backdrop);
      if (i + 1 < chain.layers.length) inside = render(i + 1, inside);
      else if (withText) inside = over(parseColour(chain.colour), inside);
      return over([inside[0], inside[1], inside[2], opacity], backdrop);
    };
    return render(0, [255, 255, 255, 1]);
  };
  return contrastRatio(paint(true), paint(false));
}

// ---------------------------------------------------------------------------------------------
// axe-core

interface AxeNode {
  target: unknown[];
  html: string;
  any: { id: string; data?: { contrastRatio?: number; fgColor?: string; bgColor?: string; expectedContrastRatio?: string; messageKey?: string } | null }[];
}
interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: AxeNode[];
}

/**
 * A page like the harness's openPage (console errors and page errors recorded), in a context with
 * playwright's bypassCSP, for this file's axe runs only. Why: the panels' CSP allows only their own
 * nonced script and their own style sheets, so page.addScriptTag cannot add axe (the first test
 * shows the refusal), and axe itself sets inline styles and adds a <style> while it checks
 * (`style-src 'self'` refuses both), so under the real policy it would check with parts of its
 * machinery blocked. The CSP itself is not relaxed anywhere: the other browser tests run the
 * panels under it and fail on any violation.
 */
async function openAxePage(url: string, viewport = { width: 1400, height: 950 }): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport, bypassCSP: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // axe fetches the page's style sheets with XMLHttpRequest to check them; a file:// page (a
    // bundle) refuses that, as browsers refuse any XHR from file://. The page itself makes none.
    const url = message.location().url;
    if (/^Access to XMLHttpRequest at 'file:[^']*\.css' from origin 'null'/.test(message.text())) return;
    if (message.text() === 'Failed to load resource: net::ERR_FAILED' && url.startsWith('file:') && url.endsWith('.css')) return;
    problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.goto(url);
  return { page, problems };
}

/** Runs axe-core (all its default rules: WCAG 2.0–2.2 A/AA and best practices) on the page. */
async function runAxe(page: Page): Promise<{ violations: AxeViolation[]; incomplete: AxeViolation[] }> {
  await page.addScriptTag({ content: axeSource });
  // axe's results are plain JSON; only the fields read here are kept.
  const results = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document) => Promise<{ violations: AxeViolation[]; incomplete: AxeViolation[] }> } }).axe;
    const { violations, incomplete } = await axe.run(document);
    return { violations, incomplete };
  });
  const plain = (list: AxeViolation[]): AxeViolation[] => list.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, html: n.html.slice(0, 160), any: n.any.map((c) => ({ id: c.id, data: c.data })) })) }));
  return { violations: plain(results.violations), incomplete: plain(results.incomplete) };
}

function describeViolations(violations: AxeViolation[]): string[] {
  const lines: string[] = [];
  for (const v of violations) {
    for (const node of v.nodes) {
      const contrast = node.any.find((c) => c.data?.contrastRatio)?.data;
      const why = node.any.find((c) => c.data?.messageKey)?.data?.messageKey;
      const ratio = contrast ? ` contrast ${contrast.contrastRatio}:1 (${contrast.fgColor} on ${contrast.bgColor}, needs ${contrast.expectedContrastRatio})` : why ? ` (${why})` : '';
      lines.push(`${v.id} [${v.impact}] ${JSON.stringify(node.target)}${ratio} — ${v.help}`);
    }
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// The pages, each brought to the state that shows the most of it.

interface PanelCase {
  name: string;
  url: (theme: Theme) => string;
  /** Tall enough for the viewer's detail pane to show a whole rollout: axe skips text scrolled out of view. */
  viewport?: { width: number; height: number };
  ready: (page: Page) => Promise<void>;
  /** Texts users measured, or that sit on backgrounds of their own: each selector must match, and each match reach 4.5:1. */
  named: string[];
}

const query = (theme: Theme) => `&theme=${theme}`;

async function openViewerRollout(page: Page): Promise<void> {
  await page.locator('[data-testid=rollout-detail] [data-testid=reward-breakdown]').waitFor();
  await page.locator('[data-testid=histogram-reward]').waitFor();
  await page.locator('[data-testid=histogram-advantage]').waitFor();
  await page.locator('[data-testid=rollout-detail] [data-testid=reward-checks] summary').click();
  await page.waitForFunction(() => Array.from(document.querySelectorAll('[data-testid=rollout-detail] img')).every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0));
}

async function openEvaluations(page: Page): Promise<void> {
  await page.locator('[data-testid=compare-row]').first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=compare-detail] [data-testid=rollout]').length === 2);
  await page.locator('[data-testid=compare-detail] [data-testid=task-timeline-button]').click();
  await page.locator('[data-testid=timeline-row]').first().waitFor();
  await page.waitForFunction(() => Array.from(document.querySelectorAll('[data-testid=compare-detail] img')).every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0));
}

const PANELS: PanelCase[] = [
  {
    name: 'index',
    url: (theme) => view.url('', query(theme)),
    ready: async (page) => void (await page.locator('.run-list li').first().waitFor()),
    named: ['.run-list .muted'],
  },
  {
    name: 'dashboard',
    url: (theme) => view.url('dashboard', query(theme)),
    ready: async (page) => {
      await page.locator('[data-testid=chart-card][data-metric="reward/mean"]').waitFor();
      await page.waitForFunction(() => document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-points')?.includes('"run-a":12'));
      await page.locator('.eval-panel table').first().waitFor();
      // The evaluation summary above the charts (the demo runs kept their evaluations task by task).
      await page.locator('[data-testid=eval-summary] [data-testid=answer-grid]').first().waitFor();
      // The metric picker open too: its groups, checkboxes and search field.
      await page.locator('[data-testid=metrics-button]').click();
      await page.locator('.metric-group legend').first().waitFor();
    },
    named: ['.metric-group legend', '.eval-panel td.good', '.chart-stats', 'vscode-button[secondary] .base', '.eval-summary .muted', '.eval-summary .link-button', '.eval-summary .grid-cell.bad', '.eval-summary .grid-cell.good'],
  },
  {
    name: 'viewer',
    url: (theme) => view.url('viewer', query(theme)),
    viewport: { width: 1400, height: 2000 },
    ready: openViewerRollout,
    named: ['.rollout-row.selected .muted', '.group.filtered .group-meta .muted', '.rollout-row .answer.muted', '.reward-breakdown caption', '.reward-breakdown thead th', '.step-histogram figcaption', '.turn-head', '.seg-think', '.seg-tag', '.seg-answer .seg-tag', '.outcome .good', '.call-ok'],
  },
  {
    // The rollout whose call failed (E4): the failed call, its error, the error class, the row's error codes while selected.
    name: 'viewer-failed-call',
    url: (theme) => view.url('viewer', query(theme)),
    viewport: { width: 1400, height: 2000 },
    ready: async (page) => {
      await openViewerRollout(page);
      await page.locator('[data-testid=filter-error]').selectOption('E4');
      await page.waitForFunction(() => /unknown column 'Points'/.test(document.querySelector('[data-testid=rollout-detail] .call-error')?.textContent ?? ''));
      await openViewerRollout(page);
    },
    named: ['.call-failed', '.call-error', '.error-class', '.rollout-row.selected .errors'],
  },
  {
    // The search across steps with its results: the per-step counts, each match's place and its snippet with the found text marked.
    name: 'viewer-run-search',
    url: (theme) => view.url('viewer', query(theme)),
    ready: async (page) => {
      await openViewerRollout(page);
      await page.locator('[data-testid=run-search-query] >> input').fill('Merckx');
      await page.locator('[data-testid=run-search-go]').click();
      await page.waitForFunction(() => document.querySelector('[data-testid=run-search]')?.getAttribute('data-state') === 'done');
    },
    named: ['.run-search-summary', '.run-search-step', '.run-search-where', '.search-snippet', '.search-snippet mark'],
  },
  {
    // Two checkpoints side by side with a task's timeline open and the annotation form (webview/viewer/eval-compare.ts, task-timeline.ts, annotations-view.ts).
    name: 'viewer-evaluations',
    url: (theme) => view.url('viewer', `${query(theme)}&run=tools&mode=evals&a=tools|eval-after_sft|tools&b=tools|eval-after_rl|tools`),
    viewport: { width: 1400, height: 2000 },
    ready: openEvaluations,
    named: ['.compare-summary', '.task-outcome', '.timeline-table td', '.annotations .muted', '.compare-column-head'],
  },
  {
    // The same, in a static bundle opened from file:// (its theme from the link).
    name: 'bundle-evaluations',
    url: (theme) => `file://${bundle}/viewer.html?theme=${theme}&run=tools&mode=evals&a=tools|eval-after_sft|tools&b=tools|eval-after_rl|tools`,
    viewport: { width: 1400, height: 2000 },
    ready: openEvaluations,
    named: ['.compare-summary', '.task-outcome', '.timeline-table td', '.compare-column-head'],
  },
  {
    name: 'bundle-dashboard',
    url: (theme) => `file://${bundle}/dashboard.html?theme=${theme}`,
    ready: async (page) => {
      await page.locator('[data-testid=eval-chart]').waitFor();
      await page.locator('.eval-panel table').first().waitFor();
      await page.locator('[data-testid=eval-summary] [data-testid=answer-grid]').first().waitFor();
    },
    named: ['.chart-stats', '.eval-panel th', '.eval-summary .muted', '.eval-summary .link-button', '.eval-summary .grid-cell.bad'],
  },
  {
    // Issue 43: a rollout's finding badges (the list's and its own) and its calls' targets.
    name: 'viewer-findings',
    url: (theme) => findingsView.url('viewer', `${query(theme)}&run=findings&step=4&line=1`),
    viewport: { width: 1400, height: 2000 },
    ready: async (page) => void (await page.locator('[data-testid=rollout] [data-testid=call-target]').first().waitFor()),
    named: ['.rollout-summary .finding-badge', '.rollout-row .finding-badge', '.call-target', '.findings-line .muted'],
  },
  {
    // An evaluated episode's answer with the tool's result withheld.
    name: 'viewer-counterfactual',
    url: (theme) => findingsView.url('viewer', `${query(theme)}&run=findings&mode=evals&a=findings|eval-after_rl|tools&b=findings|eval-after_rl|tools&task=held-1`),
    viewport: { width: 1400, height: 2000 },
    ready: async (page) => void (await page.locator('[data-testid=counterfactual]').first().waitFor()),
    named: ['.counterfactual .muted', '.counterfactual strong', '.cf-change', '.counterfactual .bad'],
  },
  {
    // The tool-effect chart and the findings table.
    name: 'dashboard-findings',
    url: (theme) => findingsView.url('dashboard', query(theme)),
    ready: async (page) => {
      await page.locator('[data-testid=tool-effect-chart]').waitFor();
      await page.locator('[data-testid=findings-table] [data-testid=findings-link]').first().waitFor();
    },
    named: ['.findings-table th', '.findings-table td', '.findings-table .link-button', '.tool-effect-chart .chart-stats'],
  },
  {
    name: 'playground',
    url: (theme) => view.url('playground', query(theme)),
    ready: async (page) => {
      await page.locator('[data-testid=image-input]').setInputFiles(join(imageDir, 'table.png'));
      await page.locator('[data-testid=stage] img').first().waitFor();
      await page.waitForFunction(() => /^Opened table\.png/.test(document.querySelector('[data-testid=playground-message]')?.textContent ?? ''));
      // An error to look at: a path that is not there (the open image stays).
      await page.locator('[data-testid=path-input]').fill('/no/such/image.png');
      await page.locator('[data-testid=image-input]').setInputFiles([]);
      await page.locator('[data-testid=open-button]').click();
      await page.locator('[data-testid=playground-message].error').waitFor();
    },
    named: ['.playground-message.error', '.tool-description', '.call-chain .muted', 'vscode-button:not([secondary]) .base'],
  },
];

const SERIOUS = new Set(['serious', 'critical']);

// ---------------------------------------------------------------------------------------------

test('the contrast computation gives WCAG\'s reference values, the users\' measurement, and composites opacity', () => {
  const white: Rgba = [255, 255, 255, 1];
  assert.equal(contrastRatio([0, 0, 0, 1], white), 21);
  assert.equal(contrastRatio(white, white), 1);
  assert.equal(contrastRatio(hexColour('#767676'), white).toFixed(2), '4.54');
  assert.equal(contrastRatio(hexColour('#777777'), white).toFixed(2), '4.48');
  // The playground's error text in the dark theme as a user measured it: #f85149 on #5a1d1d.
  assert.equal(contrastRatio(hexColour('#f85149'), hexColour('#5a1d1d')).toFixed(2), '3.85');
  // Black text in an element at opacity 0.5 on white paints half grey (127.5): 3.98:1, not 21:1.
  const half: Chain = { text: 'x', colour: 'rgb(0, 0, 0)', layers: [{ background: 'rgb(255, 255, 255)', opacity: 1 }, { background: 'rgba(0, 0, 0, 0)', opacity: 0.5 }] };
  assert.equal(chainContrast(half).toFixed(2), contrastRatio([127.5, 127.5, 127.5, 1], white).toFixed(2));
  assert.equal(chainContrast(half).toFixed(2), '3.98');
  // A translucent background is composited over what is behind it.
  const tinted: Chain = { text: 'x', colour: 'rgb(0, 0, 0)', layers: [{ background: 'rgb(255, 255, 255)', opacity: 1 }, { background: 'rgba(0, 0, 0, 0.5)', opacity: 1 }] };
  assert.equal(chainContrast(tinted).toFixed(2), '5.28');
});

test('under the panels\' strict CSP an added inline <script> is refused (hence bypassCSP for the axe runs), and with bypassCSP it runs', async () => {
  const strict = await openPage(browser, view.url('playground'));
  await strict.page.locator('[data-testid=tool-select]').waitFor();
  await assert.rejects(strict.page.addScriptTag({ content: 'window.__added = 1;' }));
  assert.equal(await strict.page.evaluate(() => (window as unknown as { __added?: number }).__added), undefined);
  assert.ok(strict.problems.some((p) => /Content Security Policy/.test(p)), `the refusal is reported: ${strict.problems.join('; ')}`);
  const bypassed = await openAxePage(view.url('playground'));
  await bypassed.page.locator('[data-testid=tool-select]').waitFor();
  await bypassed.page.addScriptTag({ content: 'window.__added = 1;' });
  assert.equal(await bypassed.page.evaluate(() => (window as unknown as { __added?: number }).__added), 1);
  assert.deepEqual(bypassed.problems, []);
});

for (const panel of PANELS) {
  for (const theme of THEMES) {
    test(`${panel.name}, ${theme} theme: no serious or critical axe violation, every text at 4.5:1 or more, the theme's background down to the viewport's bottom`, async () => {
      const { page, problems } = await openAxePage(panel.url(theme), panel.viewport);
      await panel.ready(page);
      assert.equal(await page.evaluate(() => document.body.classList.contains('vscode-dark')), theme === 'dark');
      await screenshot(page, `a11y-${panel.name}-${theme}`, true);

      // Every finding is gathered first, so one run lists them all.
      const axe = await runAxe(page);
      const serious = describeViolations(axe.violations.filter((v) => SERIOUS.has(v.impact ?? '')));
      const failures = serious.map((line) => `axe: ${line}`);

      // This file's own contrast computation: the named texts (each must be on the page), then every text.
      const named: Record<string, number> = {};
      for (const selector of panel.named) {
        const chains = await chainsOf(page, selector);
        if (chains.length === 0) failures.push(`missing: nothing on the page matches ${selector}, so its contrast was not measured`);
        else named[selector] = Math.min(...chains.map(chainContrast));
      }
      const low = new Set<string>();
      const texts = await chainsOf(page, null);
      if (texts.length < 5) failures.push(`scan: only ${texts.length} text(s) found on the page`);
      for (const chain of texts) {
        const ratio = chainContrast(chain);
        if (ratio < 4.5) low.add(`contrast: "${chain.text}" at ${ratio.toFixed(2)}:1 (text ${chain.colour}${chain.layers.some((l) => l.opacity < 1) ? `, opacity ${chain.layers.reduce((a, l) => a * l.opacity, 1).toFixed(2)}` : ''})`);
      }
      failures.push(...low);
      for (const [selector, ratio] of Object.entries(named)) if (ratio < 4.5) failures.push(`contrast: ${selector} at ${ratio.toFixed(2)}:1`);
      failures.push(...(await backgroundFindings(page)));

      // What axe reports below serious, and what it could not decide, is kept for a person to read, with the ratios measured here.
      const report = { serious, other: describeViolations(axe.violations.filter((v) => !SERIOUS.has(v.impact ?? ''))), needsReview: describeViolations(axe.incomplete), textsMeasured: texts.length, namedContrast: Object.fromEntries(Object.entries(named).map(([k, v]) => [k, Number(v.toFixed(2))])) };
      await mkdir(ARTEFACTS, { recursive: true });
      await writeFile(join(ARTEFACTS, `a11y-${panel.name}-${theme}.json`), `${JSON.stringify(report, null, 2)}\n`);

      if (failures.length > 0) assert.fail(`${panel.name} (${theme}), ${failures.length} finding(s):\n  ${failures.join('\n  ')}`);
      assert.deepEqual(problems, []);
    });
  }
}

test('the theme switch takes html along: after switching to dark, html and body paint the dark editor background', async () => {
  const { page, problems } = await openPage(browser, view.url('playground'));
  await page.locator('[data-testid=tool-select]').waitFor();
  assert.deepEqual(await backgroundFindings(page), []);
  await page.locator('[data-testid=theme-toggle]').click();
  assert.equal(await page.evaluate(() => document.body.classList.contains('vscode-dark')), true);
  assert.deepEqual(await backgroundFindings(page), []);
  assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).colorScheme), 'dark');
  await screenshot(page, 'a11y-playground-switched-dark');
  assert.deepEqual(problems, []);
});

/** html and body both paint the theme's editor background, and the body reaches the viewport's bottom. */
async function backgroundFindings(page: Page): Promise<string[]> {
  const seen = await page.evaluate(() => ({
    // The editor background as the body's theme defines it (#rrggbb in browser-theme.css).
    editor: getComputedStyle(document.body).getPropertyValue('--vscode-editor-background').trim(),
    html: getComputedStyle(document.documentElement).backgroundColor,
    body: getComputedStyle(document.body).backgroundColor,
    bodyBottom: document.body.getBoundingClientRect().bottom + window.scrollY,
    viewport: window.innerHeight,
    // Where the content ends, and how far the page scrolls: filling the viewport must not add a scrollbar.
    contentBottom: Math.max(0, ...Array.from(document.body.children).map((e) => e.getBoundingClientRect().bottom + parseFloat(getComputedStyle(e).marginBottom) + window.scrollY)),
    scrollHeight: document.documentElement.scrollHeight,
  }));
  const editor = hexColour(seen.editor);
  const findings: string[] = [];
  if (!sameColour(parseColour(seen.html), editor)) findings.push(`background: html paints ${seen.html}, not the editor background ${seen.editor}`);
  if (!sameColour(parseColour(seen.body), editor)) findings.push(`background: body paints ${seen.body}, not the editor background ${seen.editor}`);
  if (seen.bodyBottom < seen.viewport) findings.push(`background: the body ends at ${seen.bodyBottom}px, above the viewport's bottom at ${seen.viewport}px`);
  if (seen.contentBottom <= seen.viewport && seen.scrollHeight > seen.viewport) findings.push(`background: the content ends at ${seen.contentBottom}px but the page scrolls to ${seen.scrollHeight}px (viewport ${seen.viewport}px)`);
  return findings;
}

const sameColour = (a: Rgba, b: Rgba) => a.every((v, i) => v === b[i]);

function hexColour(text: string): Rgba {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(text);
  if (!m) throw new Error(`not a #rrggbb colour: ${text}`);
  return [parseInt(m[1]!, 16), parseInt(m[2]!, 16), parseInt(m[3]!, 16), 1];
}
