/**
 * An episode returns the images its tools made to the pixel pool (env/core/pixel-pool.ts) and
 * nothing else: an image is handed back only once nothing will read it again, so another
 * episode reusing the memory can never change what this one sees or stores.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeImage, type RgbImage } from '../../env/core/image.js';
import { drainPixelPool, pooledPixelBytes, sizeClass } from '../../env/core/pixel-pool.js';
import { Episode } from '../../env/episodes/episode.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import { resolveMetadata, type PixelMetadata } from '../../env/tools/metadata.js';
import { runToolCall } from '../../env/tools/registry.js';
import type { ToolCall } from '../../env/tools/types.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { tableFixture } from '../fixtures/render.js';

const MASK: ToolCall = { name: 'focus_on_columns_with_mask', arguments: { columns: ['Rider', 'Wins'] } };
const DRAW: ToolCall = { name: 'focus_on_rows_with_draw', arguments: { rows: ['Merckx'] } };
const HIGHLIGHT: ToolCall = { name: 'focus_on_columns_with_highlight', arguments: { columns: ['Team'] } };
const hermes = (...calls: ToolCall[]) => calls.map((call) => `<tool_call>${JSON.stringify(call)}</tool_call>`).join(' ');

async function start() {
  const fixture = await tableFixture();
  const task: TaskRecord = { id: 'pixels', image: 'table.png', question: 'How many wins does Merckx have?', answer: '34', kind: 'table', difficulty: 1, meta: fixture.meta, source: 'test' };
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  const store = new ImageStore(await mkdtemp(join(tmpdir(), 'vistool-episode-pixels-')));
  const { episode } = await Episode.start(task, fixture.image, meta, store);
  return { episode, fixture, meta, store };
}

/** The pixels a chain of calls gives, each result copied out at once, before any episode has run (so before any reuse). */
async function expectedChain(image: RgbImage, meta: PixelMetadata, calls: ToolCall[]): Promise<Buffer[]> {
  const results: Buffer[] = [];
  for (const call of calls) {
    const outcome = await runToolCall(image, call, meta);
    assert.ok(outcome.ok);
    results.push(Buffer.from(outcome.image.data));
    image = outcome.image;
  }
  return results;
}

/** The pixels the store wrote for a call's result. */
async function storedPixels(store: ImageStore, ref: string | undefined): Promise<Buffer> {
  assert.ok(ref);
  return (await decodeImage(store.pathOf(ref))).data;
}

test('an episode hands back the images its tools made once they are replaced or the episode ends, never the task image', async () => {
  const { episode, fixture, meta, store } = await start();
  const taskPixels = Buffer.from(fixture.image.data);
  const [masked, drawn, highlighted] = await expectedChain(fixture.image, meta, [MASK, DRAW, HIGHLIGHT]);
  const one = sizeClass(fixture.image.data.length);
  // The PNG writer's scanline buffer (a filter byte per row more than the pixels) is pool memory too, back after each encode.
  const scratch = sizeClass(fixture.image.data.length + fixture.image.height);
  drainPixelPool();

  const chain = await episode.step({ text: hermes(MASK, DRAW) });
  assert.deepEqual(chain.info.calls.map((c) => c.ok), [true, true]);
  assert.equal(pooledPixelBytes(), one + scratch, "the mask's result, read by the draw call, went back");
  const next = await episode.step({ call: HIGHLIGHT });
  assert.equal(next.info.calls[0]?.ok, true);
  assert.equal(pooledPixelBytes(), one + scratch, 'the highlight reused it, and the replaced image went back');
  const answered = await episode.step({ text: '<answer>34</answer>' });
  assert.equal(answered.done, true);
  assert.equal(pooledPixelBytes(), 2 * one + scratch, 'the last image went back when the episode ended');

  assert.ok(fixture.image.data.equals(taskPixels), 'the task image was never handed out');
  assert.ok((await storedPixels(store, chain.info.calls[0]?.image_out)).equals(masked!));
  assert.ok((await storedPixels(store, chain.info.calls[1]?.image_out)).equals(drawn!));
  assert.ok((await storedPixels(store, next.info.calls[0]?.image_out)).equals(highlighted!));
});

test("an image an episode still shows is not reused by another episode's calls", async () => {
  const first = await start();
  const [, drawnOnMasked] = await expectedChain(first.fixture.image, first.meta, [MASK, DRAW]);
  drainPixelPool();
  await first.episode.step({ call: MASK });
  // Another episode churns through the pool: every step releases the image it replaced.
  const second = await start();
  for (const call of [DRAW, HIGHLIGHT, MASK, DRAW, HIGHLIGHT]) assert.equal((await second.episode.step({ call })).info.calls[0]?.ok, true);
  assert.ok(pooledPixelBytes() > 0, 'the pool was in use');
  const drawn = await first.episode.step({ call: DRAW });
  assert.ok((await storedPixels(first.store, drawn.info.calls[0]?.image_out)).equals(drawnOnMasked!), 'drawn on the untouched masked image');
});

test('a close that arrives during a step leaves the pixels to that step, which hands them back when it ends', async () => {
  const { episode } = await start();
  await episode.step({ call: MASK });
  drainPixelPool();
  const stepping = episode.step({ call: DRAW });
  episode.close('closed'); // as the server's DELETE or expiry may, without waiting for the step
  assert.equal(pooledPixelBytes(), 0, 'nothing handed back while the step may still read it');
  const result = await stepping;
  assert.equal(result.info.calls[0]?.ok, true);
  assert.equal(result.done, true);
  assert.ok(pooledPixelBytes() > 0, 'handed back once the step ended');
});
