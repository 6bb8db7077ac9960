import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Episode } from '../../env/episodes/episode.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import { contentHash, decodeImage } from '../../env/core/image.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { tableFixture, verticalBarsFixture, pixelAt } from '../fixtures/render.js';

async function tableEpisode(options: Parameters<typeof Episode.start>[4] = {}) {
  const fixture = await tableFixture();
  const task: TaskRecord = {
    id: 'fixture-table',
    image: 'table.png',
    question: 'How many wins does Merckx have?',
    answer: '34',
    kind: 'table',
    difficulty: 1,
    meta: fixture.meta,
    source: 'test',
  };
  const store = new ImageStore(await mkdtemp(join(tmpdir(), 'vistool-episode-')));
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  const started = await Episode.start(task, fixture.image, meta, store, options);
  return { ...started, fixture, store };
}

const maskCall = '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Rider", "Wins"]}}</tool_call>';

test('reset gives a system prompt listing the usable tools, then the image and the question', async () => {
  const { observation, episode } = await tableEpisode();
  const [system, user] = observation.messages;
  assert.equal(system?.role, 'system');
  const systemText = system?.content[0]?.type === 'text' ? system.content[0].text : '';
  assert.match(systemText, /focus_on_columns_with_mask/);
  assert.match(systemText, /focus_on_rows_with_draw/);
  // A table has no tick-label bands: the chart tools are not offered.
  assert.doesNotMatch(systemText, /focus_on_x_values/);
  assert.equal(user?.role, 'user');
  const image = user?.content[0];
  assert.ok(image && image.type === 'image');
  assert.equal(contentHash(await readFile(image.path!)), image.ref);
  assert.ok(episode.tools().length >= 6);
});

test('a tool call returns the edited image as a tool turn and records the trajectory by hash', async () => {
  const { episode, fixture } = await tableEpisode();
  const result = await episode.step({ text: `I only need two columns. ${maskCall}` });
  assert.equal(result.done, false);
  const reply = result.observation.messages[0];
  assert.equal(reply?.role, 'tool');
  assert.equal(reply?.name, 'focus_on_columns_with_mask');
  const image = reply?.content.find((p) => p.type === 'image');
  assert.ok(image && image.type === 'image' && image.path);
  const edited = await decodeImage(image.path);
  const country = fixture.meta.columns_bbox!['Country']!;
  const cx = Math.round((country.x1 + country.x2) / 2);
  const cy = Math.round((country.y1 + country.y2) / 2);
  assert.deepEqual(pixelAt(edited, cx, cy), [255, 255, 255]);
  const trajectory = episode.trajectory();
  const turn = trajectory.turns[0];
  assert.ok(turn && turn.role === 'assistant');
  assert.equal(turn.calls[0]?.ok, true);
  assert.equal(turn.calls[0]?.image_in, trajectory.task.image);
  assert.equal(turn.calls[0]?.image_out, image.ref);
  assert.deepEqual(trajectory.turns[1], { role: 'tool', text: (reply?.content[0] as { text: string }).text, images: [image.ref] });
});

test('calls compose: a second tool works on the first one\'s result', async () => {
  const { episode } = await tableEpisode();
  const first = await episode.step({ text: maskCall });
  const second = await episode.step({ call: { name: 'focus_on_rows_with_draw', arguments: { rows: ['Merckx'] } } });
  const firstRef = first.info.calls[0]?.image_out;
  assert.equal(second.info.calls[0]?.image_in, firstRef);
  assert.notEqual(second.info.calls[0]?.image_out, firstRef);
  assert.equal(episode.trajectory().tool_calls, 2);
});

test('ReFocus code may use an image variable assigned in an earlier turn', async () => {
  const { episode } = await tableEpisode();
  const first = await episode.step({ text: '```python\nimage_with_focus = focus_on_columns_with_mask(image_1, ["Rider", "Wins"], columns_bbox)\n```' });
  assert.equal(first.info.calls[0]?.ok, true, JSON.stringify(first.info.errors));
  const second = await episode.step({ text: '```python\nboxed = focus_on_rows_with_draw(image_with_focus, ["Merckx"], rows_bbox)\n```' });
  assert.deepEqual(second.info.errors, []);
  assert.equal(second.info.calls[0]?.name, 'focus_on_rows_with_draw');
  assert.equal(second.info.calls[0]?.image_in, first.info.calls[0]?.image_out);
});

test('an answer ends the episode; stepping again is refused', async () => {
  const { episode } = await tableEpisode();
  const result = await episode.step({ text: 'Merckx: <answer>34</answer>' });
  assert.equal(result.done, true);
  assert.equal(result.info.end_reason, 'answer');
  assert.equal(episode.trajectory().answer, '34');
  await assert.rejects(episode.step({ text: '<answer>1</answer>' }), /is over/);
});

test('a message with neither a call nor an answer gets an E1 observation', async () => {
  const { episode } = await tableEpisode();
  const result = await episode.step({ text: 'Let me think about it.' });
  assert.equal(result.done, false);
  assert.equal(result.info.errors[0]?.class, 'E1');
  const text = result.observation.messages[0]?.content[0];
  assert.ok(text?.type === 'text' && text.text.startsWith('ERROR [E1]'));
});

test('max turns ends the episode without an answer', async () => {
  const { episode } = await tableEpisode({ limits: { maxTurns: 2 } });
  assert.equal((await episode.step({ text: 'hmm' })).done, false);
  const last = await episode.step({ text: 'hmm' });
  assert.equal(last.done, true);
  assert.equal(last.info.end_reason, 'max_turns');
  assert.equal(episode.trajectory().answer, null);
});

test('the tool-call limit refuses further calls with E5 and says to answer', async () => {
  const { episode } = await tableEpisode({ limits: { maxToolCalls: 1 } });
  await episode.step({ text: maskCall });
  const refused = await episode.step({ text: maskCall });
  assert.equal(refused.info.calls[0]?.ok, false);
  assert.equal(refused.info.errors[0]?.class, 'E5');
  assert.match(refused.info.errors[0]?.message ?? '', /answer now/);
  assert.equal(episode.trajectory().tool_calls, 1);
  assert.equal(episode.trajectory().tool_errors, 1);
});

test('the image limit counts the task image', async () => {
  const { episode } = await tableEpisode({ limits: { maxImages: 2 } });
  assert.equal((await episode.step({ text: maskCall })).info.calls[0]?.ok, true);
  const refused = await episode.step({ text: maskCall });
  assert.equal(refused.info.errors[0]?.class, 'E5');
  assert.match(refused.info.errors[0]?.message ?? '', /image limit/);
});

test('an image over the pixel limit is refused at reset, and a zoom that would exceed it fails with E5', async () => {
  await assert.rejects(tableEpisode({ limits: { maxPixels: 1000 } }), /over the limit/);
  const fixture = await tableFixture();
  const { episode } = await tableEpisode({ limits: { maxPixels: fixture.image.width * fixture.image.height + 10 } });
  const zoom = await episode.step({ call: { name: 'zoom_in', arguments: { bbox: [0, 0, fixture.image.width, fixture.image.height], factor: 4 } } });
  assert.equal(zoom.info.calls[0]?.ok, false);
  assert.equal(zoom.info.errors[0]?.class, 'E5');
});

test('band tools after a zoom use the boxes moved into the crop', async () => {
  const { episode, fixture } = await tableEpisode();
  const wins = fixture.meta.columns_bbox!['Wins']!;
  // Crop to the left half of the table, then zoom ×2: Wins lies outside, Rider inside.
  const zoom = await episode.step({ call: { name: 'zoom_in', arguments: { bbox: [0, 0, wins.x1, fixture.image.height], factor: 2 } } });
  assert.equal(zoom.info.calls[0]?.ok, true);
  const rider = await episode.step({ call: { name: 'focus_on_columns_with_draw', arguments: { columns: ['Rider'] } } });
  assert.equal(rider.info.calls[0]?.ok, true, JSON.stringify(rider.info.errors));
  const image = rider.observation.messages[0]?.content.find((p) => p.type === 'image');
  assert.ok(image && image.type === 'image' && image.path);
  const edited = await decodeImage(image.path);
  // The Rider band starts at x = 20 in the original: at ×2 in the crop its outline starts at 40 + 2·inset.
  const riderBox = fixture.meta.columns_bbox!['Rider']!;
  const y = Math.round((riderBox.y1 + riderBox.y2)); // middle of the band, ×2
  const outlineX = 2 * riderBox.x1 + 2;
  assert.deepEqual(pixelAt(edited, outlineX, y), [255, 0, 0]);
});

test('the text-only arm lists no tools and refuses calls', async () => {
  const { episode, observation } = await tableEpisode({ tools: false });
  assert.deepEqual(episode.tools(), []);
  const system = observation.messages[0]?.content[0];
  assert.ok(system?.type === 'text' && !system.text.includes('focus_on'));
  const refused = await episode.step({ text: maskCall });
  assert.equal(refused.info.errors[0]?.class, 'E1');
  assert.equal(episode.trajectory().tool_calls, 0);
});

test('inline images carry the PNG bytes', async () => {
  const { observation } = await tableEpisode({ inlineImages: true });
  const image = observation.messages[1]?.content[0];
  assert.ok(image?.type === 'image' && image.data);
  assert.equal(contentHash(Buffer.from(image.data, 'base64')), image.ref);
});

test('episodes on a bar chart offer the x-value tools', async () => {
  const fixture = await verticalBarsFixture();
  const store = new ImageStore(await mkdtemp(join(tmpdir(), 'vistool-episode-')));
  const task: TaskRecord = { id: 'bars', image: 'bars.png', question: 'Which year is highest?', answer: '2020', kind: 'vbar', difficulty: 1, meta: fixture.meta, source: 'test' };
  const { episode } = await Episode.start(task, fixture.image, resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height), store);
  const result = await episode.step({ text: '<tool_call>{"name": "focus_on_x_values_with_highlight", "arguments": {"x_values": ["2020"]}}</tool_call>' });
  assert.equal(result.info.calls[0]?.ok, true);
});
