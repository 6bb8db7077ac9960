import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PanelBackend } from '../../env/view/panel-backend.js';
import type { MetricSeriesResult, MetricTable, RunSummary } from '../../protocol/panel-protocol.js';
import { writeRunDirectory } from './run-directory.js';

const ROWS = 5000;
/** A noisy curve with one-step spikes, the kind LTTB-style decimation loses. */
const value = (step: number) => (step % 997 === 0 ? 5 : step % 613 === 0 ? -4 : Math.sin(step / 50) + ((step * 7919) % 101) / 1000);

let root: string;
let backend: PanelBackend;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-metric-series-'));
  const dir = await writeRunDirectory(join(root, 'long'), { metricRows: 0 });
  const lines = Array.from({ length: ROWS }, (_, i) => JSON.stringify({ step: i + 1, stage: i < 100 ? 'sft' : 'rl', time: 1_700_000_000 + (i + 1) * 2, 'x/y': value(i + 1), ...(i % 2 ? { 'x/odd': i } : {}) }));
  await writeFile(join(dir, 'metrics.jsonl'), lines.join('\n') + '\n');
  backend = new PanelBackend({ runs: [dir], pollMs: 50 });
  await backend.start();
});

after(() => backend.stop());

async function ask<R>(method: string, params: unknown): Promise<R> {
  const reply = await backend.handle({ kind: 'request', id: 'test', method, params });
  assert.ok(reply && reply.ok, JSON.stringify(reply));
  return reply.result as R;
}

const series = (params: Record<string, unknown>) => ask<MetricSeriesResult>('metrics/series', { runId: 'long', metrics: ['x/y'], xAxis: 'step', smoothing: 0, maxPoints: 100, ...params });

/** The bucketing rule of protocol/downsample.ts, recomputed here from the rows themselves. */
function expectedMinMax(xs: number[], ys: number[], maxPoints: number): number[] {
  const buckets = Math.floor((maxPoints - 2) / 2);
  const span = xs[xs.length - 1]! - xs[0]!;
  const members: number[][] = Array.from({ length: buckets }, () => []);
  for (let i = 1; i < xs.length - 1; i++) members[Math.min(buckets - 1, Math.floor(((xs[i]! - xs[0]!) / span) * buckets))]!.push(i);
  const kept = [0];
  for (const bucket of members) {
    if (bucket.length === 0) continue;
    const values = bucket.map((i) => ys[i]!);
    const low = bucket[values.indexOf(Math.min(...values))]!;
    const high = bucket[values.indexOf(Math.max(...values))]!;
    kept.push(...(low === high ? [low] : [Math.min(low, high), Math.max(low, high)]));
  }
  kept.push(xs.length - 1);
  return kept;
}

test('a long series comes back bounded: the first and last point, and each bucket\'s lowest and highest, so every spike survives', async () => {
  const reply = await series({});
  const line = reply.series[0]!;
  const steps = Array.from({ length: ROWS }, (_, i) => i + 1);
  const values = steps.map(value);
  const kept = expectedMinMax(steps, values, 100);
  assert.ok(line.raw.x.length <= 100, `${line.raw.x.length} points`);
  assert.deepEqual(line.raw.x, kept.map((i) => steps[i]));
  assert.deepEqual(line.raw.y, kept.map((i) => values[i]));
  assert.equal(line.raw.x.at(-1), ROWS, 'the last point is always kept');
  for (const spike of [997, 1994, 2991, 3988, 4985, 613, 1226]) assert.ok(line.raw.x.includes(spike), `spike at step ${spike}`);
  assert.deepEqual(line.stats, { min: Math.min(...values), max: Math.max(...values), last: values.at(-1), count: ROWS });
  assert.equal(line.inRange, ROWS);
  assert.equal(line.smoothed, null);
  assert.equal(reply.rows, ROWS);
  assert.deepEqual(reply.phases, [{ x: 101, stage: 'rl' }]);
});

test('the smoothed line is the EMA of every point, then downsampled the same way; a metric on some rows has only those', async () => {
  const reply = await series({ smoothing: 0.9, metrics: ['x/y', 'x/odd', 'x/none'] });
  const [line, odd, none] = reply.series;
  // TensorBoard's debiased EMA over all 5000 values, written out here.
  const values = Array.from({ length: ROWS }, (_, i) => value(i + 1));
  const w = 0.9;
  let last = 0;
  let debias = 0;
  const ema = values.map((v) => ((last = last * w + (1 - w) * v), (debias = debias * w + (1 - w)), last / debias));
  const kept = expectedMinMax(values.map((_, i) => i + 1), ema, 100);
  assert.deepEqual(line?.smoothed?.x, kept.map((i) => i + 1));
  assert.deepEqual(line?.smoothed?.y, kept.map((i) => ema[i]));
  assert.equal(odd?.stats?.count, ROWS / 2);
  assert.equal(odd?.raw.x[0], 2, 'rows without the metric are left out');
  assert.deepEqual([none?.stats, none?.raw.x.length], [null, 0]);
});

test('a zoomed range comes at full resolution, with one point beyond each edge; a short series is never downsampled', async () => {
  const zoomed = (await series({ range: { min: 1000.5, max: 1100 }, maxPoints: 400 })).series[0]!;
  assert.equal(zoomed.inRange, 100);
  assert.deepEqual(zoomed.raw.x, Array.from({ length: 102 }, (_, i) => 1000 + i));
  assert.deepEqual(zoomed.raw.y, zoomed.raw.x.map(value));
  assert.equal(zoomed.stats?.count, ROWS, 'the stats stay those of the whole run');
  const whole = (await series({ maxPoints: ROWS })).series[0]!;
  assert.equal(whole.raw.x.length, ROWS);
});

test('by wall time, x is seconds since the first row and the stage change moves with it', async () => {
  const reply = await series({ xAxis: 'time' });
  assert.equal(reply.xSource, 'time');
  assert.equal(reply.series[0]?.raw.x[0], 0);
  assert.equal(reply.series[0]?.raw.x.at(-1), (ROWS - 1) * 2);
  assert.deepEqual(reply.phases, [{ x: 200, stage: 'rl' }]);
});

test('steps rewritten out of order (a resumed run) are drawn in step order', async () => {
  const dir = await writeRunDirectory(join(root, 'resumed'), { metricRows: 0 });
  await writeFile(join(dir, 'metrics.jsonl'), [3, 1, 2, 5, 4].map((step) => JSON.stringify({ step, 'x/y': step * 10 })).join('\n') + '\n');
  const local = new PanelBackend({ runs: [dir] });
  await local.start();
  try {
    const reply = await local.handle({ kind: 'request', id: '1', method: 'metrics/series', params: { runId: 'resumed', metrics: ['x/y'], xAxis: 'step', smoothing: 0, maxPoints: 100 } });
    const line = (reply?.ok ? (reply.result as MetricSeriesResult) : null)?.series[0];
    assert.deepEqual(line?.raw, { x: [1, 2, 3, 4, 5], y: [10, 20, 30, 40, 50] });
    assert.equal(line?.stats?.last, 50);
  } finally {
    local.stop();
  }
});

test('tool fading is judged on every row by the host', async () => {
  const dir = await writeRunDirectory(join(root, 'fading'), { metricRows: 60, trend: 'fading' });
  const local = new PanelBackend({ runs: [dir] });
  await local.start();
  try {
    const reply = await local.handle({ kind: 'request', id: '1', method: 'metrics/series', params: { runId: 'fading', metrics: [], xAxis: 'step', smoothing: 0, maxPoints: 100 } });
    const verdict = reply?.ok ? (reply.result as MetricSeriesResult).toolFading : null;
    assert.equal(verdict?.fading, true);
    assert.deepEqual(verdict?.peakSteps, [1, 10]);
    assert.deepEqual(verdict?.currentSteps, [51, 60]);
  } finally {
    local.stop();
  }
});

test('metric rows can be asked for a few columns only (the CSV export), from an offset', async () => {
  const reply = await ask<{ total: number; table: MetricTable }>('metrics/rows', { runId: 'long', from: ROWS - 2, columns: ['x/odd'] });
  assert.equal(reply.total, ROWS);
  assert.deepEqual(reply.table.steps, [ROWS - 1, ROWS]);
  assert.deepEqual(Object.keys(reply.table.columns), ['x/odd']);
  assert.deepEqual(reply.table.columns['x/odd'], [null, ROWS - 1]);
});

test('a big metrics.jsonl is read after the host starts answering, a slice at a time, and panels hear when it is done', async () => {
  const dir = await writeRunDirectory(join(root, 'big'), { metricRows: 0 });
  // About 16 MB: more than the host reads before it answers.
  const pad = 'x'.repeat(1500);
  const lines = Array.from({ length: 10_000 }, (_, i) => JSON.stringify({ step: i + 1, 'x/y': i, note: pad }));
  await writeFile(join(dir, 'metrics.jsonl'), lines.join('\n') + '\n');
  const local = new PanelBackend({ runs: [dir], pollMs: 50 });
  const snapshots: RunSummary[] = [];
  local.onNotification((message) => snapshots.push(...(message.params as { runs: RunSummary[] }).runs));
  await local.start();
  try {
    const first = local.summaries()[0]!;
    assert.ok(first.metricsLoading, 'still reading after start()');
    assert.ok(first.metricRows > 0 && first.metricRows < 10_000, `${first.metricRows} rows read before answering`);
    assert.ok(first.metricsLoading.bytesRead < first.metricsLoading.bytesTotal);
    while (!snapshots.some((s) => s.metricRows === 10_000)) await new Promise((resolve) => setTimeout(resolve, 20));
    const done = snapshots.find((s) => s.metricRows === 10_000)!;
    assert.equal(done.metricsLoading, undefined, 'the snapshot with every row no longer says loading');
    // And an append after loading arrives as ever.
    await appendFile(join(dir, 'metrics.jsonl'), JSON.stringify({ step: 10_001, 'x/y': 1 }) + '\n');
    while (!snapshots.some((s) => s.metricRows === 10_001)) await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    local.stop();
  }
});

test('a series request with malformed params is refused before anything runs', async () => {
  for (const params of [{ maxPoints: 2 }, { maxPoints: 1e9 }, { smoothing: 1 }, { xAxis: 'epoch' }, { range: { min: 'a', max: 2 } }, { metrics: 'x/y' }]) {
    const reply = await backend.handle({ kind: 'request', id: 'bad', method: 'metrics/series', params: { runId: 'long', metrics: ['x/y'], xAxis: 'step', smoothing: 0, maxPoints: 100, ...params } });
    assert.equal(reply?.ok, false, JSON.stringify(params));
    assert.match(reply && !reply.ok ? reply.error.message : '', /malformed params for request 'metrics\/series'/);
  }
});
