/**
 * `vistool view --bundle`: what the static copy holds and what it must never hold. The runs are a
 * demo-like folder (every rollout played through the real engine), a run with hostile model text,
 * and a run whose task image is wider than a bundle keeps. The page's series are checked against
 * the host's on the same rows: two implementations of one rule must draw the same points.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import sharp from 'sharp';
import { BUNDLE_MAX_IMAGE_WIDTH, writeBundle, type BundleReport } from '../../env/view/bundle.js';
import { PanelBackend } from '../../env/view/panel-backend.js';
import { staticSeries } from '../../webview/shared/static-backend.js';
import { viewCommand } from '../../env/cli/view.js';
import type { MetricSeries, MetricSeriesParams } from '../../protocol/panel-protocol.js';
import { UsageError } from '../../env/cli/command.js';
import { HOSTILE_GROUP, HOSTILE_TEXT, writeRunDirectory } from '../runs/run-directory.js';
import { writeDemoFolder } from '../runs/demo-folder.js';
import { ensureBundles, ASSETS } from '../webview/browser-harness.js';

let root: string;
let runs: string[];
let out: string;
let report: BundleReport;
let wideRef: string;

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return (await Promise.all(entries.map((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)])))).flat();
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-bundle-'));
  const { tools, text } = await writeDemoFolder(join(root, 'demo'));
  const hostile = await writeRunDirectory(join(root, 'hostile'), { rolloutSteps: [1], groups: [HOSTILE_GROUP], question: `Which rider? ${HOSTILE_TEXT}`, metricRows: 3 });
  // A task image wider than a bundle keeps, named by the record as the trainer names images (the SHA-256 of its bytes).
  const wide = await sharp({ create: { width: 2400, height: 300, channels: 3, background: { r: 200, g: 40, b: 40 } } }).png().toBuffer();
  wideRef = createHash('sha256').update(wide).digest('hex');
  await writeFile(join(hostile, 'images', `${wideRef}.png`), wide);
  const line = JSON.parse((await readFile(join(hostile, 'rollouts', 'step-000001.jsonl'), 'utf8')).split('\n')[0] ?? '{}') as { task: { image: string } };
  line.task.image = wideRef;
  await writeFile(join(hostile, 'rollouts', 'step-000002.jsonl'), JSON.stringify({ ...line, step: 2 }) + '\n');
  // A file in a run that no record names, and one beside the runs: neither may be copied.
  await writeFile(join(tools, 'notes.txt'), 'private');
  await mkdir(join(root, 'demo', 'secrets'));
  await writeFile(join(root, 'demo', 'secrets', 'key.png'), wide);
  // The folder's report links an image of the folder, one outside it and one it lacks: only the first is bundled (issue 44, 2.11).
  await writeFile(join(root, 'outside.png'), wide);
  await writeFile(join(root, 'demo', 'report.html'), `<!doctype html><meta charset="utf-8"><title>vistool demo — tools against text</title><h1>Demo report</h1><p>npx vistool view ${join(root, 'demo')}</p><img src="data/eval/table.png" alt="chart"><img src="../outside.png" alt="x"><img src="tools/images/missing.png" alt="y">`);
  runs = [text, tools, hostile];
  await ensureBundles();
  out = join(root, 'bundle');
  report = await writeBundle(runs, out, ASSETS);
});

test('the bundle holds the pages, the panels, the data and the images the records name, and counts them', async () => {
  const files = (await walk(out)).map((f) => relative(out, f)).sort();
  for (const page of ['index.html', 'dashboard.html', 'viewer.html', 'data/bundle.js', 'static/dashboard.js', 'static/viewer.js', 'static/panels.css']) assert.ok(files.includes(page), page);
  assert.ok(!files.includes('static/playground.js'), 'no playground: it runs tools on a server');
  assert.equal(report.runs, 3);
  assert.equal(report.steps, 2 + 2 + 2);
  assert.equal(report.evaluations, 3 + 3);
  assert.equal(report.files, files.length);
  assert.equal(report.bytes, (await Promise.all(files.map(async (f) => (await stat(join(out, f))).size))).reduce((a, b) => a + b, 0));
});

test('nothing from outside the run directories: every file under runs/ is an image of its run that a record names', async () => {
  const files = await walk(join(out, 'runs'));
  assert.ok(files.length > 0);
  const dirs = Object.fromEntries(runs.map((dir) => [dir.split('/').at(-1) as string, dir]));
  for (const file of files) {
    const [run, folder, name] = relative(join(out, 'runs'), file).split('/');
    if (folder === 'report') continue; // the report and the images it links: the next test
    assert.equal(folder, 'images', file);
    assert.match(name ?? '', /^[0-9a-f]{64}\.png$/);
    const source = join(dirs[run as string] as string, 'images', name as string);
    const [copied, original] = await Promise.all([readFile(file), readFile(source)]);
    if (name !== `${wideRef}.png`) assert.ok(copied.equals(original), `${file} is ${source}`);
  }
  const all = (await walk(out)).map((f) => relative(out, f));
  for (const left of ['notes.txt', 'report.html', 'summary.json', 'key.png', 'tasks.jsonl', 'config.json', 'run.json', 'metrics.jsonl']) {
    assert.ok(!all.some((f) => f.endsWith(left) && !f.startsWith('static/') && !/^runs\/[^/]+\/report\/report\.html$/.test(f)), `${left} is not copied`);
  }
});

test("a run's report is bundled beside it with the images it links inside its folder, under a policy that runs no script, and the Report button is offered", async () => {
  for (const run of ['tools', 'text']) {
    const files = (await walk(join(out, 'runs', run, 'report'))).map((f) => relative(join(out, 'runs', run, 'report'), f)).sort();
    assert.deepEqual(files, ['data/eval/table.png', 'report.html']);
    const page = await readFile(join(out, 'runs', run, 'report', 'report.html'), 'utf8');
    assert.match(page, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'none'; img-src 'self'/);
    assert.match(page, /<h1>Demo report<\/h1>/);
    assert.ok(!page.includes(root), 'no absolute path of this machine');
    assert.ok((await readFile(join(out, 'runs', run, 'report', 'data', 'eval', 'table.png'))).equals(await readFile(join(root, 'demo', 'data', 'eval', 'table.png'))));
  }
  assert.ok(!(await walk(out)).some((f) => f.endsWith('outside.png') || f.endsWith('missing.png')));
  const data = await readFile(join(out, 'data', 'bundle.js'), 'utf8');
  const bundle = JSON.parse(data.slice(data.indexOf('=') + 1).trim().replace(/;$/, '')) as { runs: { id: string; report?: boolean }[] };
  assert.deepEqual(bundle.runs.map((r) => [r.id, r.report]), [['text', true], ['tools', true], ['hostile', false]]);
});

test('an image wider than the bundle keeps is downsampled to its width; the others are copied as they are', async () => {
  const meta = await sharp(join(out, 'runs', 'hostile', 'images', `${wideRef}.png`)).metadata();
  assert.deepEqual([meta.width, meta.height], [BUNDLE_MAX_IMAGE_WIDTH, 200]);
  assert.equal(report.downsampled, 1);
});

test('no absolute path of this machine and no token anywhere in it', async () => {
  const machine = [root, resolve(root), ...runs, process.cwd(), homedir(), tmpdir(), resolve(__dirname, '..', '..')];
  for (const file of await walk(out)) {
    if (!/\.(html|js|css)$/.test(file) || file.includes('/static/')) continue;
    const text = await readFile(file, 'utf8');
    for (const path of machine) assert.ok(!text.includes(path), `${relative(out, file)} holds ${path}`);
    assert.doesNotMatch(text, /token/i, relative(out, file));
  }
  const data = await readFile(join(out, 'data', 'bundle.js'), 'utf8');
  // The run config's own absolute paths are reduced to their last part.
  assert.match(data, /"output_dir":"runs\/tools"/);
  assert.match(data, /"train":"runs\/data\/train\/tasks.jsonl"/);
});

test('hostile model text is data in the bundle: a script file can never end early or run it', async () => {
  const chunk = await readFile(join(out, 'data', 'hostile', 'step-000001.js'), 'utf8');
  assert.ok(!chunk.includes('<script>'), 'every < is escaped');
  assert.ok(!/<\/script/i.test(chunk));
  // The text is all there, escaped: JSON-parsing the call's arguments gives it back.
  const payload = chunk.slice(chunk.indexOf(', ') + 2, chunk.lastIndexOf(');'));
  assert.ok(JSON.stringify(JSON.parse(payload)).includes('window.__xss'));
  const page = await readFile(join(out, 'viewer.html'), 'utf8');
  assert.match(page, /content="default-src &#39;none&#39;; script-src &#39;self&#39;;/);
  assert.doesNotMatch(page, /<script>(?!<)/, 'no inline script');
});

test("the page's series are the host's: same points, smoothing, stats and range on both axes", async () => {
  const backend = new PanelBackend({ runs });
  await backend.start();
  backend.stop();
  const data = await readFile(join(out, 'data', 'bundle.js'), 'utf8');
  const bundle = JSON.parse(data.slice(data.indexOf('=') + 1, data.lastIndexOf(';'))) as { tables: Record<string, { steps: number[]; columns: Record<string, (number | null)[]> }> };
  const run = backend.runs.find((r) => r.id === 'tools');
  assert.ok(run);
  const table = bundle.tables.tools;
  assert.ok(table);
  const xs = Float64Array.from(table.steps);
  const cases: Omit<MetricSeriesParams, 'runId' | 'metrics' | 'xAxis'>[] = [{ smoothing: 0.6, maxPoints: 4 }, { smoothing: 0, maxPoints: 100 }, { smoothing: 0.9, maxPoints: 6, range: { min: 11, max: 13 } }];
  for (const params of cases) {
    for (const metric of ['reward/mean', 'sft/loss', 'errors/E4', 'no/such']) {
      const host: MetricSeries | undefined = run.charts.query({ metrics: [metric], xAxis: 'step', ...params }).series[0];
      const column = table.columns[metric];
      const page = staticSeries(metric, xs, column ? Float64Array.from(column, (v) => (v === null ? NaN : v)) : null, { xAxis: 'step', ...params });
      assert.deepEqual(page, host, `${metric} ${JSON.stringify(params)}`);
    }
  }
});

test('a bundle is written only into a new or empty folder outside the runs, and the CLI says so', async () => {
  await assert.rejects(writeBundle(runs, out, ASSETS), /exists and is not empty/);
  await assert.rejects(writeBundle(runs, join(runs[0] as string, 'bundle'), ASSETS), /inside the run directory/);
  await assert.rejects(viewCommand.run(['--bundle', join(root, 'b2')]), (err: unknown) => err instanceof UsageError && /needs run directories/.test(err.message));
});
