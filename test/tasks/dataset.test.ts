import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeImage, encodePng } from '../../env/core/image.js';
import { checkTask } from '../../env/tasks/check.js';
import { generateDataset, MIN_TASKS_FOR_WORKERS, planTask } from '../../env/tasks/dataset.js';
import { readGlyphStore, writeGlyphStore } from '../../env/tasks/glyph-store.js';
import { loadTasks } from '../../env/tasks/load.js';
import { workerExecArgv } from '../../env/tasks/task-pool.js';

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-tasks-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('the same seed and options give byte-identical tasks.jsonl and PNGs, whatever the concurrency', async (t) => {
  const dir = await tempDir(t);
  // Enough tasks that concurrency 3 starts worker threads (their glyph masks shared between them).
  const options = { kind: 'mixed' as const, n: MIN_TASKS_FOR_WORKERS, seed: 9, split: 'train' as const, difficulty: [1, 3] as [1, 3], imageSize: null };
  const inline = await generateDataset(join(dir, 'a'), { ...options, concurrency: 1 });
  const threaded = await generateDataset(join(dir, 'b'), { ...options, concurrency: 3 });
  assert.deepEqual([inline.workers, threaded.workers], [0, 3]);
  assert.ok((await readFile(join(dir, 'a', 'tasks.jsonl'))).equals(await readFile(join(dir, 'b', 'tasks.jsonl'))));
  const images = (await readdir(join(dir, 'a', 'images'))).sort();
  assert.deepEqual(images, (await readdir(join(dir, 'b', 'images'))).sort());
  assert.equal(images.length, MIN_TASKS_FOR_WORKERS);
  for (const name of images) assert.ok((await readFile(join(dir, 'a', 'images', name))).equals(await readFile(join(dir, 'b', 'images', name))), name);
  // The PNGs are exactly what env/core/image.ts's fixed encoder writes for those pixels.
  const first = await readFile(join(dir, 'a', 'images', images[0]!));
  assert.ok((await encodePng(await decodeImage(first))).equals(first));
});

test('train, val and test draw from disjoint streams: no image or question is shared', async (t) => {
  const dir = await tempDir(t);
  const options = { kind: 'table' as const, n: 6, seed: 3, difficulty: [1, 1] as [1, 1], imageSize: [224, 112] as [number, number] };
  const seen = new Map<string, string>();
  for (const split of ['train', 'val', 'test'] as const) {
    await generateDataset(join(dir, split), { ...options, split });
    for (const task of await loadTasks(join(dir, split, 'tasks.jsonl'))) {
      const png = (await readFile(join(dir, split, task.image))).toString('base64');
      assert.ok(!seen.has(png), `${split} ${task.id} repeats an image from ${seen.get(png)}`);
      seen.set(png, `${split} ${task.id}`);
    }
  }
  assert.equal(planTask({ ...options, split: 'train' }, 0).split, 'train');
});

test('every written task passes the checker, and a task that cannot be made is re-rolled and counted', async (t) => {
  const dir = await tempDir(t);
  // At 224×112, some d2 tables do not fit at the first roll: those are repaired.
  const summary = await generateDataset(join(dir, 'set'), { kind: 'table', n: 20, seed: 11, split: 'train', difficulty: [2, 2], imageSize: [224, 112] });
  assert.equal(summary.generated + summary.dropped, 20);
  assert.ok(summary.repaired > 0, `expected repairs, got ${JSON.stringify(summary)}`);
  assert.ok(Object.values(summary.failures).reduce((a, b) => a + b, 0) >= summary.repaired);
  const tasks = await loadTasks(join(dir, 'set', 'tasks.jsonl'));
  assert.equal(tasks.length, summary.generated);
  const repaired = tasks.filter((task) => (task.generator?.attempt ?? 0) > 0);
  assert.equal(repaired.length, summary.repaired);
  for (const task of tasks.slice(0, 8)) {
    const report = await checkTask(task, { taskDir: join(dir, 'set') });
    assert.deepEqual(report.issues, [], task.id);
  }
});

test('an impossible request stops early with the reason instead of writing an empty data set', async (t) => {
  const dir = await tempDir(t);
  await assert.rejects(
    generateDataset(join(dir, 'set'), { kind: 'hbar', n: 30, seed: 1, split: 'train', difficulty: [5, 5], imageSize: [64, 64], maxAttempts: 2 }),
    /could all not be made.*(image-size|difficulty)/s,
  );
  await assert.rejects(readdir(join(dir, 'set')), /ENOENT/);
});

test('a folder holding other files is never replaced', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'notes.txt'), 'mine');
  await assert.rejects(generateDataset(dir, { kind: 'table', n: 1, seed: 1, split: 'train', difficulty: [1, 1], imageSize: null }), /not a vistool data set/);
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), 'mine');
});

test('glyph masks kept on disk give the same bytes as masks rasterised afresh, and a store that fails the check is replaced', async (t) => {
  const dir = await tempDir(t);
  const store = join(dir, 'store');
  const before = process.env.VISTOOL_GLYPH_CACHE;
  process.env.VISTOOL_GLYPH_CACHE = store;
  t.after(() => {
    if (before === undefined) delete process.env.VISTOOL_GLYPH_CACHE;
    else process.env.VISTOOL_GLYPH_CACHE = before;
  });
  // Worker threads start with empty caches, so each run below reads the store afresh.
  const options = { kind: 'mixed' as const, n: MIN_TASKS_FOR_WORKERS, seed: 21, split: 'val' as const, difficulty: [1, 2] as [1, 2], imageSize: null, concurrency: 2 };
  const cold = await generateDataset(join(dir, 'cold'), options);
  const [file] = await readdir(store);
  assert.ok(file && cold.glyphsRasterised > 100, `the first run rasterised ${cold.glyphsRasterised} masks into ${file}`);
  const warm = await generateDataset(join(dir, 'warm'), options);
  assert.equal(warm.glyphsRasterised, 0, 'the second run found every mask in the store');
  const sameFiles = async (a: string, b: string) => {
    assert.ok((await readFile(join(a, 'tasks.jsonl'))).equals(await readFile(join(b, 'tasks.jsonl'))));
    for (const name of await readdir(join(a, 'images'))) assert.ok((await readFile(join(a, 'images', name))).equals(await readFile(join(b, 'images', name))), name);
  };
  await sameFiles(join(dir, 'cold'), join(dir, 'warm'));
  // A store from another renderer (here: every mask's ink darkened by one grey level) fails the re-render check: it is not used, and is replaced.
  const entries = readGlyphStore(join(store, file));
  writeGlyphStore(join(store, file), [], entries.map(([key, mask]) => [key, mask && { ...mask, alpha: mask.alpha.map((a) => Math.min(255, a + 1)) }]));
  const rejected = await generateDataset(join(dir, 'rejected'), options);
  assert.ok(rejected.glyphsRasterised > 100, 'masks that failed the check were rasterised again');
  await sameFiles(join(dir, 'cold'), join(dir, 'rejected'));
  const replaced = new Map(readGlyphStore(join(store, file)));
  for (const [key, mask] of entries.slice(0, 50)) assert.deepEqual(replaced.get(key), mask, key);
});

test('a bundled worker starts with the parent\'s Node options less its loaders, in either spelling', () => {
  assert.deepEqual(workerExecArgv(['--import', 'tsx', '--max-old-space-size=900', '--require=./hook.cjs', '-r', 'x', '--cpu-prof', '--loader=ts-node/esm', '--experimental-loader', 'y']), ['--max-old-space-size=900', '--cpu-prof']);
  assert.deepEqual(workerExecArgv([]), []);
  // A flag whose name only begins like a loader's is kept.
  assert.deepEqual(workerExecArgv(['--import-meta-resolve', '--required-x']), ['--import-meta-resolve', '--required-x']);
});
