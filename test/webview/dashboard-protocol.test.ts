/**
 * The dashboard's messages for comparing runs and opening a chart point's rollouts: their guards,
 * and the backend's answer to runs/configs on real run directories (a config, none, a broken one).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMANDS, REQUESTS, RunConfigsRequest, ShowInViewerCommand, ViewerShowStepNotification } from '../../protocol/panel-protocol.js';
import { PanelBackend } from '../../env/view/panel-backend.js';
import { writeRunDirectory } from '../runs/run-directory.js';

const request = (method: string, params: unknown) => ({ kind: 'request', id: 'p-1', method, params });
const command = (method: string, params: unknown) => ({ kind: 'command', id: 'p-2', method, params });

test('runs/configs takes one to 64 run ids, nothing else', () => {
  assert.equal(RunConfigsRequest.is(request('runs/configs', { runIds: ['a', 'b'] })), true);
  assert.equal(RunConfigsRequest.is(request('runs/configs', { runIds: [] })), false);
  assert.equal(RunConfigsRequest.is(request('runs/configs', { runIds: Array.from({ length: 65 }, (_, i) => `r${i}`) })), false);
  assert.equal(RunConfigsRequest.is(request('runs/configs', { runIds: 'a' })), false);
  assert.equal(RunConfigsRequest.is(request('runs/configs', { runIds: ['a', 3] })), false);
  assert.ok(REQUESTS.some((r) => r === RunConfigsRequest));
});

test('viewer/show needs a run id, its path and a whole step; viewer/showStep a run id and a whole step', () => {
  assert.equal(ShowInViewerCommand.is(command('viewer/show', { runId: 'a', path: '/runs/a', step: 20 })), true);
  assert.equal(ShowInViewerCommand.is(command('viewer/show', { runId: 'a', path: '/runs/a', step: 2.5 })), false);
  assert.equal(ShowInViewerCommand.is(command('viewer/show', { runId: 'a', step: 20 })), false);
  assert.equal(ShowInViewerCommand.is(command('viewer/show', { runId: 'a', path: '/runs/a', step: -1 })), false);
  assert.ok(COMMANDS.some((c) => c === ShowInViewerCommand));
  assert.equal(ViewerShowStepNotification.is({ kind: 'notification', method: 'viewer/showStep', params: { runId: 'a', step: 10 } }), true);
  assert.equal(ViewerShowStepNotification.is({ kind: 'notification', method: 'viewer/showStep', params: { runId: 'a', step: '10' } }), false);
});

test('the backend answers runs/configs with each run\'s config.json, or null and why', async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-run-configs-'));
  try {
    const [good, missing, broken] = await Promise.all(['good', 'missing', 'broken'].map((name) => writeRunDirectory(join(root, name))));
    await writeFile(join(good as string, 'config.json'), JSON.stringify({ name: 'g', rl: { group_size: 8 } }));
    await rm(join(missing as string, 'config.json'));
    await writeFile(join(broken as string, 'config.json'), '{"name": ');
    const backend = new PanelBackend({ runs: [good as string, missing as string, broken as string] });
    const reply = await backend.handle(request('runs/configs', { runIds: ['good', 'missing', 'broken'] }));
    assert.ok(reply && reply.ok);
    const { configs } = reply.result as { configs: { runId: string; config: unknown; problem: string | null }[] };
    assert.deepEqual(configs[0], { runId: 'good', config: { name: 'g', rl: { group_size: 8 } }, problem: null });
    assert.deepEqual(configs[1], { runId: 'missing', config: null, problem: 'no config.json' });
    assert.equal(configs[2]?.config, null);
    assert.match(configs[2]?.problem ?? '', /^config\.json is not JSON/);
    const unknown = await backend.handle(request('runs/configs', { runIds: ['good', 'nope'] }));
    assert.ok(unknown && !unknown.ok);
    assert.match(unknown.error.message, /no run 'nope' is open/);
    backend.stop();
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
