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
