/**
 * `data gen --family`, `--labels`, `--shuffle-labels`, `--categories` and `--min-top-gap`: what
 * each option guarantees, checked on the generated records and their real pixels (sharp renders,
 * the checker's label map).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../env/cli/command.js';
import { createDataGenCommand } from '../../env/cli/data-gen.js';
import { checkTask } from '../../env/tasks/check.js';
import { generateDataset, type DatasetOptions } from '../../env/tasks/dataset.js';
import { buildTask, renderTask, type TaskSpec } from '../../env/tasks/generate.js';
import { loadTasks } from '../../env/tasks/load.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import { runToolCall } from '../../env/tools/registry.js';

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-options-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const DEMO: Omit<DatasetOptions, 'n' | 'seed'> = {
  kind: 'vbar', split: 'train', difficulty: [1, 1], imageSize: [112, 112],
  families: ['argmax'], labels: ['A', 'B', 'C'], minTopGap: 0.2,
};

/** The value column's numbers, largest first. */
function sortedValues(task: TaskRecord, column: string): number[] {
  const c = task.table!.columns.indexOf(column);
  return task.table!.rows.map((row) => row[c] as number).sort((a, b) => b - a);
}

function quietIo() {
  const out = { stdout: '', stderr: '' };
  return { out, io: { stdout: { write: (s: string) => (out.stdout += s) }, stderr: { write: (s: string) => (out.stderr += s) } } };
}

test('the demo options give argmax-only tasks with labels A, B, C, a 20% lead, correct answers, and every task passes the checker including regeneration', async (t) => {
  const dir = await tempDir(t);
  const summary = await generateDataset(join(dir, 'set'), { ...DEMO, n: 40, seed: 11 });
  assert.equal(summary.generated, 40, 'the gap is met by redrawing data, so nothing is dropped');
  const tasks = await loadTasks(join(dir, 'set', 'tasks.jsonl'));
  const answers = new Set<string>();
  for (const task of tasks) {
    assert.equal(task.family, 'argmax');
    assert.deepEqual(task.table!.rows.map((r) => r[0]), ['A', 'B', 'C']);
    assert.deepEqual(Object.keys(task.meta.x_values_bbox ?? {}), ['A', 'B', 'C']);
    const [top, second] = sortedValues(task, task.query!.column!);
    assert.ok((top! - second!) >= 0.2 * top! - 1e-9, `${task.id}: ${top} leads ${second} by less than 20%`);
    assert.equal(task.answer, String(task.table!.rows.find((row) => row[1] === top)![0]), `${task.id}: the answer is the tallest bar's label`);
    assert.deepEqual(task.gold, [{ name: 'focus_on_x_values_with_highlight', arguments: { x_values: [task.answer] } }]);
    assert.deepEqual(task.generator, { version: 3, seed: 11, split: 'train', index: task.generator!.index, attempt: task.generator!.attempt, kind: 'vbar', difficulty: 1, image_size: [112, 112], families: ['argmax'], labels: ['A', 'B', 'C'], min_top_gap: 0.2 });
    answers.add(task.answer as string);
  }
  assert.deepEqual([...answers].sort(), ['A', 'B', 'C'], 'each label is the tallest somewhere: the answer is not fixed by position');
  for (const task of tasks.slice(0, 8)) {
    const report = await checkTask(task, { taskDir: join(dir, 'set') });
    assert.deepEqual(report.issues, [], `${task.id} regenerates byte for byte from its recorded options`);
  }
});

test('the tick labels painted are exactly the given ones, left to right, and only the tick text differs from other labels', async () => {
  const spec: TaskSpec = { seed: 5, split: 'train', index: 3, attempt: 0, kind: 'vbar', difficulty: 1, imageSize: [112, 112], labels: ['A', 'B', 'C'] };
  const abc = await renderTask(buildTask(spec));
  const xyz = await renderTask(buildTask({ ...spec, labels: ['X', 'Y', 'Z'] }));
  const painted = abc.labelMap.marks
    .map((mark, id) => ({ name: mark.name, box: abc.labelMap.extents[id] }))
    .filter((m) => m.name.startsWith('x tick label') && m.box !== null)
    .sort((a, b) => a.box!.x1 - b.box!.x1)
    .map((m) => m.name);
  assert.deepEqual(painted, ['x tick label "A"', 'x tick label "B"', 'x tick label "C"']);
  // Same seed, other labels: bars and values are the same data, so pixels differ only where tick text is.
  assert.deepEqual(abc.record.table!.rows.map((r) => r[1]), xyz.record.table!.rows.map((r) => r[1]));
  const tickIds = new Set(abc.labelMap.marks.flatMap((m, id) => (m.name.startsWith('x tick label') ? [id] : [])));
  const tickBoxes = [...tickIds].map((id) => abc.labelMap.extents[id]!);
  let differing = 0;
  for (let y = 0; y < abc.image.height; y++) {
    for (let x = 0; x < abc.image.width; x++) {
      const i = (y * abc.image.width + x) * 3;
      if (abc.image.data[i] === xyz.image.data[i] && abc.image.data[i + 1] === xyz.image.data[i + 1] && abc.image.data[i + 2] === xyz.image.data[i + 2]) continue;
      differing++;
      const near = tickBoxes.some((b) => x >= b.x1 - 2 && x < b.x2 + 2 && y >= b.y1 - 2 && y < b.y2 + 2);
      assert.ok(near, `pixel (${x}, ${y}) changed outside every tick label`);
    }
  }
  assert.ok(differing > 0, 'A/B/C and X/Y/Z must look different');
});

test('--family restricts every question to the listed families, on tables and charts alike', async (t) => {
  const dir = await tempDir(t);
  await generateDataset(join(dir, 'set'), { kind: 'mixed', n: 30, seed: 4, split: 'train', difficulty: [1, 3], imageSize: null, families: ['argmin', 'compare'] });
  const tasks = await loadTasks(join(dir, 'set', 'tasks.jsonl'));
  assert.ok(tasks.length >= 27, `only ${tasks.length} of 30 were made`);
  assert.deepEqual(new Set(tasks.map((x) => x.family)), new Set(['argmin', 'compare']));
  assert.ok(new Set(tasks.map((x) => x.kind)).size >= 3);
  for (const task of tasks) assert.deepEqual(task.generator!.families, ['argmin', 'compare']);
});

test('--min-top-gap holds for argmax and argmin on charts with more categories', async (t) => {
  const dir = await tempDir(t);
  const summary = await generateDataset(join(dir, 'set'), { kind: 'hbar', n: 24, seed: 8, split: 'test', difficulty: [2, 2], imageSize: null, families: ['argmax', 'argmin'], minTopGap: 0.3 });
  assert.equal(summary.dropped, 0);
  for (const task of await loadTasks(join(dir, 'set', 'tasks.jsonl'))) {
    const values = sortedValues(task, task.query!.column!);
    const [a, b] = task.family === 'argmax' ? [values[0]!, values[1]!] : [values[values.length - 1]!, values[values.length - 2]!];
    assert.ok(Math.abs(a - b) >= 0.3 * Math.max(a, b) - 1e-9, `${task.id} (${task.family}): ${a} vs ${b}`);
  }
});

test('runs without the new options are unchanged: the record has no new keys', async () => {
  const record = buildTask({ seed: 1, split: 'train', index: 0, attempt: 0, kind: 'vbar', difficulty: 1, imageSize: [112, 112] }).record;
  assert.deepEqual(Object.keys(record.generator!), ['version', 'seed', 'split', 'index', 'attempt', 'kind', 'difficulty', 'image_size']);
});

test('data gen passes the options through and refuses bad ones with a usage error that says what is allowed', async (t) => {
  const dir = await tempDir(t);
  const { out, io } = quietIo();
  const gen = createDataGenCommand(io);
  const code = await gen.run(['--kind', 'vbar', '--n', '3', '--seed', '2', '--difficulty', '1', '--image-size', '112x112', '--family', 'argmax', '--labels', 'A,B,C', '--min-top-gap', '0.2', '--out', join(dir, 'set')]);
  assert.equal(code, 0, out.stderr);
  const first = JSON.parse((await readFile(join(dir, 'set', 'tasks.jsonl'), 'utf8')).split('\n')[0]!) as TaskRecord;
  assert.deepEqual([first.generator!.families, first.generator!.labels, first.generator!.min_top_gap], [['argmax'], ['A', 'B', 'C'], 0.2]);

  const base = ['--kind', 'vbar', '--n', '2', '--seed', '1', '--difficulty', '1', '--image-size', '112x112', '--out', join(dir, 'never')];
  const usage = (pattern: RegExp) => (e: unknown) => e instanceof UsageError && pattern.test(e.message);
  await assert.rejects(gen.run([...base, '--family', 'argmax,tallest']), usage(/--family must be a comma-separated list of lookup, filter_sum, count, argmax, argmin, compare, difference, average, list, level; got unknown 'tallest'/));
  await assert.rejects(gen.run([...base, '--shuffle-labels']), usage(/--shuffle-labels shuffles the labels --labels gives/));
  await assert.rejects(gen.run([...base, '--categories', '1']), usage(/--categories must be a count 2..40/));
  await assert.rejects(gen.run([...base.map((a) => (a === 'vbar' ? 'table' : a)), '--categories', '6']), usage(/--kind table has rows/));
  await assert.rejects(gen.run([...base.map((a) => (a === 'vbar' ? 'table' : a)), '--family', 'level']), usage(/--family level is asked of single-series charts only/));
  await assert.rejects(gen.run([...base, '--labels', 'A,B,C,D,E', '--categories', '6']), usage(/--labels gives 5 labels but a difficulty-1 vbar may need 6 categories; give at least 6 or fewer --categories/));
  await assert.rejects(gen.run([...base, '--labels', 'A,B']), usage(/--labels gives 2 labels but a difficulty-1 vbar may need 3 categories/));
  await assert.rejects(gen.run([...base, '--labels', 'A,Bordeaux,C']), usage(/--labels 'Bordeaux' is 8 characters; a difficulty-1 vbar on 112x112 fits at most 5/));
  await assert.rejects(gen.run([...base, '--labels', 'A,B,A']), usage(/--labels repeats 'A'/));
  await assert.rejects(gen.run([...base, '--min-top-gap', '1.5']), usage(/--min-top-gap must be a fraction between 0 and 0.9/));
  await assert.rejects(gen.run(['--kind', 'vbar', '--n', '2', '--seed', '1', '--difficulty', '1-2', '--labels', 'A,B,C', '--out', join(dir, 'never')]), usage(/difficulty-2 vbar may need 6 categories/));
});

const LEVEL_DEMO: Omit<DatasetOptions, 'n' | 'seed'> = {
  kind: 'vbar', split: 'train', difficulty: [2, 2], imageSize: [224, 112],
  families: ['level'], labels: ['A', 'B', 'C', 'D', 'E', 'F'], shuffleLabels: true, categories: [6, 6],
};

/** A level recomputed here from the record's table and the printed bounds in the question. */
function levelFromQuestion(task: TaskRecord): string {
  const match = /low \(under ([\d.]+)\), medium or high \(over ([\d.]+)\)/.exec(task.question);
  assert.ok(match, `${task.id}: the question states both bounds: ${task.question}`);
  const [lo, hi] = [Number(match[1]), Number(match[2])];
  const row = task.table!.rows.find((r) => r[0] === task.query!.rows![0])!;
  const value = Number(row[1]);
  return value < lo ? 'low' : value > hi ? 'high' : 'medium';
}

test('level questions: six shuffled bars, every level present and clear of the bounds, a balanced answer, a mask call that names only the label', async (t) => {
  const dir = await tempDir(t);
  const summary = await generateDataset(join(dir, 'set'), { ...LEVEL_DEMO, n: 60, seed: 3 });
  assert.equal(summary.generated, 60, 'level data is drawn to fit, so nothing is dropped');
  const tasks = await loadTasks(join(dir, 'set', 'tasks.jsonl'));
  const orders = new Set<string>();
  const answers = new Map<string, number>();
  for (const task of tasks) {
    const labels = Object.keys(task.meta.x_values_bbox ?? {});
    assert.equal(labels.length, 6);
    assert.deepEqual([...labels].sort(), ['A', 'B', 'C', 'D', 'E', 'F']);
    orders.add(labels.join(''));
    assert.equal(task.family, 'level');
    const asked = task.query!.rows![0]!;
    assert.ok(task.question.endsWith(` "${asked}"?`), `${task.id}: the question ends with the label, quoted as the call writes it: ${task.question}`);
    assert.equal(task.answer, levelFromQuestion(task), `${task.id}: the answer follows from the value and the printed bounds`);
    const [lo, hi] = task.query!.bounds!;
    const top = 4 * lo;
    assert.equal(hi, 3 * lo, 'bounds at a quarter and three quarters of the scale');
    assert.ok(Math.log10(top) % 1 === 0, `${task.id}: the scale ${top} is a power of ten`);
    const values = task.table!.rows.map((r) => Number(r[1]));
    const levels = new Set(values.map((v) => (v < lo ? 'low' : v > hi ? 'high' : 'medium')));
    assert.equal(levels.size, 3, `${task.id}: every level appears on the chart`);
    for (const v of values) assert.ok(Math.abs(v - lo) >= top / 10 - 1e-9 && Math.abs(v - hi) >= top / 10 - 1e-9, `${task.id}: ${v} is within a tenth of the scale of a bound`);
    // The call copies the label from the question and contains no level word.
    assert.deepEqual(task.gold, [{ name: 'focus_on_x_values_with_mask', arguments: { x_values: [asked] } }]);
    assert.ok(!/low|medium|high/.test(JSON.stringify(task.gold)));
    assert.deepEqual(task.generator!.categories, [6, 6]);
    assert.equal(task.generator!.shuffle_labels, true);
    answers.set(task.answer as string, (answers.get(task.answer as string) ?? 0) + 1);
  }
  assert.ok(orders.size >= 50, `the label order changes from chart to chart (${orders.size} orders in 60)`);
  assert.deepEqual([...answers.keys()].sort(), ['high', 'low', 'medium']);
  for (const [answer, count] of answers) assert.ok(count >= 10 && count <= 30, `${answer} is the answer ${count} times in 60: far from a third`);
  for (const task of tasks.slice(0, 6)) {
    const report = await checkTask(task, { taskDir: join(dir, 'set') });
    assert.deepEqual(report.issues, [], `${task.id} regenerates byte for byte from its recorded options`);
  }
});

test('masking every bar but the asked one leaves exactly that bar: the level is readable from the edited image alone', async () => {
  for (const index of [0, 1, 2, 3]) {
    const built = await renderTask(buildTask({ seed: 9, split: 'train', index, attempt: 0, kind: 'vbar', difficulty: 2, imageSize: [224, 112], families: ['level'], labels: ['A', 'B', 'C', 'D', 'E', 'F'], shuffleLabels: true, categories: [6, 6] }));
    const { record } = built;
    const outcome = await runToolCall(built.image, record.gold![0]!, resolveMetadata(record.meta, built.image.width, built.image.height));
    assert.ok(outcome.ok, `${record.id}: the gold call succeeds`);
    const edited = outcome.image;
    const bands = record.meta.x_values_bbox!;
    const asked = record.query!.rows![0]!;
    for (const [label, box] of Object.entries(bands)) {
      // Inside the bands the tool whitens, nothing but white is left; the asked band keeps its bar.
      const inked = countInk(edited, box);
      if (label === asked) assert.ok(inked > 20, `${record.id}: the asked bar ${label} is gone`);
      else assert.ok(inked < 3, `${record.id}: bar ${label} still has ${inked} inked pixels after the mask`);
    }
  }
});

function countInk(image: { width: number; height: number; data: Uint8Array | Buffer }, box: { x1: number; y1: number; x2: number; y2: number }): number {
  let inked = 0;
  for (let y = Math.ceil(box.y1) + 3; y < Math.floor(box.y2) - 3; y++) {
    for (let x = Math.ceil(box.x1) + 3; x < Math.floor(box.x2) - 3; x++) {
      const i = (y * image.width + x) * 3;
      if ((image.data[i] as number) < 200 || (image.data[i + 1] as number) < 200 || (image.data[i + 2] as number) < 200) inked++;
    }
  }
  return inked;
}
