/**
 * crop: a box in the coordinates of the image the policy was shown (Qwen2.5-VL's smart_resize
 * under the episode's max_pixels), cut from the full-resolution original, nested crops mapped back
 * through the chain. Every expected rectangle below is computed by hand in the comments, and every
 * expected pixel comes from a formula of the synthetic image, not from the tool's code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeImage, type RgbImage } from '../../env/core/image.js';
import { Episode } from '../../env/episodes/episode.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import type { PixelMetadata } from '../../env/tools/metadata.js';
import { runToolCall, toolNamesForTask, listTools } from '../../env/tools/registry.js';
import type { ToolContext, ToolOutcome } from '../../env/tools/types.js';
import { cropTool } from '../../env/tools/crop.js';

const W = 2048;
const H = 1536;
/** 1280 image tokens of 28×28. */
const BOUNDS = { minPixels: 3136, maxPixels: 1_003_520 };

/** Every pixel unique and known: (x mod 256, y mod 256, ⌊x/256⌋ + 16·⌊y/256⌋). */
function nativeValue(x: number, y: number): [number, number, number] {
  return [x & 255, y & 255, (x >> 8) + 16 * (y >> 8)];
}

function synthetic(width: number, height: number): RgbImage {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data.set(nativeValue(x, y), (y * width + x) * 3);
  }
  return { width, height, data };
}

const NATIVE = synthetic(W, H);
const META: PixelMetadata = { unit: 'pixels' };
const CONTEXT: ToolContext = { original: { ref: 'task-image', image: NATIVE, meta: META }, bounds: BOUNDS };

async function crop(image: RgbImage, meta: PixelMetadata, bbox: unknown, context: ToolContext | null = CONTEXT): Promise<ToolOutcome> {
  return await runToolCall(image, { name: 'crop', arguments: { bbox } }, meta, context ?? undefined);
}

/** Asserts `image` is exactly the native rectangle [left, top, right, bottom), pixel for pixel. */
function assertNativeRect(image: RgbImage, [left, top, right, bottom]: [number, number, number, number]): void {
  assert.deepEqual([image.width, image.height], [right - left, bottom - top]);
  let differing = 0;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const i = (y * image.width + x) * 3;
      const want = nativeValue(left + x, top + y);
      if (image.data[i] !== want[0] || image.data[i + 1] !== want[1] || image.data[i + 2] !== want[2]) differing += 1;
    }
  }
  assert.equal(differing, 0, `${differing} pixels differ from the native rectangle`);
}

function viewOf(outcome: ToolOutcome): unknown {
  assert.ok(outcome.ok, JSON.stringify(outcome.ok ? null : outcome.error));
  return outcome.meta?.crop_view;
}

// 2048×1536 under max_pixels 1,003,520: rounding each side to 28 gives 2044×1540 = 3,147,760 px,
// over the budget, so β = √(2048·1536 / 1,003,520) = 1.7705…; width ⌊2048/β/28⌋·28 = ⌊41.31⌋·28 =
// 1148, height ⌊1536/β/28⌋·28 = ⌊30.98⌋·28 = 840. The policy sees 1148×840.

test('crop maps a box on the shown 1148×840 image to the native 2048×1536 one and returns those pixels at native resolution', async () => {
  // x·2048/1148 and y·1536/840: 287 → 512, 210 → 384, 574 → 1024, 420 → 768.
  const outcome = await crop(NATIVE, META, [287, 210, 574, 420]);
  assert.deepEqual(viewOf(outcome), { source: 'task-image', left: 512, top: 384, right: 1024, bottom: 768 });
  assert.ok(outcome.ok);
  assertNativeRect(outcome.image, [512, 384, 1024, 768]);
  assert.match(outcome.summary, /cropped \[512, 384, 1024, 768\] of the 2048×1536 original: the new image is 512×384, at full resolution/);
});

test('crop rounds the mapped box outwards: [100, 100, 201, 150] shown is [178, 182, 359, 275] native', async () => {
  // 100·2048/1148 = 178.40 → 178; 100·1536/840 = 182.86 → 182; 201·2048/1148 = 358.58 → 359; 150·1536/840 = 274.29 → 275.
  const outcome = await crop(NATIVE, META, [100, 100, 201, 150]);
  assert.deepEqual(viewOf(outcome), { source: 'task-image', left: 178, top: 182, right: 359, bottom: 275 });
  assert.ok(outcome.ok);
  assertNativeRect(outcome.image, [178, 182, 359, 275]);
});

test('a box partly outside the shown image is clipped to it: [1000, 700, 2000, 2000] is [1783, 1280, 2048, 1536]', async () => {
  // Clipped to [1000, 700, 1148, 840]; 1000·2048/1148 = 1783.97 → 1783, 700·1536/840 = 1280.
  const outcome = await crop(NATIVE, META, [1000, 700, 2000, 2000]);
  assert.deepEqual(viewOf(outcome), { source: 'task-image', left: 1783, top: 1280, right: 2048, bottom: 1536 });
  assert.ok(outcome.ok);
  assertNativeRect(outcome.image, [1783, 1280, 2048, 1536]);
});

test('nested crops map each box through the previous crop as shown, back to the original, and cut the original pixels', async () => {
  const first = await crop(NATIVE, META, [287, 210, 574, 420]); // native [512, 384, 1024, 768], 512×384
  assert.ok(first.ok && first.meta);
  // 512×384 is shown at 504×392 (18·28 × 14·28; 197,568 px, within the bounds).
  // [126, 98, 252, 196]: 512 + 126·512/504 = 640, 384 + 98·384/392 = 480, 512 + 252·512/504 = 768, 384 + 196·384/392 = 576.
  const second = await crop(first.image, first.meta, [126, 98, 252, 196]);
  assert.deepEqual(viewOf(second), { source: 'task-image', left: 640, top: 480, right: 768, bottom: 576 });
  assert.ok(second.ok && second.meta);
  assertNativeRect(second.image, [640, 480, 768, 576]);
  // 128×96 is shown at 140×84 (round(4.57)·28 × round(3.43)·28; 11,760 px ≥ min_pixels).
  // [35, 21, 105, 63]: 640 + 35·128/140 = 672, 480 + 21·96/84 = 504, 640 + 105·128/140 = 736, 480 + 63·96/84 = 552.
  const third = await crop(second.image, second.meta, [35, 21, 105, 63]);
  assert.deepEqual(viewOf(third), { source: 'task-image', left: 672, top: 504, right: 736, bottom: 552 });
  assert.ok(third.ok);
  assertNativeRect(third.image, [672, 504, 736, 552]);
});

test('a nested box under 28 native pixels is grown to 28 around its centre, inside the original', async () => {
  const first = await crop(NATIVE, META, [287, 210, 574, 420]);
  assert.ok(first.ok && first.meta);
  // On 504×392 shown: [10, 10, 40, 30] → x 512 + 10·512/504 = 522.16 → 522, 512 + 40·512/504 = 552.63 → 553;
  // y 384 + 10·384/392 = 393.80 → 393, 384 + 30·384/392 = 413.39 → 414: 21 px high, so grown to
  // 28 from round((393 + 414)/2 − 14) = round(389.5) = 390.
  const second = await crop(first.image, first.meta, [10, 10, 40, 30]);
  assert.deepEqual(viewOf(second), { source: 'task-image', left: 522, top: 390, right: 553, bottom: 418 });
  assert.ok(second.ok);
  assertNativeRect(second.image, [522, 390, 553, 418]);
  assert.match(second.summary, /grown to the 28 px minimum/);
});

test('a crop over max_pixels comes back at its shown size, and a crop of it is cut from the original, not from the downscale', async () => {
  const whole = await crop(NATIVE, META, [0, 0, 1148, 840]); // native 2048×1536 = 3,145,728 px > 1,003,520
  assert.deepEqual(viewOf(whole), { source: 'task-image', left: 0, top: 0, right: 2048, bottom: 1536 });
  assert.ok(whole.ok && whole.meta);
  assert.deepEqual([whole.image.width, whole.image.height], [1148, 840]);
  assert.match(whole.summary, /downscaled from 2048×1536 to fit 1003520 pixels/);
  // 1148×840 is shown as it is (41·28 × 30·28), so the first test's box maps to the same native rectangle.
  const inner = await crop(whole.image, whole.meta, [287, 210, 574, 420]);
  assert.deepEqual(viewOf(inner), { source: 'task-image', left: 512, top: 384, right: 1024, bottom: 768 });
  assert.ok(inner.ok);
  assertNativeRect(inner.image, [512, 384, 1024, 768]);
});

test("DeepEyes' image_zoom_in_tool with bbox_2d and a label gives the same image and chain as crop", async () => {
  const direct = await crop(NATIVE, META, [100, 100, 201, 150]);
  const alias = await runToolCall(NATIVE, { name: 'image_zoom_in_tool', arguments: { bbox_2d: [100, 100, 201, 150], label: 'the sign' } }, META, CONTEXT);
  assert.ok(direct.ok && alias.ok);
  assert.ok(alias.image.data.equals(direct.image.data));
  assert.deepEqual([alias.image.width, alias.image.height], [direct.image.width, direct.image.height]);
  assert.deepEqual(alias.meta, direct.meta);
  assert.match(alias.summary, /cropped \("the sign"\) \[178, 182, 359, 275\]/);
  const bare = await runToolCall(NATIVE, { name: 'image_zoom_in_tool', arguments: { bbox_2d: [100, 100, 201, 150] } }, META, CONTEXT);
  assert.ok(bare.ok && bare.image.data.equals(direct.image.data));
});

test('crop errors: degenerate, outside the shown image, non-finite, too thin, and a chain to an image the episode does not hold', async () => {
  const cases: Array<[string, Promise<ToolOutcome>, string, RegExp]> = [
    ['zero width', crop(NATIVE, META, [300, 100, 300, 200]), 'E4', /^bbox must be \[x1, y1, x2, y2\] with x1 < x2 and y1 < y2 .*got \[300, 100, 300, 200\]$/],
    ['reversed', crop(NATIVE, META, [300, 200, 100, 100]), 'E4', /with x1 < x2 and y1 < y2/],
    ['outside', crop(NATIVE, META, [1200, 0, 1300, 100]), 'E4', /^bbox \[1200, 0, 1300, 100\] lies outside the image you see, which is 1148×840: x runs from 0 to 1148 and y from 0 to 840/],
    ['above', crop(NATIVE, META, [0, -50, 100, 0]), 'E4', /lies outside the image you see, which is 1148×840/],
    ['non-finite', cropTool.apply(NATIVE, { bbox: [0, 0, Infinity, 10] }, META, CONTEXT), 'E4', /^bbox must be four finite numbers \[x1, y1, x2, y2\]; got \[0, 0, Infinity, 10\]$/],
    ['NaN', cropTool.apply(NATIVE, { bbox: [Number.NaN, 0, 10, 10] }, META, CONTEXT), 'E4', /finite numbers/],
    ['unknown source', crop(synthetic(64, 48), { unit: 'pixels', crop_view: { source: 'elsewhere', left: 0, top: 0, right: 64, bottom: 48 } }, [0, 0, 28, 28]), 'E5', /cropped from image elsewhere, which this episode does not hold/],
    ['no original', crop(synthetic(64, 48), { unit: 'pixels', crop_view: { source: 'task-image', left: 0, top: 0, right: 64, bottom: 48 } }, [0, 0, 28, 28], null), 'E5', /cropped from image task-image/],
  ];
  for (const [name, pending, errorClass, message] of cases) {
    const outcome = await pending;
    assert.ok(!outcome.ok, name);
    assert.equal(outcome.error.class, errorClass, name);
    assert.match(outcome.error.message, message, name);
    assert.ok(outcome.error.tool === 'crop', name);
  }
  // A crop 6000 px wide and 28 high is over the processor's 200:1 limit.
  const wide = synthetic(6000, 40);
  const thin = await runToolCall(wide, { name: 'crop', arguments: { bbox: [0, 10, 99999, 11] } }, META, { bounds: BOUNDS });
  assert.ok(!thin.ok);
  assert.equal(thin.error.class, 'E4');
  assert.match(thin.error.message, /too thin: its crop would be 6000×28/);
});

test('crop never throws: odd boxes all resolve to an outcome', async () => {
  const odd = [[-1e12, -1e12, 1e12, 1e12], [0.1, 0.1, 0.2, 0.2], [1147.9, 839.9, 1148, 840], [1148, 840, 1149, 841], [-5, -5, 0.001, 0.001], [0, 0, 1e-300, 1e-300]];
  for (const bbox of odd) {
    const outcome = await crop(NATIVE, META, bbox);
    if (outcome.ok) assert.ok(outcome.image.width >= 1 && outcome.image.height >= 1);
    else assert.equal(outcome.error.class, 'E4', JSON.stringify(bbox));
  }
  const strings = await runToolCall(NATIVE, { name: 'crop', arguments: { bbox: ['a', 0, 1, 1] } }, META, CONTEXT);
  assert.ok(!strings.ok && strings.error.class === 'E3');
});

test('without an episode the current image is its own source and no chain is kept', async () => {
  const small = synthetic(200, 100);
  // Default bounds: 200×100 is shown at 196×112 (round(7.14)·28 × round(3.57)·28).
  // [49, 28, 98, 84]: 49·200/196 = 50, 28·100/112 = 25, 98·200/196 = 100, 84·100/112 = 75.
  const outcome = await runToolCall(small, { name: 'crop', arguments: { bbox: [49, 28, 98, 84] } }, META);
  assert.ok(outcome.ok);
  assert.equal(outcome.meta?.crop_view, undefined);
  assertNativeRect(outcome.image, [50, 25, 100, 75]);
});

test('zoom_in on a crop ends the chain: a crop after it reads the zoomed image', async () => {
  const first = await crop(NATIVE, META, [287, 210, 574, 420]);
  assert.ok(first.ok && first.meta);
  const zoomed = await runToolCall(first.image, { name: 'zoom_in', arguments: { bbox: [0, 0, 256, 192] } }, first.meta, CONTEXT);
  assert.ok(zoomed.ok);
  assert.equal(zoomed.meta?.crop_view, undefined);
  assert.deepEqual([zoomed.image.width, zoomed.image.height], [512, 384]); // same size as the first crop, yet not the original
  const after = await crop(zoomed.image, zoomed.meta!, [0, 0, 504, 392]);
  assert.ok(after.ok);
  assert.equal(after.meta?.crop_view, undefined);
  assert.ok(after.image.data.equals(zoomed.image.data));
});

test('a search task is offered crop; the alias is accepted but not listed', () => {
  assert.deepEqual(toolNamesForTask('search', META), ['crop']);
  assert.ok(listTools().some((tool) => tool.name === 'crop'));
  assert.ok(!listTools().some((tool) => tool.name === 'image_zoom_in_tool'));
  assert.ok(!toolNamesForTask('chart', META).includes('crop'));
});

test('in an episode, nested crops under the policy bounds come back as the native rectangles, through the stored PNGs', async () => {
  const task = { id: 'search-synthetic', image: 'synthetic.png', question: 'What is in the middle?', answer: 'x', kind: 'search', difficulty: 1, meta: {}, source: 'test' } as unknown as TaskRecord;
  const store = new ImageStore(await mkdtemp(join(tmpdir(), 'vistool-crop-')));
  const { episode } = await Episode.start(task, NATIVE, { unit: 'pixels' }, store, { pixelBounds: BOUNDS });
  assert.deepEqual(episode.offeredToolNames(), ['crop']);
  const shownImage = async (bbox: number[], name = 'crop'): Promise<RgbImage> => {
    const args = name === 'crop' ? { bbox } : { bbox_2d: bbox };
    const step = await episode.step({ call: { name, arguments: args } });
    assert.deepEqual(step.info.errors, []);
    const part = step.observation.messages.at(-1)?.content.find((p) => p.type === 'image');
    assert.ok(part && part.type === 'image' && part.path);
    return await decodeImage(part.path);
  };
  assertNativeRect(await shownImage([287, 210, 574, 420]), [512, 384, 1024, 768]);
  assertNativeRect(await shownImage([126, 98, 252, 196], 'image_zoom_in_tool'), [640, 480, 768, 576]);
  assertNativeRect(await shownImage([35, 21, 105, 63]), [672, 504, 736, 552]);
  // The 64×48 crop is shown at 56×56 (round(2.29)·28 × round(1.71)·28 = 3,136 px, just min_pixels).
  const outside = await episode.step({ call: { name: 'crop', arguments: { bbox: [57, 0, 80, 50] } } });
  assert.equal(outside.info.errors[0]?.class, 'E4');
  assert.match(outside.info.errors[0]?.message ?? '', /lies outside the image you see, which is 56×56/);
});
