/**
 * The panel protocol's handler tables as specifications. At the type level (this file must pass
 * `npm run typecheck`): a host is a value of RequestHandlers and CommandHandlers, so the server's
 * backend (env/view/panel-backend.ts) or the static bundle's (webview/shared/static-backend.ts)
 * without one handler, or with one answering another shape, does not compile — each
 * `@ts-expect-error` below fails the typecheck the day that stops being true. At run time: both
 * tables cover every request and command of the protocol, and dispatch() checks a message's method
 * and params before any handler runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PanelBackend } from '../../env/view/panel-backend.js';
import { StaticBackend } from '../../webview/shared/static-backend.js';
import { COMMANDS, type CommandHandlers, dispatch, dispatchCommand, REQUESTS, type RequestHandlers } from '../../protocol/panel/handlers.js';
import type { BundleData } from '../../protocol/bundle.js';
import type { HostToPanelMessage } from '../../protocol/panel/messages.js';

const BUNDLE: BundleData = {
  format: 'vistool-bundle',
  version: 1,
  runs: [],
  configs: {},
  tables: {},
  axes: {},
  steps: {},
  evalSets: {},
  annotations: {},
  chunks: {},
};

function staticBackend(notify?: (message: HostToPanelMessage) => void): StaticBackend {
  // The backend hooks window.__vistoolBundleChunk on construction; in Node the page's window is this stand-in.
  (globalThis as unknown as { window: object }).window ??= {};
  return new StaticBackend(BUNDLE, notify);
}

/** Never called: what the compiler must refuse, for each backend's tables. */
export function typeLevelChecks(server: PanelBackend, bundle: StaticBackend): void {
  const { 'rollouts/search': _search, ...serverWithoutSearch } = server.requests;
  // @ts-expect-error the server's backend without rollouts/search is not a host
  const serverMissing: RequestHandlers = serverWithoutSearch;
  const { 'annotations/save': _save, ...bundleWithoutSave } = bundle.requests;
  // @ts-expect-error the static backend without annotations/save (even one it cannot do) is not a host
  const bundleMissing: RequestHandlers = bundleWithoutSave;
  const { 'request/cancel': _cancel, ...serverCommandsWithoutCancel } = server.commands;
  // @ts-expect-error the server's backend without a handler for request/cancel does not take commands
  const serverCommandsMissing: CommandHandlers = serverCommandsWithoutCancel;
  const { 'webview/ready': _ready, ...bundleCommandsWithoutReady } = bundle.commands;
  // @ts-expect-error the static backend without a handler for webview/ready does not take commands
  const bundleCommandsMissing: CommandHandlers = bundleCommandsWithoutReady;
  // @ts-expect-error a handler that answers another shape than its request's response
  const wrongShape: RequestHandlers = { ...bundle.requests, 'runs/list': () => ({ runs: 'all' }) };
  // @ts-expect-error a handler for a request the protocol does not have
  const unknownMethod: RequestHandlers = { ...server.requests, 'runs/delete': () => ({}) };
  void [serverMissing, bundleMissing, serverCommandsMissing, bundleCommandsMissing, wrongShape, unknownMethod];
}

test("both backends' tables answer exactly the protocol's requests and commands", () => {
  const server = new PanelBackend({ runs: [] });
  const bundle = staticBackend();
  const requests = REQUESTS.map((r) => r.method).sort();
  const commands = COMMANDS.map((c) => c.method).sort();
  assert.deepEqual(Object.keys(server.requests).sort(), requests);
  assert.deepEqual(Object.keys(bundle.requests).sort(), requests);
  assert.deepEqual(Object.keys(server.commands).sort(), commands);
  assert.deepEqual(Object.keys(bundle.commands).sort(), commands);
});

test('dispatch refuses an unknown method and malformed params before any handler runs, naming what is wrong', async () => {
  const server = new PanelBackend({ runs: [] });
  await assert.rejects(dispatch(server.requests, { kind: 'request', id: '1', method: 'runs/delete', params: {} }), /unknown request 'runs\/delete'; known requests: runs\/list, /);
  await assert.rejects(dispatch(server.requests, { kind: 'request', id: '2', method: 'metrics/rows', params: { runId: 'a', from: -1 } }), /malformed params for request 'metrics\/rows'/);
  assert.deepEqual(await dispatch(server.requests, { kind: 'request', id: '3', method: 'runs/list', params: {} }), { runs: [] });
});

test("a static bundle answers what needs the engine with 'not available', and a ready panel with the runs' snapshot", async () => {
  const notified: HostToPanelMessage[] = [];
  const bundle = staticBackend((message) => notified.push(message));
  for (const method of ['tools/list', 'calls/format', 'runs/image'] as const) {
    const params = method === 'tools/list' ? {} : method === 'calls/format' ? { calls: [], format: 'json' } : { runId: 'a', ref: 'ab12cd34', promptId: null };
    await assert.rejects(dispatch(bundle.requests, { kind: 'request', id: method, method, params }), new RegExp(`'${method}' is not available: this is a static bundle`));
  }
  assert.equal(await dispatchCommand(bundle.commands, { kind: 'command', id: 'r', method: 'webview/ready', params: { panel: 'viewer' } }), true);
  assert.deepEqual(notified, [{ kind: 'notification', method: 'runs/didChange', params: { runs: [] } }]);
  assert.equal(await dispatchCommand(bundle.commands, { kind: 'command', id: 'x', method: 'webview/ready', params: { panel: 'terminal' } }), false, 'malformed params run nothing');
  assert.equal(notified.length, 1);
});
