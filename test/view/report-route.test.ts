/**
 * A folder of runs' report.html through `vistool view`: the runs say they have one, the page is
 * served under a policy that runs no script, its images come from the report's folder, and nothing
 * else of that folder (nor anything outside it) is served.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PanelBackend } from '../../env/view/panel-backend.js';
import { ViewServer } from '../../env/view/view-server.js';
import { expandRunDirectories } from '../../env/cli/view.js';
import { writeRunDirectory } from '../runs/run-directory.js';

const token = 'report-test-token-0123456789abcdef';
let root: string;
let demo: string;
let backend: PanelBackend;
let server: ViewServer;
let base: string;
let tools: string;
let image: string;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-report-'));
  demo = join(root, 'demo');
  tools = await writeRunDirectory(join(demo, 'tools'), { rolloutSteps: [1], metricRows: 3 });
  await writeRunDirectory(join(demo, 'text'), { metricRows: 3 });
  const lone = await writeRunDirectory(join(root, 'lone'), { metricRows: 2 });
  image = (await import('node:fs')).readdirSync(join(tools, 'images'))[0] ?? '';
  // As the demo writes it: inline style, images by relative path, no script.
  await writeFile(join(demo, 'report.html'), `<!doctype html><meta charset="utf-8"><title>vistool demo — tools against text</title><style>body{color:#222}</style><h1>Demo</h1><img src="tools/images/${image}" alt="a chart">`);
  await writeFile(join(demo, 'summary.json'), '{"secret": "not for the report route"}');
  await writeFile(join(root, 'outside.png'), 'not served');
  const assets = join(root, 'assets');
  await mkdir(assets);
  await writeFile(join(assets, 'dashboard.js'), '/* bundle */');
  backend = new PanelBackend({ runs: [...expandRunDirectories([demo]), lone] });
  await backend.start();
  server = new ViewServer({ backend, assetsDir: assets, token });
  base = await server.start();
});

after(async () => {
  backend.stop();
  await server.stop();
});

const get = (path: string) => fetch(`${base}${path}${path.includes('?') ? '&' : '?'}token=${token}`);

test("the runs of a folder say they are read with its report; a run with none says so", () => {
  assert.deepEqual(backend.summaries().map((s) => [s.name, s.report]), [['text', true], ['tools', true], ['lone', false]]);
});

test('the report page is served as written, under a policy that runs no script and loads only this server\'s images', async () => {
  const response = await get('/report/tools/');
  assert.equal(response.status, 200);
  assert.equal(await response.text(), await readFile(join(demo, 'report.html'), 'utf8'));
  const policy = response.headers.get('content-security-policy') ?? '';
  assert.match(policy, /script-src 'none'/);
  assert.match(policy, /img-src 'self'/);
  assert.match(policy, /default-src 'none'/);
  assert.doesNotMatch(policy, /unsafe-eval|https?:/);
});

test('the images the report links are served from its folder; other files of the folder and paths out of it are not', async () => {
  const png = await get(`/report/text/tools/images/${image}`);
  assert.equal(png.status, 200);
  assert.equal(png.headers.get('content-type'), 'image/png');
  assert.deepEqual(Buffer.from(await png.arrayBuffer()), await readFile(join(tools, 'images', image)));
  assert.equal((await get('/report/tools/summary.json')).status, 403);
  assert.equal((await get('/report/tools/tools/config.json')).status, 403);
  assert.equal((await get('/report/tools/..%2Foutside.png')).status, 403);
  assert.equal((await get('/report/lone/')).status, 404);
  assert.equal((await get('/report/nope/')).status, 404);
  assert.equal((await fetch(`${base}/report/tools/`)).status, 401, 'the token is needed as for every page');
});
