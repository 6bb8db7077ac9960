import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunSummary } from '../../protocol/panel-protocol.js';
import { preferredRun } from '../../webview/viewer/preferred-run.js';
import { displayWidth, ZOOM_BASE_WIDTH } from '../../webview/shared/image-compare.js';

const summary = (id: string, extra: Partial<RunSummary> = {}): RunSummary => ({
  id, name: id, path: `/runs/${id}`, status: 'finished', engine: null, startedAt: null, updatedAt: null, metricRows: 10, metricNames: [], rolloutSteps: 1, evaluations: [], problems: [], ...extra,
});

test('the viewer opens on the run whose policy called tools, not on the first by name', () => {
  const text = summary('text', { metricStats: { 'tool/call_rate': { count: 10, min: 0, max: 0 } } });
  const tools = summary('tools', { metricStats: { 'tool/call_rate': { count: 10, min: 0, max: 0.75 } } });
  assert.equal(preferredRun([text, tools]), 'tools');
  // An evaluation that called tools counts too (a vistool eval folder has no training rows).
  const evaluated = summary('eval', { evaluations: [{ label: 'x', step: null, source: 'results.json', metrics: { 'eval/tool_call_rate': 0.4 } }] });
  assert.equal(preferredRun([text, evaluated]), 'eval');
  assert.equal(preferredRun([text, summary('other')]), 'text', 'none called tools: the first');
  assert.equal(preferredRun([]), null);
});

test('images are shown at the zoom times their width, small ones as if they were ZOOM_BASE_WIDTH wide', () => {
  assert.equal(displayWidth(800, 0.5), 400, 'a large chart at the default zoom is as before');
  assert.equal(displayWidth(224, 0.5), ZOOM_BASE_WIDTH / 2, "the micro model's 224×112 charts are not 112 px thumbnails");
  assert.ok(displayWidth(224, 0.5) >= 280);
  assert.equal(displayWidth(224, 0.25), 140);
  assert.equal(displayWidth(112, 4, 0), 448, 'the playground picks its own zoom: no base width');
});
