import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Episode } from '../../env/episodes/episode.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
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

test('search: a crop beside the target is off, with IoU 0, and the off-target scanner fires', async () => {
  const episode = await searchEpisode();
  await episode.step({ text: call('image_zoom_in_tool', { bbox_2d: [0, 0, 112, 112], label: 'the red square' }) });
  await episode.step({ text: '<answer>X7</answer>' });
  const [first] = episode.trajectory().turns.flatMap((t) => (t.role === 'assistant' ? t.calls : []));
  assert.deepEqual([first?.target, first?.target_iou], ['off', 0]);
  assert.deepEqual(episode.scan(), ['off_target_call']);
});
