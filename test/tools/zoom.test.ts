import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { contentHash, decodeImage, type RgbImage } from '../../env/core/image.js';
import { resolveMetadata, type PixelMetadata } from '../../env/tools/metadata.js';
import { runToolCall } from '../../env/tools/registry.js';
import { cropImage, resizeCubic } from '../../env/tools/resize.js';
import { planZoom, ZOOM_MAX_SIDE } from '../../env/tools/zoom.js';
import { tableFixture } from '../fixtures/render.js';
import { pixelOf } from './pixels.js';

async function table(): Promise<{ image: RgbImage; meta: PixelMetadata }> {
  const f = await tableFixture();
  return { image: f.image, meta: resolveMetadata(f.meta, f.image.width, f.image.height) };
}

async function zoom(image: RgbImage, meta: PixelMetadata, args: Record<string, unknown>) {
  return await runToolCall(image, { name: 'zoom_in', arguments: args }, meta);
}

test('zoom_in enlarges the box by the factor: [100,50,200,100] at the default 2× is 200×100', async () => {
  const { image, meta } = await table();
  const outcome = await zoom(image, meta, { bbox: [100, 50, 200, 100] });
  assert.ok(outcome.ok, JSON.stringify(outcome));
  assert.equal(outcome.image.width, 200);
  assert.equal(outcome.image.height, 100);
  assert.match(outcome.summary, /zoomed into \[100, 50, 200, 100\]: the new image is 200×100/);
  const three = await zoom(image, meta, { bbox: [100, 50, 200, 100], factor: 3 });
  assert.ok(three.ok);
  assert.deepEqual([three.image.width, three.image.height], [300, 150]);
});

test('zoom_in at factor 1 returns exactly the cropped pixels', async () => {
  const { image, meta } = await table();
  const outcome = await zoom(image, meta, { bbox: [30, 25, 130, 85], factor: 1 });
  assert.ok(outcome.ok);
  assert.deepEqual([outcome.image.width, outcome.image.height], [100, 60]);
  for (const [x, y] of [[0, 0], [99, 59], [40, 10], [7, 33]] as const) assert.deepEqual(pixelOf(outcome.image, x, y), pixelOf(image, 30 + x, 25 + y));
});

test('fractional boxes are rounded outwards and boxes past the edge are clipped to the image', async () => {
  const { image, meta } = await table();
  const outcome = await zoom(image, meta, { bbox: [399.5, -20, 1000, 60.2], factor: 1 });
  assert.ok(outcome.ok);
  // x 399..460 (image width 460), y 0..61.
  assert.deepEqual([outcome.image.width, outcome.image.height], [image.width - 399, 61]);
  assert.deepEqual(pixelOf(outcome.image, 0, 0), pixelOf(image, 399, 0));
});

test('a box smaller than 28 px is grown to 28 px around its centre, and kept inside the image', async () => {
  const { image, meta } = await table();
  const middle = await zoom(image, meta, { bbox: [100, 100, 110, 104], factor: 1 });
  assert.ok(middle.ok);
  assert.deepEqual([middle.image.width, middle.image.height], [28, 28]);
  // Centre (105, 102) → left = 105 − 14 = 91, top = 102 − 14 = 88.
  assert.deepEqual(pixelOf(middle.image, 0, 0), pixelOf(image, 91, 88));
  assert.deepEqual(pixelOf(middle.image, 27, 27), pixelOf(image, 118, 115));
  assert.match(middle.summary, /grown to the 28 px minimum/);
  const corner = await zoom(image, meta, { bbox: [0, 0, 4, 4], factor: 2 });
  assert.ok(corner.ok);
  assert.deepEqual([corner.image.width, corner.image.height], [56, 56]);
  const plan = planZoom(image.width, image.height, [455, 215, 460, 220], 1);
  assert.deepEqual(plan, { left: 432, top: 192, right: 460, bottom: 220, outWidth: 28, outHeight: 28, grown: true });
});

test('the short side of a zoom reaches 28 × factor even on an image smaller than 28 px', async () => {
  const tiny = await decodeImage(await sharp({ create: { width: 20, height: 10, channels: 3, background: { r: 9, g: 99, b: 199 } } }).png().toBuffer());
  const outcome = await zoom(tiny, resolveMetadata({}, 20, 10), { bbox: [0, 0, 20, 10], factor: 2 });
  assert.ok(outcome.ok);
  // Short side 10 → scale 2 · 28/10 = 5.6: 112 × 56.
  assert.deepEqual([outcome.image.width, outcome.image.height], [112, 56]);
  assert.ok(outcome.image.data.every((v, i) => v === [9, 99, 199][i % 3]), 'a flat colour stays exactly that colour');
});

test('the output long side is capped at 4096 px', async () => {
  const wide = await decodeImage(await sharp({ create: { width: 1100, height: 30, channels: 3, background: { r: 1, g: 2, b: 3 } } }).png().toBuffer());
  const outcome = await zoom(wide, resolveMetadata({}, 1100, 30), { bbox: [0, 0, 1100, 30], factor: 4 });
  assert.ok(outcome.ok);
  assert.equal(outcome.image.width, ZOOM_MAX_SIDE);
  assert.equal(outcome.image.height, Math.round(30 * (4096 / 1100)));
});

test('an inverted, empty or off-image box is an E4 error that explains the coordinates', async () => {
  const { image, meta } = await table();
  for (const bbox of [[200, 50, 100, 100], [100, 50, 100, 100], [100, 90, 200, 90]]) {
    const outcome = await zoom(image, meta, { bbox });
    assert.ok(!outcome.ok);
    assert.equal(outcome.error.class, 'E4');
    assert.match(outcome.error.message, /x1 < x2 and y1 < y2/);
  }
  const outside = await zoom(image, meta, { bbox: [500, 10, 600, 50] });
  assert.ok(!outside.ok);
  assert.equal(outside.error.class, 'E4');
  assert.match(outside.error.message, /lies outside the 460×220 image/);
});

test('the zoom kernel is Catmull-Rom with centre-aligned pixels (hand-computed 2× of a 2-pixel line)', () => {
  const data = Buffer.alloc(8 * 3);
  data.fill(255, 9, 15); // pixels 3 and 4 white, the rest black
  const out = resizeCubic({ width: 8, height: 1, data }, 16, 1);
  const reds = Array.from({ length: 16 }, (_, i) => out.data[i * 3]);
  // Output 5 samples source 2.25: weights k(0.75) = 0.2266 on pixel 3, k(1.75) = −0.0234 on pixel 4 → 0.2031 · 255 = 52.
  // Output 6 samples 2.75: k(0.25) = 0.8672, k(1.25) = −0.0703 → 0.7969 · 255 = 203.
  assert.deepEqual(reds, [0, 0, 0, 0, 0, 52, 203, 255, 255, 203, 52, 0, 0, 0, 0, 0]);
});

test('zoom results are deterministic and never mutate the input', async () => {
  const { image, meta } = await table();
  const before = contentHash(image.data);
  const a = await zoom(image, meta, { bbox: [37.5, 21, 301, 133], factor: 2.5 });
  const b = await zoom(image, meta, { bbox: [37.5, 21, 301, 133], factor: 2.5 });
  assert.ok(a.ok && b.ok);
  assert.ok(a.image.data.equals(b.image.data));
  assert.equal(contentHash(image.data), before);
  const crop = cropImage(image, 37, 21, 301, 133);
  assert.deepEqual([a.image.width, a.image.height], [Math.round(crop.width * 2.5), Math.round(crop.height * 2.5)]);
});

test('zoom_in returns metadata moved into the new image, dropping bands outside the crop', async () => {
  const { image, meta } = await table();
  // Columns: Rider 20–104, Country 104–188, Wins 188–272, ...; crop x 180–300 at 2×.
  const outcome = await zoom(image, meta, { bbox: [180, 40, 300, 110] });
  assert.ok(outcome.ok && outcome.meta);
  assert.deepEqual(Object.keys(outcome.meta.columns_bbox ?? {}), ['Country', 'Wins', 'Team']);
  assert.deepEqual(outcome.meta.columns_bbox?.Wins, { x1: 16, y1: 0, x2: 184, y2: 140 });
  // Rows: Merckx 50–80 and Hinault 80–110 are inside y 40–110; Cavendish starts at 110, outside.
  assert.deepEqual(Object.keys(outcome.meta.rows_bbox ?? {}), ['Merckx', 'Hinault']);
  // The moved metadata drives the next call: mask in the zoomed image keeps Wins only.
  const next = await runToolCall(outcome.image, { name: 'focus_on_columns_with_mask', arguments: { columns: ['Wins'] } }, outcome.meta);
  assert.ok(next.ok, JSON.stringify(next));
  assert.deepEqual(pixelOf(next.image, 5, 70), [255, 255, 255], 'Country, left of Wins, is masked');
});
