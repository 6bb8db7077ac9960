import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Episode } from '../../env/episodes/episode.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import sharp from 'sharp';
import { loadTasks } from '../../env/tasks/load.js';
import { writeConverted } from '../../env/tasks/loaders/common.js';
import { loadVStar } from '../../env/tasks/loaders/vstar.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { tableFixture } from '../fixtures/render.js';

/** The fixture table (Rider, Country, Wins, Team, Year), asked about Merckx's wins, with the gold calls gold.ts would write. */
async function goldTableEpisode() {
  const fixture = await tableFixture();
  const task: TaskRecord = {
    id: 'fixture-table-gold',
    image: 'table.png',
    question: 'How many wins does Merckx have?',
    answer: '34',
    kind: 'table',
    difficulty: 1,
    meta: fixture.meta,
    source: 'test',
    table: { columns: ['Rider', 'Country', 'Wins', 'Team', 'Year'], rows: [] },
    gold: [
      { name: 'focus_on_columns_with_mask', arguments: { columns: ['Rider', 'Wins'] } },
      { name: 'focus_on_rows_with_draw', arguments: { rows: ['Merckx'] } },
    ],
  };
  const store = new ImageStore(await mkdtemp(join(tmpdir(), 'vistool-targets-')));
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  return (await Episode.start(task, fixture.image, meta, store)).episode;
}

const call = (name: string, args: Record<string, unknown>) => `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;

test('every call that runs carries its target in the trajectory; failed calls carry none', async () => {
  const episode = await goldTableEpisode();
  await episode.step({ text: call('focus_on_columns_with_mask', { columns: ['Rider', 'Wins'] }) });
  await episode.step({ text: call('focus_on_rows_with_draw', { rows: ['Hinault'] }) });
  await episode.step({ text: call('focus_on_rows_with_draw', { rows: ['Nobody'] }) });
  await episode.step({ text: '<answer>34</answer>' });
  const calls = episode.trajectory().turns.flatMap((t) => (t.role === 'assistant' ? t.calls : []));
  assert.deepEqual(calls.map((c) => [c.ok, c.target]), [[true, 'on'], [true, 'off'], [false, undefined]]);
});

test('scan() keeps the findings in the trajectory: an off-target call, an error answered without a retry', async () => {
  const episode = await goldTableEpisode();
  assert.equal(episode.trajectory().findings, undefined, 'not scanned before scoring');
  await episode.step({ text: call('focus_on_rows_with_draw', { rows: ['Hinault'] }) });
  await episode.step({ text: call('focus_on_rows_with_draw', { rows: ['Nobody'] }) });
  await episode.step({ text: '<answer>34</answer>' });
  assert.deepEqual(episode.scan(), ['off_target_call', 'ignored_tool_error']);
  assert.deepEqual(episode.trajectory().findings, ['off_target_call', 'ignored_tool_error']);
});

test('a zoom is judged in the image it read; a mask of every column changes nothing and is a degenerate edit', async () => {
  const episode = await goldTableEpisode();
  await episode.step({ text: call('focus_on_columns_with_mask', { columns: ['Rider', 'Country', 'Wins', 'Team', 'Year'] }) });
  await episode.step({ text: '<answer>34</answer>' });
  const [first] = episode.trajectory().turns.flatMap((t) => (t.role === 'assistant' ? t.calls : []));
  assert.equal(first?.target, 'partly', 'every column includes Wins and more');
  assert.equal(first?.image_out, first?.image_in);
  assert.deepEqual(episode.scan(), ['degenerate_edit']);
});

/**
 * A hand-made search scene on a plain 1120×840 image (shown as is: both sides are multiples of 28):
 * the target is a 41 px square at [400, 320, 441, 361] labelled in 15 px type (cap height 10.95 px),
 * judged at the default budget (50176 pixels, legible from 6 px).
 */
async function searchEpisode() {
  const task: TaskRecord = {
    id: 'hand-search',
    image: 'scene.png',
    question: 'What is written on the red square?',
    answer: 'X7',
    kind: 'search',
    difficulty: 1,
    source: 'test',
    family: 'text_on',
    query: { family: 'text_on', colour: 'red', shape: 'square' },
    meta: {
      unit: 'pixels',
      label_font_size: 15,
      objects: [{ shape: 'square', colour: 'red', text: 'X7', bbox: { x1: 400, y1: 320, x2: 441, y2: 361 } }],
      targets: [0],
      target_bbox: { x1: 400, y1: 320, x2: 441, y2: 361 },
    },
  };
  const image = { width: 1120, height: 840, data: Buffer.alloc(1120 * 840 * 3, 128) };
  const store = new ImageStore(await mkdtemp(join(tmpdir(), 'vistool-search-targets-')));
  return (await Episode.start(task, image, resolveMetadata(task.meta, 1120, 840), store)).episode;
}

test('search: nested crops and zooms are judged where they lie in the task image, with their IoU in the record', async () => {
  const episode = await searchEpisode();
  // [224, 224, 896, 700]: holds the target, but 672×476 is seen at √(50176 / 319872) = 0.396: 4.3 px.
  await episode.step({ text: call('crop', { bbox: [224, 224, 896, 700] }) });
  // Its [168, 84, 336, 196] as shown (672×476, as is) → [392, 308, 560, 420] of the task image, 168×112 at full size: 10.95 px.
  await episode.step({ text: call('crop', { bbox: [168, 84, 336, 196] }) });
  // zoom_in 2× into its [0, 0, 84, 56] → [392, 308, 476, 364], 84×56 shown at 168×112: 21.9 px.
  await episode.step({ text: call('zoom_in', { bbox: [0, 0, 84, 56], factor: 2 }) });
  // A crop of the zoomed image (no original pixels behind it): its [0, 0, 56, 56] is [392, 308, 420, 336], cutting
  // the target: 20 × 16 = 320 px² shared, union 28 × 28 + 1681 − 320 = 2145.
  await episode.step({ text: call('crop', { bbox: [0, 0, 56, 56] }) });
  await episode.step({ text: '<answer>X7</answer>' });
  const calls = episode.trajectory().turns.flatMap((t) => (t.role === 'assistant' ? t.calls : []));
  assert.deepEqual(calls.map((c) => [c.name, c.ok, c.target, c.target_iou]), [
    ['crop', true, 'partly', 1681 / (672 * 476)],
    ['crop', true, 'on', 1681 / (168 * 112)],
    ['zoom_in', true, 'on', 1681 / (84 * 56)],
    ['crop', true, 'partly', 320 / 2145],
  ]);
  assert.deepEqual(episode.scan(), []);
});

test('search: a crop beside the target is off, with IoU 0; on background it is a degenerate edit too', async () => {
  const episode = await searchEpisode();
  await episode.step({ text: call('image_zoom_in_tool', { bbox_2d: [0, 0, 112, 112], label: 'the red square' }) });
  await episode.step({ text: '<answer>X7</answer>' });
  const [first] = episode.trajectory().turns.flatMap((t) => (t.role === 'assistant' ? t.calls : []));
  assert.deepEqual([first?.target, first?.target_iou], ['off', 0]);
  // The scene's one object lies at [400, 320, 441, 361]: [0, 0, 112, 112] of the task image shows background only.
  assert.deepEqual(episode.scan(), ['off_target_call', 'degenerate_edit']);
});

/**
 * A V* relative_position record converted by the real loader (loadVStar, written and read back as
 * `data convert` does), on a 224×168 image (shown as is under the default bounds: both sides are
 * multiples of 28). bbox [[20, 40, 30, 90], [100, 50, 100, 70]] → the ladder at [20, 40, 50, 130],
 * the wagon at [100, 50, 200, 120]; their union box [20, 40, 200, 130] is 180 × 90 = 16200 px².
 */
async function vstarEpisode(t: { after: (fn: () => Promise<void>) => void }) {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-vstar-targets-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const folder = join(dir, 'vstar_bench', 'relative_position');
  await mkdir(folder, { recursive: true });
  await sharp({ create: { width: 224, height: 168, channels: 3, background: '#888' } }).jpeg().toFile(join(folder, 'sa_1.jpg'));
  const annotation = { target_object: ['steel ladder', 'wagon'], bbox: [[20, 40, 30, 90], [100, 50, 100, 70]], question: 'Is the steel ladder on the left or right side of the wagon?', options: ['The steel ladder is on the left side of the wagon.', 'The steel ladder is on the right side of the wagon.'] };
  await writeFile(join(folder, 'sa_1.json'), JSON.stringify(annotation));
  await writeConverted(join(dir, 'out'), await loadVStar(join(dir, 'vstar_bench')));
  const [task] = await loadTasks(join(dir, 'out', 'tasks.jsonl'));
  if (task === undefined) return assert.fail('the loader wrote no record');
  const image = { width: 224, height: 168, data: Buffer.alloc(224 * 168 * 3, 128) };
  const store = new ImageStore(join(dir, 'store'));
  return (await Episode.start(task, image, resolveMetadata(task.meta, 224, 168), store)).episode;
}

test('V*: a zoom and a nested crop are judged by containment of both targets where they lie in the task image', async (t) => {
  const episode = await vstarEpisode(t);
  // [10, 30, 210, 140] holds both: on, IoU 16200 / (200 × 110). The output is 400×220.
  await episode.step({ text: call('zoom_in', { bbox: [10, 30, 210, 140], factor: 2 }) });
  // Shown at 392×224, its [0, 0, 98, 224] is [0, 0, 100, 220] of the zoom → [10, 30, 60, 140] of the task image:
  // the ladder whole, none of the wagon. Shares [20, 40, 60, 130] = 3600 with the union box; 5500 + 16200 − 3600.
  await episode.step({ text: call('crop', { bbox: [0, 0, 98, 224] }) });
  await episode.step({ text: '<answer>A</answer>' });
  const calls = episode.trajectory().turns.flatMap((turn) => (turn.role === 'assistant' ? turn.calls : []));
  assert.deepEqual(calls.map((c) => [c.name, c.ok, c.target, c.target_iou]), [
    ['zoom_in', true, 'on', 16200 / 22000],
    ['crop', true, 'partly', 3600 / 18100],
  ]);
  assert.deepEqual(episode.scan(), []);
});

test('V*: a crop between the two targets is off and the off-target scanner fires', async (t) => {
  const episode = await vstarEpisode(t);
  // [56, 0, 98, 168]: right of the ladder (ends before 50), left of the wagon (starts at 100). IoU with the
  // union box: [56, 40, 98, 130] = 42 × 90 = 3780 shared, 42 × 168 + 16200 − 3780.
  await episode.step({ text: call('image_zoom_in_tool', { bbox_2d: [56, 0, 98, 168], label: 'the ladder' }) });
  await episode.step({ text: '<answer>A</answer>' });
  const [first] = episode.trajectory().turns.flatMap((turn) => (turn.role === 'assistant' ? turn.calls : []));
  assert.deepEqual([first?.target, first?.target_iou], ['off', 3780 / (42 * 168 + 16200 - 3780)]);
  assert.deepEqual(episode.scan(), ['off_target_call']);
});
