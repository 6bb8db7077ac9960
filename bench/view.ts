/**
 * `npm run bench -- view`: the dashboard and the rollout viewer on a big run, the way a user
 * meets them. The run is written into a temporary folder first (bench/large-run.ts:
 * VISTOOL_BENCH_VIEW_ROWS metric lines, 100k by default, about 1.2 kB each, and as many
 * trajectories in step files of 100). `vistool view` runs as its own process (the built CLI,
 * as a user starts it), and headless Chromium (playwright-core, Debian's /usr/bin/chromium)
 * opens the panels; long tasks are seen by a PerformanceObserver('longtask') in the page, and
 * when a chart was painted by a MutationObserver on its card's data-draws and data-points (wall
 * clock in the page, so an append in this process and its point on screen share one clock).
 *
 * Each number is printed beside a baseline measured in the same run:
 * - listening, and the viewer's first rollout: against reading every line before listening
 *   (what `vistool view` did), timed in this process with the same store;
 * - the dashboard's data: the bytes and time of the old full send (metrics/rows from row 0,
 *   which the old dashboard fetched and parsed before drawing) against metrics/series;
 * - a slider move and a live update: against the work the old page did per redraw (every row
 *   turned into points, smoothed, summarised, and the tool-fading median over every row),
 *   run in the same page on the rows of the full send. That baseline leaves out Chart.js's own
 *   decimation and drawing, so the old cost it gives is a lower bound.
 * The viewer's search across all steps is timed too (the server streams every step file).
 * On the fresh server the dashboard is timed three ways: its first chart, the whole run drawn
 * (the reward line reaching the run's end: past the rows read so far, on the lines the host
 * sampled across the unread part, env/runs/metrics-preview.ts), and every row drawn.
 * The goals (issue): viewer open < 1 s, dashboard drawn < 1 s, an append on screen < 1 s, no
 * task in the page over 100 ms. A page's longest task counts until it has drawn everything it
 * draws on opening: every chart of the dashboard (those below the fold too), the viewer's step
 * histograms (painted after the first rollout). The dashboard is opened a second time, on the
 * loaded server, once the first has drawn everything, so the two pages do not share the CPU.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser, Page } from 'playwright-core';
import { MetricsStore } from '../env/runs/metrics-store.js';
import { ensureBundles, launchBrowser } from '../test/webview/browser-harness.js';
import { largeMetricLine, writeLargeRun } from './large-run.js';

const ROWS = Number(process.env.VISTOOL_BENCH_VIEW_ROWS ?? 100_000);
const PER_STEP = 100;
const APPENDS = 20;
const APPEND_EVERY_MS = 250;
const SLIDER_MOVES = 10;
const GOAL_MS = 1000;
const GOAL_TASK_MS = 100;

interface Served {
  base: string;
  token: string;
  dashboard: string;
  viewer: string;
  pid: number;
  /** ms from spawn to the "listening" line. */
  listeningMs: number;
  stop(): Promise<void>;
}

async function serve(dir: string): Promise<Served> {
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, ['bin/vistool.js', 'view', dir], { stdio: ['ignore', 'pipe', 'ignore'] });
  const line = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`vistool view exited with ${code} before listening (is dist/cli.js built? npm run build)`)));
    createInterface({ input: child.stdout! }).once('line', resolve);
  });
  const listeningMs = performance.now() - started;
  const listening = JSON.parse(line) as { url: string; dashboard: string; viewer: string; pid: number };
  const url = new URL(listening.url);
  return {
    base: url.origin,
    token: url.searchParams.get('token') ?? '',
    dashboard: listening.dashboard,
    viewer: listening.viewer,
    pid: listening.pid,
    listeningMs,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

async function ipc(served: Served, method: string, params: unknown): Promise<{ result: unknown; bytes: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${served.base}/api/ipc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${served.token}` },
    body: JSON.stringify({ kind: 'request', id: 'bench', method, params }),
  });
  const text = await response.text();
  const reply = JSON.parse(text) as { ok: boolean; result: unknown; error?: { message: string } };
  if (!reply.ok) throw new Error(`${method}: ${reply.error?.message}`);
  return { result: reply.result, bytes: Buffer.byteLength(text), ms: performance.now() - started };
}

/** VmRSS and VmHWM (the peak) of a process, in MiB. */
async function memory(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 950 } });
  const page = await context.newPage();
  await page.addInitScript((rows) => {
    document.addEventListener('DOMContentLoaded', () => (document.documentElement.dataset.benchRows = String(rows)));
  }, ROWS);
  await page.addInitScript(() => {
    const tasks: { start: number; duration: number }[] = [];
    const marks: Record<string, number> = {};
    Object.assign(window, { __longTasks: tasks, __marks: marks });
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) tasks.push({ start: entry.startTime, duration: entry.duration });
    }).observe({ type: 'longtask', buffered: true });
    // The moment (Date.now()) each state is first painted: any chart, the reward chart with n rows, its k-th paint.
    // (No named functions in here: the page has no __name helper that tsx would wrap them in.)
    new MutationObserver(() => {
      if (marks.first === undefined && document.querySelector('[data-testid=chart-card][data-draws]')) marks.first = Date.now();
      marks.lastPaint = Date.now();
      const reward = document.querySelector('[data-metric="reward/mean"]');
      const rows = /:(\d+)\}/.exec(reward?.getAttribute('data-points') ?? '')?.[1];
      if (rows !== undefined) marks[`rows ${rows}`] ??= Date.now();
      // The whole run painted: the line reaches past the rows read on sampled lines, or every row is read.
      if (reward?.hasAttribute('data-draws') && (reward.hasAttribute('data-preview-after') || rows === String(document.documentElement.dataset.benchRows))) marks.whole ??= Date.now();
      const paints = reward?.getAttribute('data-draws');
      if (paints) marks[`paint ${paints}`] ??= Date.now();
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-draws', 'data-points', 'data-preview-after'] });
  });
  return page;
}

/** When (Date.now() in the page) a mark was first reached. */
async function markTime(page: Page, mark: string): Promise<number> {
  const handle = await page.waitForFunction((name) => (window as unknown as { __marks: Record<string, number> }).__marks[name], mark, { timeout: 120_000, polling: 20 });
  return (await handle.jsonValue()) as number;
}

/**
 * When (Date.now() in the page) the page last painted a chart, once every chart card has been
 * painted and none has been painted again for `quietMs`: the dashboard has drawn everything, the
 * charts below the fold included.
 */
async function settled(page: Page, quietMs = 500): Promise<number> {
  const handle = await page.waitForFunction(
    (quiet) => {
      const cards = Array.from(document.querySelectorAll('[data-testid=chart-card]'));
      const last = (window as unknown as { __marks: Record<string, number> }).__marks.lastPaint ?? 0;
      return cards.length > 0 && cards.every((c) => c.hasAttribute('data-draws')) && Date.now() - last > quiet && last;
    },
    quietMs,
    { timeout: 120_000, polling: 50 },
  );
  return (await handle.jsonValue()) as number;
}

/** When the page started loading (Date.now() in the page). */
const navigationStart = (page: Page) => page.evaluate(() => performance.timeOrigin);

/** The longest task in the page since `since` (page time, ms), 0 when none passed 50 ms. */
function longestTask(page: Page, since = 0): Promise<number> {
  return page.evaluate((from) => Math.max(0, ...(window as unknown as { __longTasks: { start: number; duration: number }[] }).__longTasks.filter((t) => t.start >= from).map((t) => t.duration)), since);
}

const pageNow = (page: Page) => page.evaluate(() => performance.now());
const draws = (page: Page) => page.evaluate(() => Number(document.querySelector('[data-metric="reward/mean"]')?.getAttribute('data-draws') ?? 0));

/**
 * What the old dashboard did in the page for every redraw, on every row: points of each shown
 * metric, the EMA, min/max/last, and the tool-fading median (a sorted copy of every 10-row window).
 */
function oldRedrawWork(page: Page, metrics: string[]): Promise<number> {
  return page.evaluate((names) => {
    const table = (window as unknown as { __fullRows: { steps: number[]; columns: Record<string, (number | null)[]> } }).__fullRows;
    const started = performance.now();
    for (const name of names) {
      const values = table.columns[name] ?? [];
      const points: { x: number; y: number }[] = [];
      values.forEach((y, i) => {
        if (y !== null) points.push({ x: table.steps[i] as number, y });
      });
      let last = 0;
      let debias = 0;
      const smoothed = points.map((p) => ((last = last * 0.6 + 0.4 * p.y), (debias = debias * 0.6 + 0.4), { x: p.x, y: last / debias }));
      let min = Infinity;
      let max = -Infinity;
      for (const p of points) [min, max] = [Math.min(min, p.y), Math.max(max, p.y)];
      if (smoothed.length + min + max === -1) console.log('unreachable');
    }
    const rates = (table.columns['tool/call_rate'] ?? []).filter((v): v is number => v !== null);
    const levels: number[] = [];
    for (let end = 10; end <= rates.length; end++) {
      const sorted = rates.slice(end - 10, end).sort((a, b) => a - b);
      levels.push(((sorted[4] as number) + (sorted[5] as number)) / 2);
    }
    if (levels.length === -1) console.log('unreachable');
    return performance.now() - started;
  }, metrics);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const ms = (value: number) => `${value.toFixed(0)} ms`;
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const ratio = (old: number, now: number) => `${(old / now).toFixed(1)}×`;
const verdict = (value: number, goal: number) => (value < goal ? `under the goal of ${goal} ms` : `MISSES the goal of ${goal} ms`);

export async function benchView(): Promise<void> {
  if (!existsSync('dist/cli.js')) throw new Error('dist/cli.js is missing: run npm run build first');
  const root = await mkdtemp(join(tmpdir(), 'vistool-bench-view-'));
  let browser: Browser | undefined;
  const servers: Served[] = [];
  try {
    const dir = join(root, 'big-run');
    const writing = performance.now();
    await Promise.all([writeLargeRun(dir, { metricLines: ROWS, trajectories: ROWS, perStep: PER_STEP }), ensureBundles()]);
    const size = (await stat(join(dir, 'metrics.jsonl'))).size;
    console.log(`\nview: ${ROWS} metric lines (${mb(size)}), ${ROWS} trajectories in step files of ${PER_STEP}; written in ${ms(performance.now() - writing)}`);

    // Baseline: every line read before listening, with this process's own store.
    const fullRead = performance.now();
    const store = new MetricsStore(join(dir, 'metrics.jsonl'));
    await store.refresh();
    const fullReadMs = performance.now() - fullRead;

    browser = await launchBrowser();

    // The dashboard on a fresh server: opened as soon as it listens, while it still reads the file.
    const served = await serve(dir);
    servers.push(served);
    const page = await newPage(browser);
    await page.goto(served.dashboard);
    const opened = await navigationStart(page);
    const firstDrawMs = (await markTime(page, 'first')) - opened;
    const wholeMs = (await markTime(page, 'whole')) - opened;
    const completeMs = (await markTime(page, `rows ${ROWS}`)) - opened;
    const loaded = await memory(served.pid);
    // Every chart, those below the fold too, painted (with the page idle from then on); the
    // longest task counts until then.
    const allPaintedMs = (await settled(page)) - opened;
    const loadTask = await longestTask(page);
    // And opened again on the loaded server: what a user who keeps `vistool view` running meets
    // (once the first page has painted, so that the two pages do not share the CPU).
    const warm = await newPage(browser);
    await warm.goto(served.dashboard);
    const warmOpened = await navigationStart(warm);
    const warmMs = (await markTime(warm, `rows ${ROWS}`)) - warmOpened;
    await settled(warm);
    const warmTask = await longestTask(warm);
    await warm.context().close();
    const firstSlice = performance.now();
    await new MetricsStore(join(dir, 'metrics.jsonl')).refresh(4 << 20);
    const firstSliceMs = performance.now() - firstSlice;
    console.log(`  listening ${ms(served.listeningMs)} after start (node and the CLI load included); before listening it reads ${ms(firstSliceMs)} of the file, the old path read all of it: ${ms(fullReadMs)}, ${ratio(fullReadMs, firstSliceMs)} longer`);
    console.log(`  dashboard, opened as the server starts: first chart ${ms(firstDrawMs)}; the whole run drawn ${ms(wholeMs)} after opening (${verdict(wholeMs, GOAL_MS)}; beyond the rows read so far from lines sampled across the rest of the file); every row drawn ${ms(completeMs)} (${verdict(completeMs, GOAL_MS)}); longest task ${ms(loadTask)} (${verdict(loadTask, GOAL_TASK_MS)}); every chart painted, those below the fold too, after ${ms(allPaintedMs)}`);
    console.log(`  dashboard, opened on the loaded server: every row drawn ${ms(warmMs)} after opening (${verdict(warmMs, GOAL_MS)}); longest task ${ms(warmTask)} (${verdict(warmTask, GOAL_TASK_MS)})`);

    // Slider: each move is timed from its input event to the reward chart's next paint.
    const sliderStart = await pageNow(page);
    const moves: number[] = [];
    for (let i = 0; i < SLIDER_MOVES; i++) {
      const next = (await draws(page)) + 1;
      const moved = await page.locator('[data-testid=smoothing]').evaluate((input: HTMLInputElement, value) => {
        input.value = value;
        input.dispatchEvent(new Event('input'));
        return Date.now();
      }, String(0.5 + i * 0.04));
      moves.push((await markTime(page, `paint ${next}`)) - moved);
    }
    const sliderTask = await longestTask(page, sliderStart);

    // Live: appends a quarter of a second apart, each timed from the write to its point on the chart.
    const liveStart = await pageNow(page);
    const drawsBefore = await draws(page);
    const latencies: number[] = [];
    for (let i = 1; i <= APPENDS; i++) {
      const appended = Date.now();
      await appendFile(join(dir, 'metrics.jsonl'), largeMetricLine(ROWS + i, ROWS) + '\n');
      latencies.push((await markTime(page, `rows ${ROWS + i}`)) - appended);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, APPEND_EVERY_MS - (Date.now() - appended))));
    }
    const liveTask = await longestTask(page, liveStart);
    const redraws = (await draws(page)) - drawsBefore;
    const afterLive = await memory(served.pid);

    // The baselines: the old full send, on the wire and parsed in the page, and the old page's work per redraw.
    // The metrics the charts draw (a group chart, such as tools/*/calls, draws several).
    const metrics = await page.locator('[data-testid=chart-card]').evaluateAll((cards) => cards.flatMap((c) => JSON.parse(c.getAttribute('data-members') ?? '[]') as string[]));
    const maxPoints = await page.locator('[data-testid=chart-card]').first().evaluate((c) => Math.round(c.clientWidth / 50) * 50);
    const series = await ipc(served, 'metrics/series', { runId: 'big-run', metrics, xAxis: 'step', smoothing: 0.6, maxPoints });
    const full = await ipc(served, 'metrics/rows', { runId: 'big-run', from: 0 });
    const parseStart = await pageNow(page);
    const parseMs = await page.evaluate(async ({ base, token }) => {
      const started = performance.now();
      const response = await fetch(`${base}/api/ipc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ kind: 'request', id: 'old', method: 'metrics/rows', params: { runId: 'big-run', from: 0 } }) });
      const reply = (await response.json()) as { result: { table: unknown } };
      (window as unknown as { __fullRows: unknown }).__fullRows = reply.result.table;
      return performance.now() - started;
    }, { base: served.base, token: served.token });
    const parseTask = await longestTask(page, parseStart);
    const oldWork = median(await Promise.all([0, 1, 2].map(() => oldRedrawWork(page, metrics))));
    const afterFullSend = await memory(served.pid);

    console.log(`  one answer for the charts' ${metrics.length} metrics: metrics/series ${mb(series.bytes)} in ${ms(series.ms)}; old full send (metrics/rows from 0) ${mb(full.bytes)} in ${ms(full.ms)}: ${ratio(full.bytes, series.bytes)} smaller, ${ratio(full.ms, series.ms)} faster`);
    console.log(`  old page: fetching and parsing the full send alone took ${ms(parseMs)}, longest task ${ms(parseTask)}; new, on the loaded server: every row drawn in ${ms(warmMs)}: ${ratio(parseMs, warmMs)} sooner, longest task ${ms(warmTask)}`);
    console.log(`  slider: a move is on screen after ${ms(median(moves))} (median of ${SLIDER_MOVES}, max ${ms(Math.max(...moves))}), longest task ${ms(sliderTask)}; old page work per move (lower bound) ${ms(oldWork)}: ${ratio(oldWork, Math.max(sliderTask, 1))} less blocking`);
    console.log(`  live: an append is on screen after ${ms(median(latencies))} median, ${ms(Math.max(...latencies))} max (${verdict(Math.max(...latencies), GOAL_MS)}); ${APPENDS} appends, ${redraws} redraws of the chart; longest task ${ms(liveTask)}; old page work per update (lower bound) ${ms(oldWork)}: ${ratio(oldWork, Math.max(liveTask, 1))} less blocking`);
    console.log(`  server memory: ${loaded.rss.toFixed(0)} MiB held once loaded (peak ${loaded.peak.toFixed(0)} MiB), ${afterLive.rss.toFixed(0)} MiB after the slider and the appends (peak ${afterLive.peak.toFixed(0)} MiB); answering the old full send twice took it to a peak of ${afterFullSend.peak.toFixed(0)} MiB`);
    await page.context().close();

    // The viewer on a fresh server (the metrics still load behind it), against the old order.
    const fresh = await serve(dir);
    servers.push(fresh);
    const viewer = await newPage(browser);
    await viewer.goto(fresh.viewer);
    await viewer.locator('[data-testid=rollout]').first().waitFor({ timeout: 120_000 });
    const viewerMs = Date.now() - (await navigationStart(viewer));
    // The step's histograms are painted after its first rollout: the longest task counts until they are.
    const histogramsPainted = '[data-testid=step-histograms][data-painted=true]';
    await viewer.locator(histogramsPainted).waitFor({ state: 'attached', timeout: 120_000 });
    const viewerTask = await longestTask(viewer);
    // Once loaded: what the viewer costs when nothing else is going on.
    const again = await newPage(browser);
    await again.goto(fresh.viewer);
    await again.locator('[data-testid=rollout]').first().waitFor({ timeout: 120_000 });
    const loadedViewerMs = Date.now() - (await navigationStart(again));
    await again.locator(histogramsPainted).waitFor({ state: 'attached', timeout: 120_000 });
    const loadedViewerTask = await longestTask(again);
    const oldViewer = fullReadMs - firstSliceMs + viewerMs;
    console.log(`  viewer, opened as the server starts: first rollout ${ms(viewerMs)} after opening (${verdict(viewerMs, GOAL_MS)}; ${ms(fresh.listeningMs + viewerMs)} from \`vistool view\` with the wait to listen), longest task ${ms(viewerTask)} (${verdict(viewerTask, GOAL_TASK_MS)}); on the loaded server ${ms(loadedViewerMs)} (${verdict(loadedViewerMs, GOAL_MS)}), longest task ${ms(loadedViewerTask)} (${verdict(loadedViewerTask, GOAL_TASK_MS)})`);
    console.log(`  viewer, the old order (every metrics line read before listening) ~${ms(oldViewer)} from the same start: ${ratio(oldViewer, viewerMs)} sooner`);
    // The search across every step: all step files streamed by the server, the first 200 matches listed.
    for (const query of ['remember', 'no such text']) {
      const before = await memory(fresh.pid);
      const from = await pageNow(again);
      const started = Date.now();
      await again.locator('[data-testid=run-search-query] >> input').fill(query);
      await again.locator('[data-testid=run-search-go]').click();
      await again.waitForFunction(() => document.querySelector('[data-testid=run-search]')?.getAttribute('data-state') === 'done', undefined, { timeout: 300_000, polling: 20 });
      const searchMs = Date.now() - started;
      const total = await again.locator('[data-testid=run-search]').getAttribute('data-total');
      const listed = await again.locator('[data-testid=run-search-match]').count();
      const after = await memory(fresh.pid);
      console.log(`  viewer, search across all ${ROWS / PER_STEP} steps for "${query}": ${total} rollouts match, ${listed} listed, in ${ms(searchMs)}; longest task in the page ${ms(await longestTask(again, from))}; server memory ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MiB`);
    }
  } finally {
    await browser?.close();
    for (const served of servers) await served.stop();
    await rm(root, { recursive: true, force: true });
  }
}
