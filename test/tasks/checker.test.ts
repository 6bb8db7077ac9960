import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import sharp from 'sharp';
import { join } from 'node:path';
import { checkGeometry, checkTask } from '../../env/tasks/check.js';
import { generateDataset } from '../../env/tasks/dataset.js';
import { buildTask, renderTask } from '../../env/tasks/generate.js';
import { renderLabelMap } from '../../env/tasks/paint.js';
import { loadTasks } from '../../env/tasks/load.js';
import { placeText } from '../../env/tasks/place-text.js';
import { recordLine } from '../../env/tasks/record-line.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import type { Scene } from '../../env/tasks/scene.js';
import type { BBox } from '../../env/tools/metadata.js';

async function dataset(t: { after: (fn: () => Promise<void>) => void }): Promise<{ dir: string; tasks: TaskRecord[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-check-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await generateDataset(dir, { kind: 'table', n: 3, seed: 5, split: 'train', difficulty: [2, 2], imageSize: null });
  return { dir, tasks: await loadTasks(join(dir, 'tasks.jsonl')) };
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

test('a stored task that is intact passes every check, regenerated from its seed', async (t) => {
  const { dir, tasks } = await dataset(t);
  for (const task of tasks) assert.deepEqual((await checkTask(task, { taskDir: dir })).issues, []);
});

test('the checker catches a band shifted off its labels, on the pixels', async (t) => {
  const { dir, tasks } = await dataset(t);
  const broken = clone(tasks[0]!);
  const bands = broken.meta.columns_bbox as Record<string, BBox>;
  const name = Object.keys(bands)[1]!;
  bands[name]!.x1 += 9;
  const report = await checkTask(broken, { taskDir: dir });
  assert.equal(report.ok, false);
  assert.ok(report.issues.some((i) => i.check === 'geometry' && i.message.includes(`columns band '${name}'`)), JSON.stringify(report.issues));
});

test('the checker catches a wrong answer by recomputing it from the table', async (t) => {
  const { dir, tasks } = await dataset(t);
  const broken = clone(tasks[1]!);
  broken.answer = '987654';
  const report = await checkTask(broken, { taskDir: dir });
  assert.ok(report.issues.some((i) => i.check === 'answer' && /the table gives/.test(i.message)), JSON.stringify(report.issues));
});

test('the checker catches a gold call naming a label the image does not have', async (t) => {
  const { dir, tasks } = await dataset(t);
  const broken = clone(tasks[2]!);
  broken.gold = [{ name: 'focus_on_rows_with_draw', arguments: { rows: ['Nobody'] } }, { name: 'focus_on_everything', arguments: {} }];
  const issues = (await checkTask(broken, { taskDir: dir })).issues.filter((i) => i.check === 'gold').map((i) => i.message);
  assert.ok(issues.some((m) => m.includes("'Nobody'")), issues.join('\n'));
  assert.ok(issues.some((m) => m.includes("unknown tool 'focus_on_everything'")), issues.join('\n'));
});

test('the checker catches an image that is not the one its seed draws', async (t) => {
  const { dir, tasks } = await dataset(t);
  await writeFile(join(dir, tasks[0]!.image), await readFile(join(dir, tasks[1]!.image)));
  const report = await checkTask(tasks[0]!, { taskDir: dir });
  assert.ok(report.issues.some((i) => i.check === 'image' && i.message.includes(tasks[0]!.image)), JSON.stringify(report.issues));
});

test('the image check compares pixels: another encoder\'s file of the same pixels passes, one changed pixel does not', async (t) => {
  const { dir, tasks } = await dataset(t);
  const task = tasks[0]!;
  const path = join(dir, task.image);
  const { data, info } = await sharp(await readFile(path)).raw().toBuffer({ resolveWithObject: true });
  // sharp/libspng with adaptive filtering and zlib level 9: other bytes, the same pixels.
  const reencoded = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } }).png({ compressionLevel: 9, adaptiveFiltering: true }).toBuffer();
  assert.notDeepEqual(reencoded, await readFile(path));
  await writeFile(path, reencoded);
  assert.deepEqual((await checkTask(task, { taskDir: dir })).issues, []);
  const changed = Buffer.from(data);
  const at = 3 * (info.width * 5 + 7);
  changed[at] = (changed[at] as number) ^ 0x40;
  await writeFile(path, await sharp(changed, { raw: { width: info.width, height: info.height, channels: 3 } }).png().toBuffer());
  const issues = (await checkTask(task, { taskDir: dir })).issues.filter((i) => i.check === 'image').map((i) => i.message);
  assert.deepEqual(issues, [`${task.image} is not the image its seed produces (1 of ${info.width * info.height} pixels differ)`]);
});

test('a band that holds none of its label’s ink is reported', async () => {
  const task = await renderTask(buildTask({ seed: 1, split: 'train', index: 0, attempt: 0, kind: 'vbar', difficulty: 1, imageSize: null }));
  const meta = clone(task.record.meta);
  const bands = meta.x_values_bbox as Record<string, BBox>;
  const [first] = Object.keys(bands);
  bands['Ghost'] = { x1: 1, y1: 1, x2: 3, y2: 3 };
  const messages = checkGeometry(task.labelMap, meta).map((i) => i.message);
  assert.ok(messages.some((m) => m.includes("band 'Ghost' holds no ink")), messages.join('\n'));
  assert.ok(first !== undefined);
});

test('overlapping labels and labels cut off at the edge are caught on the label map', async () => {
  const a = placeText('Overlap', { fontSize: 14 }, { x: 20, y: 20, h: 'left', v: 'top' });
  const b = placeText('Overlap', { fontSize: 14 }, { x: 26, y: 22, h: 'left', v: 'top' });
  const c = placeText('Edge', { fontSize: 14 }, { x: 96, y: 60, h: 'left', v: 'top' });
  const scene: Scene = {
    width: 120,
    height: 90,
    background: '#ffffff',
    layers: [
      { name: 'label A', owners: {}, draw: (f) => [a.draw(f ?? '#000000')] },
      { name: 'label B', owners: {}, draw: (f) => [b.draw(f ?? '#000000')] },
      { name: 'label C', owners: {}, draw: (f) => [c.draw(f ?? '#000000')] },
    ],
    meta: { unit: 'pixels', source: 'generator' },
  };
  const map = await renderLabelMap(scene);
  const messages = checkGeometry(map, scene.meta).map((i) => i.message);
  assert.ok(map.conflicts > 0);
  assert.ok(messages.some((m) => /the ink of two marks overlaps/.test(m)), messages.join('\n'));
  assert.ok(messages.some((m) => /label C touches the image edge/.test(m)), messages.join('\n'));
});

test('records are written with a fixed key order, so equal records give equal bytes', () => {
  const a = { source: 'x', id: 'a', image: 'i.png', question: 'q', answer: '1', kind: 'table', difficulty: 1, meta: {} } as TaskRecord;
  const b = { id: 'a', image: 'i.png', question: 'q', answer: '1', kind: 'table', difficulty: 1, meta: {}, source: 'x' } as TaskRecord;
  assert.equal(recordLine(a), recordLine(b));
  assert.match(recordLine(a), /^\{"id":"a","image":"i.png","question":"q"/);
});
