/**
 * `node bin/vistool.js view RUN --bundle OUT/`, the shipped CLI (dist/cli.js) end to end on a run
 * directory the real engine played: it exits 0, prints its report, writes the pages, the panels,
 * the data and the images the records name (and nothing else), leaves the run as it was, and no
 * file it writes holds a path of this machine or a token. The run's name, its question and its
 * config carry the machine's paths and markup on purpose. Expected values come from the run
 * directory this test wrote and from dist/webview, not from the bundle writer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { TABLE_GROUP, writeRunDirectory } from '../runs/run-directory.js';
import { ensureBundles, ASSETS } from '../webview/browser-harness.js';

const REPO = resolve(__dirname, '..', '..');
const CLI = join(REPO, 'bin', 'vistool.js');
const BUNDLE = join(REPO, 'dist', 'cli.js');
const RUN_NAME = 'run <img src=x onerror=alert(1)>';
// The panel host's id rule (env/view/panel-backend.ts): the folder name, anything but [A-Za-z0-9._-] as _.
const RUN_ID = 'run__img_src_x_onerror_alert_1__';

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return (await Promise.all(entries.map((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)])))).flat();
}

async function snapshot(dir: string): Promise<Map<string, string>> {
  const files = await walk(dir);
  return new Map(await Promise.all(files.map(async (f): Promise<[string, string]> => [relative(dir, f), (await readFile(f)).toString('base64')])));
}

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  return new Promise((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

test('vistool view RUN --bundle OUT exits 0 and writes the pages, panels, data and named images, with no path of this machine and no token', { skip: !existsSync(BUNDLE) && 'dist/cli.js is missing (npm run build)', timeout: 120_000 }, async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-bundle-cli-'));
  const runDir = join(root, RUN_NAME);
  // The question names paths of this machine (the run, the home folder, the working directory): the bundle must not carry them.
  const question = `Which rider? (tasks from ${join(runDir, 'data', 'train')}, notes in ${join(homedir(), 'notes')}, made in ${REPO})`;
  await writeRunDirectory(runDir, { rolloutSteps: [1], groups: [TABLE_GROUP], question, metricRows: 3 });
  // A config as the trainer writes one: absolute paths of this machine, in the run, the home folder and elsewhere.
  const elsewhere = '/srv/vistool-models/micro-vlm';
  await writeFile(join(runDir, 'config.json'), JSON.stringify({ name: 'test-run', output_dir: runDir, model: { name_or_path: elsewhere, ref_model: join(homedir(), 'models', 'ref-vlm') }, data: { train: join(runDir, 'data', 'train', 'tasks.jsonl') } }, null, 2));
  await ensureBundles();
  const before = await snapshot(runDir);
  const out = join(root, 'bundle');

  const { code, stdout, stderr } = await runCli(['view', runDir, '--bundle', out]);
  assert.equal(code, 0, `exit code; stderr: ${stderr}`);
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 1, stdout);
  const report = JSON.parse(lines[0] as string) as Record<string, unknown>;
  const files = (await walk(out)).map((f) => relative(out, f)).sort();
  assert.equal(report.event, 'bundle');
  assert.equal(report.out, out);
  assert.equal(report.index, join(out, 'index.html'));
  assert.equal(report.runs, 1);
  assert.equal(report.steps, 1);
  assert.equal(report.files, files.length, 'the report counts the files written');
  assert.match(stderr, /bundle of 1 run\(s\)/);

  // The images the records name: every 64-hex ref in the step file that the run holds as images/<ref>.png.
  const stepFile = await readFile(join(runDir, 'rollouts', 'step-000001.jsonl'), 'utf8');
  const runImages = new Set(await readdir(join(runDir, 'images')));
  const named = [...new Set(stepFile.match(/\b[0-9a-f]{64}\b/g) ?? [])].filter((ref) => runImages.has(`${ref}.png`)).sort();
  assert.ok(named.length >= 2, 'the played episodes name a task image and a tool output');
  const expected = [
    'dashboard.html',
    'data/bundle.js',
    `data/${RUN_ID}/step-000001.js`,
    'index.html',
    ...named.map((ref) => `runs/${RUN_ID}/images/${ref}.png`),
    ...['browser-theme.css', 'codicon.css', 'codicon.ttf', 'dashboard.js', 'panels.css', 'viewer.js'].map((a) => `static/${a}`),
    'viewer.html',
  ].sort();
  assert.deepEqual(files, expected);
  for (const ref of named) assert.ok((await readFile(join(out, 'runs', RUN_ID, 'images', `${ref}.png`))).equals(await readFile(join(runDir, 'images', `${ref}.png`))), `${ref}.png is the run's image`);
  // The panels are dist/webview's files as built: nothing of this machine is added to them.
  for (const file of files.filter((f) => f.startsWith('static/'))) assert.ok((await readFile(join(out, file))).equals(await readFile(join(ASSETS, file.slice('static/'.length)))), `${file} is the built panel file`);

  const machine = [root, runDir, out, REPO, process.cwd(), homedir(), tmpdir(), '/srv/vistool-models'].filter((p) => p.length > 1);
  for (const file of files.filter((f) => !f.startsWith('static/') && !f.endsWith('.png'))) {
    const text = await readFile(join(out, file), 'utf8');
    for (const path of machine) assert.ok(!text.includes(path), `${file} holds ${path}`);
    assert.doesNotMatch(text, /token/i, file);
  }
  const data = await readFile(join(out, 'data', 'bundle.js'), 'utf8');
  const bundle = JSON.parse(data.slice(data.indexOf('=') + 1, data.lastIndexOf(';'))) as { runs: { id: string; name: string }[]; configs: Record<string, { config: { output_dir: string; model: { name_or_path: string; ref_model: string }; data: { train: string } } }> };
  assert.deepEqual(bundle.runs.map((r) => [r.id, r.name]), [[RUN_ID, RUN_NAME]]);
  const config = bundle.configs[RUN_ID]?.config;
  assert.ok(config);
  for (const value of [config.output_dir, config.model.name_or_path, config.model.ref_model, config.data.train]) assert.doesNotMatch(value, /^\//, 'a config path is relative to the bundle or cut to its last part');
  assert.match(config.model.name_or_path, /micro-vlm$/);
  assert.match(config.model.ref_model, /ref-vlm$/);
  assert.match(config.data.train, /tasks\.jsonl$/);
  const chunk = await readFile(join(out, 'data', RUN_ID, 'step-000001.js'), 'utf8');
  assert.ok(chunk.includes('Which rider?'), 'the question is in the step chunk');

  // The run's name is markup-bearing: the index escapes it, no page holds it as a tag.
  const index = await readFile(join(out, 'index.html'), 'utf8');
  assert.ok(index.includes('run &lt;img src=x onerror=alert(1)&gt;'), 'the index names the run, escaped');
  for (const page of ['index.html', 'dashboard.html', 'viewer.html']) assert.doesNotMatch(await readFile(join(out, page), 'utf8'), /<img/i, page);
  for (const file of files.filter((f) => f.startsWith('data/'))) assert.ok(!(await readFile(join(out, file), 'utf8')).includes('<'), `${file}: every < is escaped`);

  assert.deepEqual(await snapshot(runDir), before, 'the run directory is left as it was');
});
