/**
 * A search across steps that the page no longer wants is stopped on the host: by the
 * request/cancel command (VS Code's webview has no connection to close), and by the page closing
 * the request's connection (`vistool view`). The run has a few hundred step files, copies of one
 * real step, so a whole search takes many file reads and a cancelled one is seen to stop.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PanelBackend } from '../../env/view/panel-backend.js';
import { ViewServer } from '../../env/view/view-server.js';
import { CancelRequestCommand, type ResponseMessage, RolloutSearchRequest } from '../../protocol/panel-protocol.js';
import { NO_FACETS } from '../../protocol/rollout-filter.js';
import { writeRunDirectory } from '../runs/run-directory.js';

const STEPS = 400;
const token = 'cancel-test-token-0123456789abcdef';
let root: string;
let backend: PanelBackend;
let server: ViewServer;
let base: string;
/** Every answer the backend gave, in order. */
const replies: (ResponseMessage | null)[] = [];

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-search-cancel-'));
  const runDir = await writeRunDirectory(join(root, 'run-a'), { rolloutSteps: [1] });
  for (let step = 2; step <= STEPS; step++) await copyFile(join(runDir, 'rollouts', 'step-000001.jsonl'), join(runDir, 'rollouts', `step-${String(step).padStart(6, '0')}.jsonl`));
  assert.equal((await readdir(join(runDir, 'rollouts'))).length, STEPS);
  const assets = join(root, 'assets');
  await mkdir(assets);
  await writeFile(join(assets, 'viewer.js'), '/* bundle */');
  backend = new PanelBackend({ runs: [runDir], pollMs: 100 });
  await backend.start();
  const handle = backend.handle.bind(backend);
  backend.handle = async (message, signal) => {
    const reply = await handle(message, signal);
    replies.push(reply);
    return reply;
  };
  server = new ViewServer({ backend, assetsDir: assets, token });
  base = await server.start();
});

after(async () => {
  backend.stop();
  await server.stop();
});

const search = (id: string) => ({ kind: 'request', id, method: RolloutSearchRequest.method, params: { runId: 'run-a', query: 'merckx', filter: NO_FACETS } });

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}

test('a whole search reads every step file; one cancelled by request/cancel answers as cancelled and leaves nothing running', async () => {
  const whole = await backend.handle(search('whole'));
  assert.equal(whole?.ok, true);
  assert.equal((whole as { result: { scanned: { steps: number } } }).result.scanned.steps, STEPS);

  const answer = backend.handle(search('dropped'));
  assert.equal(backend.requestsInFlight, 1);
  assert.equal(await backend.handle({ kind: 'command', id: 'c1', method: CancelRequestCommand.method, params: { id: 'dropped' } }), null);
  const reply = await answer;
  assert.equal(reply?.ok, false);
  assert.match(reply?.ok === false ? reply.error.message : '', /request dropped \(rollouts\/search\) was cancelled/);
  assert.equal(backend.requestsInFlight, 0);
});

test('a page that closes the connection of its search stops it on the host', async () => {
  const before = replies.length;
  const connection = new AbortController();
  const sent = fetch(`${base}/api/ipc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(search('closed')), signal: connection.signal });
  await until(() => backend.requestsInFlight === 1);
  connection.abort();
  await assert.rejects(sent, { name: 'AbortError' });
  await until(() => backend.requestsInFlight === 0);
  const reply = replies[before];
  assert.equal(reply?.ok, false, 'the search was stopped, not read to the end');
  assert.match(reply?.ok === false ? reply.error.message : '', /was cancelled/);
  // The server still answers.
  const next = await fetch(`${base}/api/ipc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ kind: 'request', id: 'after', method: 'runs/list', params: {} }) });
  assert.equal(((await next.json()) as { ok: boolean }).ok, true);
});
