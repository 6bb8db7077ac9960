/**
 * The counterfactual replay's engine option (`withholdResults`): calls run exactly as usual, the
 * observation's text is the normal run's, and its image is the unedited one the calls read.
 * Expected values come from a normal episode played alongside and from the PNG bytes on disk.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Episode, type EpisodeOptions } from '../../env/episodes/episode.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import type { ChatMessage } from '../../env/episodes/messages.js';
import { contentHash } from '../../env/core/image.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { tableFixture } from '../fixtures/render.js';

async function tableEpisode(options: EpisodeOptions) {
  const fixture = await tableFixture();
  const task: TaskRecord = { id: 'fixture-table', image: 'table.png', question: 'How many wins does Merckx have?', answer: '34', kind: 'table', difficulty: 1, meta: fixture.meta, source: 'test' };
  const store = new ImageStore(await mkdtemp(join(tmpdir(), 'vistool-withhold-')));
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  return Episode.start(task, fixture.image, meta, store, options);
}

const maskCall = '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Rider", "Wins"]}}</tool_call>';
const rowCall = '<tool_call>{"name": "focus_on_rows_with_draw", "arguments": {"rows": ["Merckx"]}}</tool_call>';
const badCall = '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Nope"]}}</tool_call>';

const texts = (message: ChatMessage | undefined) => (message?.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : []));
const imageOf = (message: ChatMessage | undefined) => {
  const part = message?.content.find((p) => p.type === 'image');
  assert.ok(part && part.type === 'image' && part.path, 'the observation carries an image');
  return part;
};

test('a withheld result shows the unedited input image, with the text a normal run shows', async () => {
  const normal = await tableEpisode({});
  const withheld = await tableEpisode({ withholdResults: true });
  const taskImage = withheld.observation.messages.flatMap((m) => m.content).find((p) => p.type === 'image');
  assert.ok(taskImage && taskImage.type === 'image' && taskImage.path);

  const real = await normal.episode.step({ text: maskCall });
  const replay = await withheld.episode.step({ text: maskCall });
  assert.deepEqual(texts(replay.observation.messages[0]), texts(real.observation.messages[0]));
  assert.equal(replay.observation.messages[0]?.role, real.observation.messages[0]?.role);

  const shown = imageOf(replay.observation.messages[0]);
  // The bytes the observation points at hash to the task image's ref: the unedited input.
  assert.equal(contentHash(await readFile(shown.path!)), taskImage.ref);
  assert.equal(shown.ref, taskImage.ref);
  assert.notEqual(imageOf(real.observation.messages[0]).ref, taskImage.ref, 'the normal run shows the edit');

  // The call ran as usual: counted, recorded with the image it made.
  assert.equal(replay.info.tool_calls, 1);
  const [call] = replay.info.calls;
  assert.equal(call?.ok, true);
  assert.equal(call?.image_in, taskImage.ref);
  assert.equal(call?.image_out, real.info.calls[0]?.image_out);
});

test('a later call reads the unedited image too, and errors are the same as a normal run', async () => {
  const normal = await tableEpisode({});
  const withheld = await tableEpisode({ withholdResults: true });
  for (const episode of [normal.episode, withheld.episode]) await episode.step({ text: maskCall });
  const real = await normal.episode.step({ text: rowCall });
  const replay = await withheld.episode.step({ text: rowCall });
  assert.deepEqual(texts(replay.observation.messages[0]), texts(real.observation.messages[0]));
  const first = withheld.episode.trajectory().turns[0];
  assert.ok(first?.role === 'assistant');
  // The second call read the task image (what the policy saw), not the first call's output.
  assert.equal(replay.info.calls[0]?.image_in, first.calls[0]?.image_in);
  assert.equal(imageOf(replay.observation.messages[0]).ref, first.calls[0]?.image_in);

  const realError = await normal.episode.step({ text: badCall });
  const replayError = await withheld.episode.step({ text: badCall });
  assert.deepEqual(replayError.info.errors, realError.info.errors);
  assert.deepEqual(texts(replayError.observation.messages[0]), texts(realError.observation.messages[0]));

  const done = await withheld.episode.step({ text: '<answer>34</answer>' });
  assert.equal(done.done, true);
  assert.equal(withheld.episode.trajectory().answer, '34');
});
