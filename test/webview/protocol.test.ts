import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FormatCallRequest,
  isPanelToHostMessage,
  MetricRowsRequest,
  PlaygroundApplyRequest,
  PlaygroundOpenRequest,
  ReadyCommand,
  REQUESTS,
  RolloutRecordRequest,
  RunsChangedNotification,
} from '../../protocol/panel-protocol.js';

const request = (method: string, params: unknown) => ({ kind: 'request', id: 'p-1', method, params });

test('a request guard accepts its own method with well-formed params', () => {
  assert.equal(MetricRowsRequest.is(request('metrics/rows', { runId: 'a', from: 0 })), true);
  assert.equal(RolloutRecordRequest.is(request('rollouts/record', { runId: 'a', step: 3, line: 7 })), true);
});

test('a request guard refuses another method, another kind, or a missing id', () => {
  assert.equal(MetricRowsRequest.is(request('rollouts/index', { runId: 'a', from: 0 })), false);
  assert.equal(MetricRowsRequest.is({ kind: 'command', id: 'x', method: 'metrics/rows', params: { runId: 'a', from: 0 } }), false);
  assert.equal(MetricRowsRequest.is({ kind: 'request', method: 'metrics/rows', params: { runId: 'a', from: 0 } }), false);
});

test('a request guard refuses params of the wrong shape: the host never trusts the panel', () => {
  assert.equal(MetricRowsRequest.is(request('metrics/rows', { runId: 'a', from: -1 })), false);
  assert.equal(MetricRowsRequest.is(request('metrics/rows', { runId: 'a', from: 1.5 })), false);
  assert.equal(MetricRowsRequest.is(request('metrics/rows', { runId: 7, from: 0 })), false);
  assert.equal(RolloutRecordRequest.is(request('rollouts/record', { runId: 'a', step: '3', line: 0 })), false);
  assert.equal(PlaygroundApplyRequest.is(request('playground/apply', { session: 's', call: { name: 'zoom_in', arguments: [1, 2] } })), false);
  assert.equal(FormatCallRequest.is(request('calls/format', { calls: [], format: 'python' })), false);
});

test('the playground open request takes either uploaded bytes or a host path, and optional metadata text', () => {
  assert.equal(PlaygroundOpenRequest.is(request('playground/open', { session: 's', image: { name: 'a.png', base64: 'AAAA' } })), true);
  assert.equal(PlaygroundOpenRequest.is(request('playground/open', { session: 's', image: { path: '/data/a.png' }, metadata: { name: 'a.json', text: '{}' } })), true);
  assert.equal(PlaygroundOpenRequest.is(request('playground/open', { session: 's', image: { url: 'http://x/a.png' } })), false);
  assert.equal(PlaygroundOpenRequest.is(request('playground/open', { session: 's', image: { path: 'a.png' }, metadata: { text: 5 } })), false);
});

test('command and notification guards check kind, method and params', () => {
  assert.equal(ReadyCommand.is({ kind: 'command', id: '1', method: 'webview/ready', params: { panel: 'viewer' } }), true);
  assert.equal(ReadyCommand.is({ kind: 'command', id: '1', method: 'webview/ready', params: { panel: 'terminal' } }), false);
  assert.equal(RunsChangedNotification.is({ kind: 'notification', method: 'runs/didChange', params: { runs: [] } }), true);
  assert.equal(RunsChangedNotification.is({ kind: 'notification', method: 'runs/didChange', params: { runs: 'all' } }), false);
});

test('method names are namespaced and unique', () => {
  const methods = REQUESTS.map((r) => r.method);
  assert.equal(new Set(methods).size, methods.length);
  for (const method of methods) assert.match(method, /^[a-z]+\/[a-zA-Z]+$/);
});

test('isPanelToHostMessage accepts any command or request envelope and nothing else', () => {
  assert.equal(isPanelToHostMessage(request('anything/else', null)), true);
  assert.equal(isPanelToHostMessage({ kind: 'notification', method: 'runs/didChange', params: {} }), false);
  assert.equal(isPanelToHostMessage('{"kind":"request"}'), false);
  assert.equal(isPanelToHostMessage(null), false);
});
