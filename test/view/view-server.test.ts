import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeImage } from '../../env/core/image.js';
import { PanelBackend } from '../../env/view/panel-backend.js';
import { ViewServer } from '../../env/view/view-server.js';
import type { PlaygroundSnapshot, StepIndex } from '../../protocol/panel-protocol.js';
import { pixelAt, tableFixture } from '../fixtures/render.js';
import { appendMetrics, writeRunDirectory } from '../runs/run-directory.js';

const token = 'view-test-token-0123456789abcdef';
let root: string;
let runDir: string;
let backend: PanelBackend;
let server: ViewServer;
let base: string;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-view-'));
  runDir = await writeRunDirectory(join(root, 'run-a'), { rolloutSteps: [1, 2], metricRows: 10, evaluations: true });
  const assets = join(root, 'assets');
  await mkdir(assets);
  await writeFile(join(assets, 'dashboard.js'), '/* bundle */');
  backend = new PanelBackend({ runs: [runDir], roots: [join(root, 'shared')], pollMs: 100 });
  await backend.start();
  server = new ViewServer({ backend, assetsDir: assets, token });
  base = await server.start();
});

after(async () => {
  backend.stop();
  await server.stop();
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function get(path: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function ipc(message: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${base}/api/ipc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(message) });
  return { status: response.status, json: response.status === 204 ? null : await response.json() };
}

let nextId = 1;
async function call<T>(method: string, params: unknown): Promise<T> {
  const { json } = await ipc({ kind: 'request', id: `t-${nextId++}`, method, params });
  const reply = json as { ok: boolean; result?: T; error?: { message: string } };
  if (!reply.ok) throw new Error(reply.error?.message);
  return reply.result as T;
}

test('a request without the token is refused with 401 and told where the token is', async () => {
  const reply = await get('/dashboard');
  assert.equal(reply.status, 401);
  assert.match(reply.body.toString(), /\?token=/);
  assert.equal((await get('/dashboard?token=wrong-token-0123456789abcdefgh')).status, 401);
  assert.equal((await fetch(`${base}/api/ipc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 401);
});

test('a Host header naming another host is refused, so a rebinding DNS name cannot reach the server', async () => {
  const port = new URL(base).port;
  const reply = await get(`/dashboard?token=${token}`, { host: `attacker.example:${port}` });
  assert.equal(reply.status, 403);
  assert.equal((await get(`/dashboard?token=${token}`, { host: `localhost:${port}` })).status, 200);
});

test('the token in the URL opens a page and sets a cookie that authorizes the page\'s later requests', async () => {
  const page = await get(`/dashboard?token=${token}`);
  assert.equal(page.status, 200);
  const cookie = String(page.headers['set-cookie']).split(';')[0] ?? '';
  assert.match(String(page.headers['set-cookie']), /HttpOnly; SameSite=Strict/);
  const asset = await get('/static/dashboard.js', { cookie });
  assert.equal(asset.status, 200);
  assert.equal(asset.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal((await get('/static/dashboard.js')).status, 401);
});

test('panel pages carry a strict CSP: no remote or inline code, and the only script has this response\'s nonce', async () => {
  const page = await get(`/viewer?token=${token}`);
  const csp = String(page.headers['content-security-policy']);
  assert.match(csp, /default-src 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:|\*/);
  const nonce = /script-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1];
  assert.ok(nonce, csp);
  const html = page.body.toString();
  const executable = [...html.matchAll(/<script(?![^>]*type="application\/json")[^>]*>/g)].map((m) => m[0]);
  assert.equal(executable.length, 1);
  assert.ok(executable[0]?.includes(`nonce="${nonce}"`));
  const again = await get(`/viewer?token=${token}`);
  assert.notEqual(/nonce-([A-Za-z0-9_-]+)/.exec(String(again.headers['content-security-policy']))?.[1], nonce, 'each page gets a fresh nonce');
  assert.equal(page.headers['x-content-type-options'], 'nosniff');
});

// A file link out of the run is refused, whatever it is named; the one way out is a linked folder
// serving images (the next test): a link to a file is not a folder someone set up for images.
test('run files are served byte for byte; paths that leave the run, by .. or by a link to a file outside, are refused', async () => {
  const rollouts = await readFile(join(runDir, 'rollouts', 'step-000001.jsonl'), 'utf8');
  const image = (JSON.parse(rollouts.split('\n')[0] ?? '{}') as { task: { image: string } }).task.image;
  const png = await get(`/files/run-a/images/${image}.png?token=${token}`);
  assert.equal(png.status, 200);
  assert.equal(png.headers['content-type'], 'image/png');
  assert.deepEqual(png.body, await readFile(join(runDir, 'images', `${image}.png`)));
  assert.equal((await get(`/files/run-a/..%2F..%2F..%2Fetc%2Fpasswd?token=${token}`)).status, 403);
  await symlink('/etc/hostname', join(runDir, 'escape.txt'));
  const escaped = await get(`/files/run-a/escape.txt?token=${token}`);
  assert.equal(escaped.status, 403);
  assert.match(escaped.body.toString(), /symbolic link/);
  assert.equal((await get(`/files/no-such-run/config.json?token=${token}`)).status, 404);
});

test('an images folder that is a link to a directory elsewhere serves its images; .. still escapes nothing, and only images pass the link', async () => {
  // The layout a user sets up to keep images on a big disk: runs/x/images -> /data/shared-images.
  const linkedRun = await writeRunDirectory(join(root, 'run-linked'), { rolloutSteps: [1], metricRows: 1 });
  const shared = join(root, 'shared-images');
  await rename(join(linkedRun, 'images'), shared);
  await symlink(shared, join(linkedRun, 'images'), 'dir');
  await writeFile(join(shared, 'notes.txt'), 'not an image');
  await symlink('/etc/hostname', join(shared, 'hostname.png'));
  const linkedBackend = new PanelBackend({ runs: [linkedRun] });
  await linkedBackend.start();
  const linkedServer = new ViewServer({ backend: linkedBackend, assetsDir: join(root, 'assets'), token });
  const linkedBase = await linkedServer.start();
  const fetchFile = async (path: string) => {
    const response = await fetch(`${linkedBase}/files/run-linked/${path}?token=${token}`);
    return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
  };
  try {
    const png = (await readdir(shared)).find((name) => /^[0-9a-f]+\.png$/.test(name));
    assert.ok(png, 'the run\'s images were moved behind the link');
    const served = await fetchFile(`images/${png}`);
    assert.equal(served.status, 200);
    assert.deepEqual(served.body, await readFile(join(shared, png)));
    // Through the link, only images: other files, and a .png name that is a link to something else, are refused.
    assert.equal((await fetchFile('images/notes.txt')).status, 403);
    assert.equal((await fetchFile('images/hostname.png')).status, 403);
    // `..` is judged on the path as written, before any link: it cannot climb out through images/.
    assert.equal((await fetchFile('images/..%2F..%2F..%2Fetc%2Fpasswd')).status, 403);
    assert.equal((await fetchFile(`images/..%2F..%2Fshared-images%2F${png}`)).status, 403);
  } finally {
    linkedBackend.stop();
    await linkedServer.stop();
  }
});

test('HTML and SVG inside a run directory are sent as downloads, never rendered as pages', async () => {
  await writeFile(join(runDir, 'logs.html'), '<script>alert(1)</script>');
  await writeFile(join(runDir, 'plot.svg'), '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>');
  for (const name of ['logs.html', 'plot.svg']) {
    const reply = await get(`/files/run-a/${name}?token=${token}`);
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], 'application/octet-stream');
    assert.equal(reply.headers['content-disposition'], 'attachment');
  }
});

test('the protocol over /api/ipc: run summaries, metric rows from an offset, evaluations', async () => {
  const { runs } = await call<{ runs: { id: string; metricRows: number; status: string; rolloutSteps: number; evaluations: { label: string }[] }[] }>('runs/list', {});
  assert.equal(runs.length, 1);
  assert.deepEqual([runs[0]?.id, runs[0]?.status, runs[0]?.metricRows, runs[0]?.rolloutSteps], ['run-a', 'running', 10, 2]);
  assert.deepEqual(runs[0]?.evaluations.map((e) => e.label), ['before', 'after_rl']);
  const rows = await call<{ from: number; total: number; table: { steps: number[]; columns: Record<string, unknown[]> } }>('metrics/rows', { runId: 'run-a', from: 7 });
  assert.deepEqual(rows.table.steps, [8, 9, 10]);
  assert.equal(rows.total, 10);
  assert.equal(rows.table.columns['reward/mean']?.length, 3);
});

test('a step\'s index has one summary per rollout line, and records are read back by line from byte offsets', async () => {
  const { steps } = await call<{ steps: { step: number; file: string }[] }>('rollouts/steps', { runId: 'run-a' });
  assert.deepEqual(steps.map((s) => [s.step, s.file]), [[1, 'rollouts/step-000001.jsonl'], [2, 'rollouts/step-000002.jsonl']]);
  const index = await call<StepIndex>('rollouts/index', { runId: 'run-a', step: 2 });
  const lines = (await readFile(join(runDir, 'rollouts', 'step-000002.jsonl'), 'utf8')).trimEnd().split('\n');
  assert.equal(index.rollouts.length, lines.length);
  const withError = index.rollouts.find((r) => r.errorClasses.includes('E4'));
  assert.ok(withError, 'the scripted unknown column gives an E4');
  assert.deepEqual(withError.toolNames, ['focus_on_columns_with_mask']);
  for (const line of [0, 3, lines.length - 1]) {
    const { record } = await call<{ record: unknown }>('rollouts/record', { runId: 'run-a', step: 2, line });
    assert.deepEqual(record, JSON.parse(lines[line] ?? ''));
  }
  await assert.rejects(call('rollouts/record', { runId: 'run-a', step: 2, line: 999 }), /no rollout on line 1000/);
  await assert.rejects(call('rollouts/index', { runId: 'run-a', step: 77 }), /no rollouts for step 77/);
});

test('the index grows as the trainer appends to a step file; an unreadable line is skipped and reported', async () => {
  const path = join(runDir, 'rollouts', 'step-000001.jsonl');
  const before = await call<StepIndex>('rollouts/index', { runId: 'run-a', step: 1 });
  const first = (await readFile(path, 'utf8')).split('\n')[0] ?? '';
  await appendFile(path, `${first}\n{"torn": \n`);
  const afterAppend = await call<StepIndex>('rollouts/index', { runId: 'run-a', step: 1 });
  assert.equal(afterAppend.rollouts.length, before.rollouts.length + 1);
  assert.equal(afterAppend.skipped.length, 1);
  assert.match(afterAppend.skipped[0]?.reason ?? '', /not JSON/);
});

test('malformed messages get 400; a bad request gets a response that names the known methods', async () => {
  assert.equal((await ipc({ hello: 'world' })).status, 400);
  const unknown = (await ipc({ kind: 'request', id: 'x', method: 'files/delete', params: {} })).json as { ok: boolean; error: { message: string } };
  assert.equal(unknown.ok, false);
  assert.match(unknown.error.message, /unknown request 'files\/delete'; known requests: runs\/list/);
  const malformed = (await ipc({ kind: 'request', id: 'y', method: 'metrics/rows', params: { runId: 'run-a', from: 'zero' } })).json as { error: { message: string } };
  assert.match(malformed.error.message, /malformed params for request 'metrics\/rows'/);
  assert.equal((await ipc({ kind: 'command', id: 'z', method: 'webview/ready', params: { panel: 'dashboard' } })).status, 204);
});

test('a metrics line appended to the file is pushed to an open event stream as a new run summary', async () => {
  const events: { method: string; params: { runs: { metricRows: number }[] } }[] = [];
  let resolveArrived: () => void = () => {};
  const arrived = new Promise<void>((resolve) => (resolveArrived = resolve));
  const stream = httpRequest(`${base}/api/events?token=${token}`, (res) => {
    assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
    let buffer = '';
    res.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        if (!data) continue;
        events.push(JSON.parse(data.slice(6)));
        if (events.some((e) => e.params.runs[0]?.metricRows === 11)) resolveArrived();
      }
    });
  });
  stream.end();
  while (events.length === 0) await new Promise((r) => setTimeout(r, 20));
  assert.equal(events[0]?.method, 'runs/didChange', 'a new stream starts with the current snapshot');
  assert.equal(events[0]?.params.runs[0]?.metricRows, 10);
  await appendMetrics(runDir, 11, 1);
  await arrived;
  stream.destroy();
  const rows = await call<{ table: { steps: number[] } }>('metrics/rows', { runId: 'run-a', from: 10 });
  assert.deepEqual(rows.table.steps, [11]);
});

test('the playground applies a real tool: masked columns turn white, a bad label is an E4, undo steps back', async () => {
  const fixture = await tableFixture();
  const session = 'server-test-session';
  const opened = await call<PlaygroundSnapshot>('playground/open', { session, image: { name: 'table.png', base64: fixture.png.toString('base64') }, metadata: { name: 'table.json', text: JSON.stringify(fixture.meta) } });
  assert.equal(opened.images.length, 1);
  assert.deepEqual(opened.labels.columns, ['Rider', 'Country', 'Wins', 'Team', 'Year']);
  assert.ok(opened.availableTools.includes('focus_on_columns_with_mask'));
  assert.ok(!opened.availableTools.includes('focus_on_x_values_with_mask'));

  const applied = await call<PlaygroundSnapshot>('playground/apply', { session, call: { name: 'focus_on_columns_with_mask', arguments: { columns: ['Rider', 'Wins'] } } });
  assert.equal(applied.images.length, 2);
  assert.equal(applied.error, null);
  const edited = await decodeImage(Buffer.from((applied.images[1]?.src ?? '').split(',')[1] ?? '', 'base64'));
  const country = fixture.meta.columns_bbox?.Country;
  assert.ok(country);
  assert.deepEqual(pixelAt(edited, Math.round((country.x1 + country.x2) / 2), Math.round((country.y1 + country.y2) / 2)), [255, 255, 255]);

  const refused = await call<PlaygroundSnapshot>('playground/apply', { session, call: { name: 'focus_on_columns_with_mask', arguments: { columns: ['Points'] } } });
  assert.equal(refused.images.length, 2, 'a failed call leaves the stack as it was');
  assert.equal(refused.error?.class, 'E4');
  assert.match(refused.error?.message ?? '', /Points/);

  const undone = await call<PlaygroundSnapshot>('playground/undo', { session });
  assert.equal(undone.images.length, 1);
  const formatted = await call<{ text: string }>('calls/format', { calls: [{ name: 'focus_on_columns_with_mask', arguments: { columns: ['Rider'] } }], format: 'refocus' });
  assert.match(formatted.text, /focus_on_columns_with_mask\(image_1, \["Rider"\], columns_bbox\)/);
});

test('the playground opens images by path only inside allowed roots, and finds a sidecar metadata file', async () => {
  const shared = join(root, 'shared');
  await mkdir(shared, { recursive: true });
  const fixture = await tableFixture();
  await writeFile(join(shared, 'table.png'), fixture.png);
  await writeFile(join(shared, 'table.json'), JSON.stringify({ id: 't', question: 'q', image: 'table.png', meta: fixture.meta }));
  const opened = await call<PlaygroundSnapshot>('playground/open', { session: 'path-session', image: { path: join(shared, 'table.png') } });
  assert.equal(opened.metadataSource, 'sidecar file table.json');
  assert.deepEqual(opened.labels.rows, ['Merckx', 'Hinault', 'Cavendish', 'Anquetil', 'Maertens']);
  await assert.rejects(call('playground/open', { session: 'path-session', image: { path: '/etc/hostname' } }), /outside the allowed root/);
  await assert.rejects(call('playground/open', { session: 'x', image: { name: 'notes.png', base64: Buffer.from('not an image').toString('base64') } }), /could not be decoded as an image/);
  await assert.rejects(call('playground/apply', { session: 'never-opened', call: { name: 'zoom_in', arguments: {} } }), /no image is open/);
});

test('an image opened by path inside a task folder takes its metadata from the task record in tasks.jsonl', async () => {
  const folder = join(root, 'shared', 'tasks-folder');
  await mkdir(join(folder, 'images'), { recursive: true });
  const fixture = await tableFixture();
  await writeFile(join(folder, 'images', 'train-table-000007.png'), fixture.png);
  await writeFile(join(folder, 'images', 'other.png'), fixture.png);
  const record = (id: string, image: string, meta: object) => JSON.stringify({ id, image, question: 'q', answer: '1', kind: 'table', difficulty: 1, source: 'synthetic', meta });
  await writeFile(join(folder, 'tasks.jsonl'), [record('train-table-000006', 'images/other.png', {}), record('train-table-000007', 'images/train-table-000007.png', fixture.meta)].join('\n') + '\n');
  const opened = await call<PlaygroundSnapshot>('playground/open', { session: 'task-session', image: { path: join(folder, 'images', 'train-table-000007.png') } });
  assert.equal(opened.metadataSource, 'task train-table-000007 in tasks.jsonl');
  assert.deepEqual(opened.labels.columns, ['Rider', 'Country', 'Wins', 'Team', 'Year']);
});

test('a rollout image resolves to its file in the run, the task image with its task record; a ref that is not a content hash is refused', async () => {
  const line = (await readFile(join(runDir, 'rollouts', 'step-000001.jsonl'), 'utf8')).split('\n')[0]!;
  const record = JSON.parse(line) as { prompt_id: string; task: { image: string } };
  const found = await call<{ path: string; metadata: { name: string; text: string; source: string } | null }>('runs/image', { runId: 'run-a', ref: record.task.image, promptId: record.prompt_id });
  assert.equal(found.path, join(runDir, 'images', `${record.task.image}.png`));
  assert.equal((JSON.parse(found.metadata!.text) as { id: string }).id, record.prompt_id);
  assert.match(found.metadata!.source, new RegExp(`^task ${record.prompt_id} in .*data/train/tasks\\.jsonl$`));
  const bare = await call<{ metadata: unknown }>('runs/image', { runId: 'run-a', ref: record.task.image, promptId: null });
  assert.equal(bare.metadata, null);
  await assert.rejects(call('runs/image', { runId: 'run-a', ref: '../../config', promptId: null }), /'\.\.\/\.\.\/config' is not an image ref/);
  await assert.rejects(call('runs/image', { runId: 'run-a', ref: 'deadbeefdeadbeef', promptId: null }), /run 'run-a' has no image deadbeefdeadbeef/);
});

test('the same page shell serves a VS Code webview: nonce and CSP in a meta tag, webview URIs, no browser theme', async () => {
  const { panelPage, contentSecurityPolicy } = await import('../../env/view/page.js');
  const csp = contentSecurityPolicy('n0nce', 'https://file+.vscode-resource.vscode-cdn.net');
  assert.match(csp, /connect-src 'none'/);
  const html = panelPage({
    panel: 'viewer',
    nonce: 'n0nce',
    theme: null,
    metaCsp: csp,
    assetUrl: (name) => `https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview/${name}`,
    config: { panel: 'viewer', transport: 'vscode', resourceBases: { 'run-a': 'https://file+.vscode-resource.vscode-cdn.net/runs/run-a' } },
  });
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;nonce-n0nce&#39;/);
  assert.match(html, /<script nonce="n0nce" src="https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/ext\/dist\/webview\/viewer\.js"><\/script>/);
  assert.doesNotMatch(html, /browser-theme\.css|vscode-light|vscode-dark/);
  assert.match(html, /"transport":"vscode"/);
});

test('the page config cannot close its script block, whatever a run id holds', async () => {
  const { panelPage } = await import('../../env/view/page.js');
  const html = panelPage({ panel: 'dashboard', nonce: 'n', theme: 'light', assetUrl: (f) => `static/${f}`, config: { panel: 'dashboard', transport: 'vscode', resourceBases: { '</script><script>alert(1)</script>': 'x' } } });
  assert.equal(html.match(/<\/script>/g)?.length, 2, 'only the config block and the bundle close a script element');
  assert.match(html, /\\u003c\/script\\u003e/);
});

test('the host can open an image in the playground itself; panels are told with a complete snapshot', async () => {
  const shared = join(root, 'shared');
  await mkdir(shared, { recursive: true });
  const fixture = await tableFixture();
  await writeFile(join(shared, 'from-explorer.png'), fixture.png);
  const seen: { method: string; params: { snapshot: PlaygroundSnapshot } }[] = [];
  const unsubscribe = backend.onNotification((message) => void seen.push(message as (typeof seen)[number]));
  const snapshot = await backend.openInPlayground(join(shared, 'from-explorer.png'), 'editor-session');
  unsubscribe();
  assert.equal(snapshot.name, 'from-explorer.png');
  // No metadata came with the image: OCR grounding found the table's columns and rows.
  assert.equal(snapshot.metadataSource, 'OCR grounding');
  assert.ok(snapshot.availableTools.includes('focus_on_columns_with_mask'));
  assert.ok(snapshot.availableTools.includes('focus_on_rows_with_draw'));
  assert.ok(snapshot.availableTools.includes('ocr'));
  const opened = seen.find((m) => m.method === 'playground/didOpen');
  assert.equal(opened?.params.snapshot.session, 'editor-session');
  const again = await call<PlaygroundSnapshot>('playground/snapshot', { session: 'editor-session' });
  assert.equal(again.images.length, 1);
});
