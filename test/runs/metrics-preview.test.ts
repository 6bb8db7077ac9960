/**
 * The preview of a big metrics.jsonl's unread part (env/runs/metrics-preview.ts) and how the
 * charts' series continue from it (env/runs/metric-series.ts). Expected values come from the
 * lines as this test wrote them, not from the store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MetricSeriesSource } from '../../env/runs/metric-series.js';
import { previewStore, sampleLines } from '../../env/runs/metrics-preview.js';
import { MetricsStore } from '../../env/runs/metrics-store.js';
import { RunSource } from '../../env/runs/run-source.js';

const reward = (step: number) => Math.round(1000 * Math.sin(step / 50)) / 1000;

/** Training lines 1..n (SFT for the first third, RL after), padded so a line is `pad` bytes or so. */
function lines(n: number, pad = 0): string[] {
  return Array.from({ length: n }, (_, i) => {
    const step = i + 1;
    return JSON.stringify({ step, stage: step <= n / 3 ? 'sft' : 'rl', 'reward/mean': reward(step), ...(pad ? { note: 'x'.repeat(pad) } : {}) });
  });
}

async function tempFile(t: { after: (fn: () => Promise<void>) => void }, content: string | Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-preview-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'metrics.jsonl');
  await writeFile(path, content);
  return path;
}

test('sampled lines are whole lines of the range, in file order, each once, spread over it', async (t) => {
  const all = lines(2000);
  const path = await tempFile(t, all.join('\n') + '\n');
  const from = Buffer.byteLength(all.slice(0, 500).join('\n') + '\n');
  const to = Buffer.byteLength(all.join('\n') + '\n');
  const sampled = await sampleLines(path, from, to, 100);
  assert.equal(sampled[0], all[500], 'the first sample is the line the range starts with');
  const positions = sampled.map((line) => all.indexOf(line));
  assert.ok(positions.every((p) => p >= 500), 'nothing before the range');
  assert.deepEqual(positions, [...positions].sort((a, b) => a - b), 'file order');
  assert.equal(new Set(positions).size, positions.length, 'each line once');
  assert.ok(sampled.length >= 95, `${sampled.length} samples`);
  // Spread: 100 samples over 1500 lines leave no gap much over 15 lines.
  const gaps = positions.slice(1).map((p, i) => p - (positions[i] as number));
  assert.ok(Math.max(...gaps) <= 17, `largest gap ${Math.max(...gaps)}`);
  assert.ok((positions[positions.length - 1] as number) >= 1980, 'the end of the range is reached');
});

test('more samples than lines take each line once; a torn last line and over-long lines are not sampled', async (t) => {
  const short = lines(10);
  const long = JSON.stringify({ step: 11, 'reward/mean': 1, note: 'y'.repeat(40_000) });
  const content = [...short, long, '{"step": 12, "reward/mean": 2}'].join('\n') + '\n{"step": 13, "rew';
  const path = await tempFile(t, content);
  const sampled = await sampleLines(path, 0, Buffer.byteLength(content), 1000);
  assert.deepEqual(sampled, [...short, '{"step": 12, "reward/mean": 2}']);
  assert.deepEqual(await sampleLines(path, 50, 50, 10), [], 'an empty range');
});

test('while a file loads, each line continues past the rows read with the sampled rows; exact once read', async (t) => {
  const all = lines(3000);
  const path = await tempFile(t, all.join('\n') + '\n');
  const store = new MetricsStore(path);
  await store.refresh(40_000); // about the first 800 lines
  const loading = store.loading;
  assert.ok(loading, 'still loading');
  const read = store.rowCount;
  assert.ok(read > 500 && read < 1500, `${read} rows read`);
  const preview = await previewStore(path, loading.bytesRead, loading.bytesTotal, 200);
  let current: MetricsStore | null = preview;
  const source = new MetricSeriesSource(store, () => current);
  const params = { metrics: ['reward/mean', 'absent/metric'], xAxis: 'step' as const, smoothing: 0.5, maxPoints: 10_000 };
  const result = source.query(params);
  assert.equal(result.rows, read, 'rows are the rows read');
  const sampledSteps = (await sampleLines(path, loading.bytesRead, loading.bytesTotal, 200)).map((line) => (JSON.parse(line) as { step: number }).step);
  assert.deepEqual(result.preview, { after: read, rows: sampledSteps.filter((step) => step > read).length });
  const line = result.series[0];
  assert.ok(line && line.stats);
  const exactPart = line.raw.x.filter((x) => x <= read);
  const sampledPart = line.raw.x.filter((x) => x > read);
  assert.deepEqual(exactPart, Array.from({ length: read }, (_, i) => i + 1), 'every row read, in order');
  assert.ok(sampledPart.length >= 150 && sampledPart.length < 3000 - read, `${sampledPart.length} sampled points`);
  assert.ok((sampledPart[sampledPart.length - 1] as number) > 2950, 'the samples reach the end of the run');
  line.raw.x.forEach((x, i) => assert.equal(line.raw.y[i], reward(x), `step ${x}`));
  assert.equal(line.smoothed?.x.length, line.raw.x.length);
  assert.equal(line.stats.count, read, 'count is the rows read');
  assert.equal(line.stats.last, reward(read));
  const everyValue = line.raw.y;
  assert.equal(line.stats.max, Math.max(...everyValue));
  assert.deepEqual(result.series[1]?.raw, { x: [], y: [] }, 'a metric nobody logs stays empty');
  // The SFT → RL change at step 1001 lies in the unread part: the samples place it within their spacing.
  assert.equal(result.phases.length, 1);
  assert.equal(result.phases[0]?.stage, 'rl');
  assert.ok(Math.abs((result.phases[0]?.x as number) - 1001) <= 20, `change at ${result.phases[0]?.x}`);
  // No preview on the wall-clock axis (the samples' clock would start at their own first row), nor once everything is read.
  assert.equal(source.query({ ...params, xAxis: 'time' }).preview, undefined);
  await store.refresh();
  current = null;
  const done = source.query(params);
  assert.equal(done.preview, undefined);
  assert.deepEqual(done.series[0]?.raw.x, Array.from({ length: 3000 }, (_, i) => i + 1));
  assert.equal(done.phases[0]?.x, 1001, 'exact once read');
});

test('a run whose metrics.jsonl is big shows sampled lines in its summary while it loads, none once read', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-preview-run-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const all = lines(24_000, 1000); // ~24 MB: more than 16 MB left after a 4 MB first read
  await writeFile(join(dir, 'metrics.jsonl'), all.join('\n') + '\n');
  const run = new RunSource('big', dir);
  await run.refresh({ metricsBytes: 4 << 20 });
  const loading = run.summary().metricsLoading;
  assert.ok(loading?.sampledLines && loading.sampledLines > 1900, JSON.stringify(loading));
  const first = run.charts.query({ metrics: ['reward/mean'], xAxis: 'step', smoothing: 0, maxPoints: 500 });
  assert.ok(first.preview && first.preview.after === run.metrics.rowCount);
  assert.ok((first.series[0]?.raw.x.at(-1) as number) > 23_900, 'the whole run is drawn');
  while (run.metricsPending) await run.refresh({ metricsBytes: 8 << 20 });
  assert.equal(run.summary().metricsLoading, undefined);
  assert.equal(run.charts.query({ metrics: ['reward/mean'], xAxis: 'step', smoothing: 0, maxPoints: 500 }).preview, undefined);
});
