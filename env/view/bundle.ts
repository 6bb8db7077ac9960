/**
 * `vistool view RUN… --bundle OUT/`: a static copy of the dashboard and the rollout viewer on the
 * given runs, which opens from `file://` or any static host with no server (as Inspect's `view
 * bundle` does). OUT/ holds:
 *
 *   index.html, dashboard.html, viewer.html   the pages (a strict policy: scripts, styles, images and
 *                                             fonts from the bundle itself, nothing else)
 *   static/                                   the panels' scripts and styles (no playground: it runs tools)
 *   data/bundle.js                            the runs' summaries, configs, metric rows, stage and SFT
 *                                             phase marks, step and evaluation lists, annotations
 *   data/<run>/step-NNNNNN.js, eval-<key>.js  each step's and kept evaluation's index and records
 *   runs/<run>/images/<ref>.png               the images the records name, downsampled when large
 *   runs/<run>/report/report.html             the report the run is read with (its own, or its folder
 *                                             of runs'), with the images it links beside it: static HTML
 *                                             with no script, under a policy that allows none
 *
 * The page answers the panel protocol from these (webview/shared/static-backend.ts), computing
 * series, searches, comparisons and timelines by the host's own rules.
 *
 * A bundle is meant to be shared, so it holds nothing beyond the runs given: no token (there is no
 * server), no absolute path of this machine (each run directory, its parents, the home and temp
 * folders and the working directory are replaced wherever they appear; absolute paths in a run
 * config become `…/name`), and no file from outside the run directories but a run's report and the
 * images it links (a folder of runs' data are left out). Model text is data in it, and the panels show it as text only.
 *
 * Reads the runs; writes only under OUT/, which must not exist or be empty.
 */
import { copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import sharp from 'sharp';
import type { PanelKind, RolloutRecord, RunSummary, StepIndex } from '../../protocol/panel-protocol.js';
import { PANEL_TITLES } from '../../protocol/panel-protocol.js';
import { isRecord } from '../../protocol/guards.js';
import type { BundleChunk, BundleData } from '../../protocol/bundle.js';
import { isInside, resolveInsideRoot } from '../core/paths.js';
import { readAnnotations } from '../runs/annotations.js';
import { withWeights } from '../runs/record-weights.js';
import { readRunConfig } from '../runs/run-config.js';
import { resolveRunFile } from '../runs/run-files.js';
import type { RunSource } from '../runs/run-source.js';
import { escapeHtml, scriptJson } from './page.js';
import { PanelBackend } from './panel-backend.js';

/** Images wider than this are downsampled to it (a record's charts are rarely more; a dataset's photos can be 4000 px). */
export const BUNDLE_MAX_IMAGE_WIDTH = 1600;
const ASSETS = ['dashboard.js', 'viewer.js', 'panels.css', 'browser-theme.css', 'codicon.css', 'codicon.ttf'];
const BUNDLE_PANELS: PanelKind[] = ['dashboard', 'viewer'];
const REF = /^[0-9a-f]{8,128}$/;

export interface BundleReport {
  out: string;
  runs: number;
  steps: number;
  evaluations: number;
  records: number;
  images: number;
  downsampled: number;
  files: number;
  bytes: number;
}

/** The page's policy: its own files only (`'self'` covers a file:// page's folder in Chromium), no inline code, nothing from elsewhere. */
export const BUNDLE_POLICY = ["default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:", "font-src 'self'", "connect-src 'none'", "base-uri 'none'", "form-action 'none'"].join('; ');

/** Replaces the machine's paths in every string of `value` (longest first), and absolute paths in config strings. */
export function scrubber(runs: readonly { dir: string; id: string }[], extra: readonly string[]): (value: unknown, inConfig?: boolean) => unknown {
  const pairs: [string, string][] = [
    ...runs.map(({ dir, id }): [string, string] => [dir, `runs/${id}`]),
    ...runs.map(({ dir }): [string, string] => [dirname(dir), 'runs']),
    ...extra.filter((p) => p.length > 1).map((p): [string, string] => [p, '…']),
  ].sort((a, b) => b[0].length - a[0].length);
  const text = (s: string, inConfig: boolean) => {
    let out = s;
    for (const [from, to] of pairs) out = out.split(from).join(to);
    // A run config's own absolute paths (output_dir, data.train, a model on disk): their last part is what a reader needs.
    if (inConfig && /^(\/|[A-Za-z]:\\|~\/)/.test(out)) out = `…/${basename(out)}`;
    return out;
  };
  const walk = (value: unknown, inConfig: boolean): unknown => {
    if (typeof value === 'string') return text(value, inConfig);
    if (Array.isArray(value)) return value.map((v) => walk(v, inConfig));
    if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k, false), walk(v, inConfig)]));
    return value;
  };
  return (value, inConfig = false) => walk(value, inConfig);
}

/** The image refs a record names: its task image, the images shown to the model, each call's input and output. */
export function imageRefs(record: RolloutRecord): string[] {
  const refs = new Set<string>();
  const add = (ref: unknown) => typeof ref === 'string' && REF.test(ref) && refs.add(ref);
  add(record.task?.image);
  for (const turn of record.turns ?? []) {
    if ('images' in turn) for (const ref of turn.images ?? []) add(ref);
    if ('calls' in turn) {
      for (const call of turn.calls ?? []) {
        add(call.image_in);
        add(call.image_out);
      }
    }
  }
  return [...refs];
}

function safeName(key: string): string {
  return key.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** Every record of a step or evaluation file the index lists, by line, read in one pass of the file. */
async function recordsOf(path: string, index: StepIndex, runDir: string): Promise<BundleChunk['records']> {
  const lines = (await readFile(path, 'utf8')).split('\n');
  const records: BundleChunk['records'] = {};
  for (const { line } of index.rollouts) records[line] = await withWeights(JSON.parse(lines[line] ?? 'null') as RolloutRecord, runDir);
  return records;
}

export function bundlePage(panel: PanelKind): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(BUNDLE_POLICY)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vistool · ${PANEL_TITLES[panel]}</title>
<link rel="stylesheet" href="static/browser-theme.css">
<link rel="stylesheet" href="static/codicon.css" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="static/panels.css">
<script type="application/json" id="vistool-config">${scriptJson({ panel, transport: 'bundle' })}</script>
</head>
<body class="vscode-light panel-${panel}" data-vscode-theme-kind="vscode-light">
<div id="app" aria-live="polite"><p class="loading">Loading ${PANEL_TITLES[panel].toLowerCase()}…</p></div>
<script src="data/bundle.js"></script>
<script src="static/${panel}.js"></script>
</body>
</html>
`;
}

export function bundleIndexPage(runs: readonly RunSummary[]): string {
  const rows = runs.map((run) => `<li><strong>${escapeHtml(run.name)}</strong> <span class="muted">${escapeHtml(run.status ?? 'no run.json')}${run.engine ? ` · trained on ${escapeHtml(run.engine)}` : ''} · ${run.metricRows} metric rows · ${run.rolloutSteps} rollout steps</span></li>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(BUNDLE_POLICY)}">
<title>vistool bundle</title>
<link rel="stylesheet" href="static/browser-theme.css">
<link rel="stylesheet" href="static/panels.css">
</head>
<body class="vscode-light index">
<main class="index-page">
<h1>vistool bundle</h1>
<p class="muted">A static copy made by <code>vistool view --bundle</code>: what the runs held when it was made. The tool playground and saving annotations need <code>vistool view</code> on the runs themselves.</p>
<h2>Panels</h2>
<ul class="panel-links">${BUNDLE_PANELS.map((p) => `<li><a href="${p}.html">${PANEL_TITLES[p]}</a></li>`).join('\n')}</ul>
<h2>Runs</h2>
<ul class="run-list">${rows}</ul>
</main>
</body>
</html>
`;
}

/** Writes the bundle of `runs` into `out` (which must not exist, or be empty); `assetsDir` holds the built panels. */
export async function writeBundle(runs: readonly string[], out: string, assetsDir: string, progress: (line: string) => void = () => {}): Promise<BundleReport> {
  const target = resolve(out);
  for (const dir of runs) {
    if (isInside(resolve(dir), target)) throw new Error(`--bundle ${out} is inside the run directory ${dir}; write the bundle elsewhere`);
  }
  const existing = await readdir(target).catch(() => null);
  if (existing !== null && existing.length > 0) throw new Error(`--bundle ${out} exists and is not empty; give a new folder (a bundle never overwrites files)`);
  for (const asset of ASSETS) await stat(join(assetsDir, asset)).catch(() => Promise.reject(new Error(`the panel bundles are missing from ${assetsDir} (${asset}); run \`npm run build\` first`)));

  const backend = new PanelBackend({ runs: [...runs] });
  await backend.start();
  backend.stop();
  // start() reads the first slice of a big metrics.jsonl; the bundle needs all of it.
  while (backend.runs.some((run) => run.metricsPending)) await backend.poll();
  const scrub = scrubber(backend.runs.map((r) => ({ dir: r.dir, id: r.id })), [process.cwd(), homedir(), tmpdir()]);

  const report: BundleReport = { out: target, runs: backend.runs.length, steps: 0, evaluations: 0, records: 0, images: 0, downsampled: 0, files: 0, bytes: 0 };
  const write = async (path: string, text: string | Buffer) => {
    await mkdir(dirname(join(target, path)), { recursive: true });
    await writeFile(join(target, path), text);
    report.files += 1;
    report.bytes += typeof text === 'string' ? Buffer.byteLength(text) : text.length;
  };
  const data: BundleData = { format: 'vistool-bundle', version: 1, runs: [], configs: {}, tables: {}, axes: {}, steps: {}, evalSets: {}, annotations: {}, chunks: {} };
  for (const run of backend.runs) {
    progress(`bundle: ${run.id}`);
    const refs = new Set<string>();
    const summary = run.summary();
    const hasReport = await copyReport(run, scrub, write);
    data.runs.push(scrub({ ...summary, path: `runs/${run.id}`, report: hasReport }) as RunSummary);
    const { config, problem } = await readRunConfig(run.dir);
    data.configs[run.id] = { runId: run.id, config: config === null ? null : (scrub(config, true) as Record<string, unknown>), problem: problem === null ? null : (scrub(problem) as string) };
    data.tables[run.id] = run.metrics.slice(0);
    const axis = (xAxis: 'step' | 'time') => {
      const { xSource, phases, toolFading } = run.charts.query({ metrics: [], xAxis, smoothing: 0, maxPoints: 4 });
      return { xSource, phases, toolFading };
    };
    data.axes[run.id] = { step: axis('step'), time: axis('time') };
    data.annotations[run.id] = scrub(await readAnnotations(run.dir)) as BundleData['annotations'][string];
    const steps = await run.stepFiles();
    data.steps[run.id] = steps;
    const chunk = async (key: string, file: string, path: string, index: StepIndex) => {
      const records = await recordsOf(path, index, run.dir);
      for (const { record } of Object.values(records)) imageRefs(record).forEach((ref) => refs.add(ref));
      report.records += index.rollouts.length;
      data.chunks[key] = file;
      await write(file, `window.__vistoolBundleChunk(${scriptJson(key)}, ${scriptJson(scrub({ index, records }))});\n`);
    };
    for (const { step } of steps) {
      const stepIndex = await run.stepIndex(step);
      await chunk(`${run.id}/step/${step}`, `data/${safeName(run.id)}/step-${String(step).padStart(6, '0')}.js`, stepIndex.path, await stepIndex.index(run.id));
      report.steps += 1;
    }
    const sets = await run.evalSets();
    data.evalSets[run.id] = sets;
    for (const set of sets) {
      const { index } = await run.evalIndex(set.key);
      await chunk(`${run.id}/eval/${set.key}`, `data/${safeName(run.id)}/${safeName(set.key)}.js`, index.path, await index.index(run.id));
      report.evaluations += 1;
    }
    await copyImages(run, [...refs], target, report);
  }
  await write('data/bundle.js', `window.__vistoolBundle = ${scriptJson(data)};\n`);
  for (const asset of ASSETS) {
    await mkdir(join(target, 'static'), { recursive: true });
    await copyFile(join(assetsDir, asset), join(target, 'static', asset));
    report.files += 1;
    report.bytes += (await stat(join(target, 'static', asset))).size;
  }
  for (const panel of BUNDLE_PANELS) await write(`${panel}.html`, bundlePage(panel));
  await write('index.html', bundleIndexPage(data.runs));
  return report;
}

/** The policy a bundled report carries in its page (it has no server to send a header): no script, its own images, its inline style. */
export const BUNDLE_REPORT_POLICY = "default-src 'none'; script-src 'none'; img-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";
const REPORT_IMAGE = /\bsrc="([^"#?:]+\.(?:png|jpe?g))"/gi;

/**
 * Copies the report a run is read with (RunSummary.report: its own report.html, else its folder of
 * runs') into `runs/<run>/report/`, with every image it links by a relative path inside the
 * report's folder (nothing else of that folder), its absolute paths scrubbed and a policy that
 * runs no script put in its head. False when the run has no report.
 */
async function copyReport(run: RunSource, scrub: (value: unknown) => unknown, write: (path: string, text: string | Buffer) => Promise<void>): Promise<boolean> {
  const file = run.reportFile;
  if (file === null) return false;
  const html = await readFile(file, 'utf8').catch(() => null);
  if (html === null) return false;
  const folder = dirname(file);
  const linked = new Set([...html.matchAll(REPORT_IMAGE)].map((m) => m[1] as string));
  for (const relative of linked) {
    let source: string;
    try {
      source = await resolveInsideRoot(folder, folder, relative);
    } catch {
      continue; // an image the report links but its folder lacks (or one outside it): left out, as the server refuses it
    }
    await write(`runs/${run.id}/report/${relative}`, await readFile(source));
  }
  const policy = `<meta http-equiv="Content-Security-Policy" content="${BUNDLE_REPORT_POLICY}">`;
  const page = /<meta charset="utf-8">/i.test(html) ? html.replace(/<meta charset="utf-8">/i, (m) => `${m}${policy}`) : `${policy}${html}`;
  await write(`runs/${run.id}/report/report.html`, scrub(page) as string);
  return true;
}

/** Copies the named images of a run (through the run's own file rule: inside it, or a linked images folder), downsampling wide ones. */
async function copyImages(run: RunSource, refs: string[], target: string, report: BundleReport): Promise<void> {
  for (const ref of refs) {
    let source: string;
    try {
      source = await resolveRunFile(run.dir, `images/${ref}.png`);
    } catch {
      continue; // a record naming an image the run does not have: the page shows a broken image, as vistool view does
    }
    const dest = join(target, 'runs', run.id, 'images', `${ref}.png`);
    await mkdir(dirname(dest), { recursive: true });
    const { width } = await sharp(source).metadata();
    if (width !== undefined && width > BUNDLE_MAX_IMAGE_WIDTH) {
      await sharp(source).resize({ width: BUNDLE_MAX_IMAGE_WIDTH }).png().toFile(dest);
      report.downsampled += 1;
    } else {
      await copyFile(source, dest);
    }
    report.images += 1;
    report.files += 1;
    report.bytes += (await stat(dest)).size;
  }
}
