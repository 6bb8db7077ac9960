import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveMetadata, type PixelMetadata } from '../../env/tools/metadata.js';
import { runToolCall } from '../../env/tools/registry.js';
import { verticalBarsFixture } from '../fixtures/render.js';
import { assertPixels, RED } from './pixels.js';
import type { RgbImage } from '../../env/core/image.js';

async function chart(): Promise<{ image: RgbImage; meta: PixelMetadata }> {
  const f = await verticalBarsFixture();
  return { image: f.image, meta: resolveMetadata(f.meta, f.image.width, f.image.height) };
}

/** The documented dash pattern: 10 px drawn, 6 px gap, from the image edge. */
const dash = (p: number): boolean => p % 16 < 10;

test('draw_horizontal_line paints rows y and y+1 red with a 10-on 6-off dash and nothing else', async () => {
  const { image, meta } = await chart();
  const outcome = await runToolCall(image, { name: 'draw_horizontal_line', arguments: { y: 120 } }, meta);
  assert.ok(outcome.ok);
  assertPixels(image, outcome.image, (x, y) => ((y === 120 || y === 121) && dash(x) ? RED : null));
  assert.equal(outcome.summary, 'drew a dashed red horizontal line at y=120.');
});

test('draw_vertical_line paints columns x and x+1 with the same dash pattern down the image', async () => {
  const { image, meta } = await chart();
  const outcome = await runToolCall(image, { name: 'draw_vertical_line', arguments: { x: 233 } }, meta);
  assert.ok(outcome.ok);
  assertPixels(image, outcome.image, (x, y) => ((x === 233 || x === 234) && dash(y) ? RED : null));
});

test('line coordinates are rounded to the nearest pixel and a line on the last row is clipped to one row', async () => {
  const { image, meta } = await chart();
  const rounded = await runToolCall(image, { name: 'draw_horizontal_line', arguments: { y: 59.5 } }, meta);
  assert.ok(rounded.ok);
  assertPixels(image, rounded.image, (x, y) => ((y === 60 || y === 61) && dash(x) ? RED : null));
  const last = image.height - 1;
  const edge = await runToolCall(image, { name: 'draw_horizontal_line', arguments: { y: last } }, meta);
  assert.ok(edge.ok);
  assertPixels(image, edge.image, (x, y) => (y === last && dash(x) ? RED : null));
});

test('lines outside the image are E4 errors that give the valid range', async () => {
  const { image, meta } = await chart();
  for (const [name, args, pattern] of [
    ['draw_horizontal_line', { y: -1 }, /y=-1 is outside the image: y must be between 0 and 259/],
    ['draw_horizontal_line', { y: 259.6 }, /between 0 and 259/],
    ['draw_vertical_line', { x: 400 }, /x=400 is outside the image: x must be between 0 and 399/],
  ] as const) {
    const outcome = await runToolCall(image, { name, arguments: args }, meta);
    assert.ok(!outcome.ok);
    assert.equal(outcome.error.class, 'E4');
    assert.match(outcome.error.message, pattern);
  }
});

test('mark_point draws a red ring (squared distance 9 to 25) around the point and leaves the point visible', async () => {
  const { image, meta } = await chart();
  const outcome = await runToolCall(image, { name: 'mark_point', arguments: { x: 170, y: 40 } }, meta);
  assert.ok(outcome.ok);
  assertPixels(image, outcome.image, (x, y) => {
    const d2 = (x - 170) ** 2 + (y - 40) ** 2;
    return d2 >= 9 && d2 <= 25 ? RED : null;
  });
  assert.equal(outcome.summary, 'marked the point (170, 40) with a red ring.');
});

test('mark_point near a corner is clipped to the image; off the image it is an E4 error', async () => {
  const { image, meta } = await chart();
  const corner = await runToolCall(image, { name: 'mark_point', arguments: { x: 0, y: 0 } }, meta);
  assert.ok(corner.ok);
  assertPixels(image, corner.image, (x, y) => (x * x + y * y >= 9 && x * x + y * y <= 25 ? RED : null));
  const off = await runToolCall(image, { name: 'mark_point', arguments: { x: 10, y: 260 } }, meta);
  assert.ok(!off.ok);
  assert.equal(off.error.class, 'E4');
  assert.match(off.error.message, /point \(10, 260\) is outside the image: x must be between 0 and 399 and y between 0 and 259/);
});
