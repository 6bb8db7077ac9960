import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeImage, encodePng } from '../../env/core/image.js';
import { checkTask } from '../../env/tasks/check.js';
import { generateDataset, MIN_TASKS_FOR_WORKERS, planTask } from '../../env/tasks/dataset.js';
import { loadTasks } from '../../env/tasks/load.js';

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
