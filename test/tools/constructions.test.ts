import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RgbImage } from '../../env/core/image.js';
import { resolveMetadata, MetadataError, type PixelMetadata } from '../../env/tools/metadata.js';
import { checkToolCall, runToolCall, toolNamesForTask, availableToolNames } from '../../env/tools/registry.js';
import { zoomMetadata, planZoom } from '../../env/tools/zoom.js';
import { assertPixels, RED } from './pixels.js';

/** A plain grey image: every red pixel in an output was painted by the tool. */
function canvas(width = 120, height = 90): RgbImage {
  return { width, height, data: Buffer.alloc(width * height * 3, 200) };
}

const META: PixelMetadata = resolveMetadata({ points: { A: { x: 10, y: 20 }, B: { x: 100, y: 50 }, C: { x: 40, y: 70 }, O: { x: 60, y: 45 } } }, 120, 90);

// The specification in floating point, pixel centres against the construction (constructions.ts):
// written independently of the tool's integer arithmetic.
const lineDistance = (ax: number, ay: number, bx: number, by: number, x: number, y: number): number =>
  Math.abs((bx - ax) * (ay + 0.5 - (y + 0.5)) - (ax + 0.5 - (x + 0.5)) * (by - ay)) / Math.hypot(bx - ax, by - ay);
function segmentDistance(ax: number, ay: number, bx: number, by: number, x: number, y: number): number {
  const dx = bx - ax, dy = by - ay;
  const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(ax + t * dx - x, ay + t * dy - y);
}

test('draw_line through two labels paints every pixel whose centre is under 1 px from the line, across the whole image', async () => {
  const image = canvas();
  const outcome = await runToolCall(image, { name: 'draw_line', arguments: { through: ['A', 'B'] } }, META);
  assert.ok(outcome.ok, JSON.stringify(outcome));
  assertPixels(image, outcome.image, (x, y) => (lineDistance(10, 20, 100, 50, x, y) < 1 - 1e-9 ? RED : null));
  assert.equal(outcome.summary, 'drew a red line through A and B.');
  assert.deepEqual(outcome.matches.map((m) => m.matched), ['A', 'B']);
  // The line runs on past both points to the image edges.
  assert.deepEqual([...outcome.image.data.subarray((Math.round(20 - 10 / 3) * 120 + 0) * 3, (Math.round(20 - 10 / 3) * 120 + 0) * 3 + 3)], RED);
});

test('a steep line and a vertical one follow the same rule', async () => {
  const image = canvas();
  for (const [a, b] of [[[30, 5], [45, 85]], [[70, 3], [70, 80]]] as const) {
    const outcome = await runToolCall(image, { name: 'draw_line', arguments: { through: [a, b] } }, META);
    assert.ok(outcome.ok);
    assertPixels(image, outcome.image, (x, y) => (lineDistance(a[0], a[1], b[0], b[1], x, y) < 1 - 1e-9 ? RED : null));
    assert.equal(outcome.summary, `drew a red line through (${a[0]}, ${a[1]}) and (${b[0]}, ${b[1]}).`);
  }
});

test('draw_segment stops at its ends: pixels under 1 px from the segment, nothing beyond', async () => {
  const image = canvas();
  const outcome = await runToolCall(image, { name: 'draw_segment', arguments: { endpoints: ['C', 'B'] } }, META);
  assert.ok(outcome.ok);
  assertPixels(image, outcome.image, (x, y) => (segmentDistance(40, 70, 100, 50, x, y) < 1 - 1e-9 ? RED : null));
  assert.equal(outcome.summary, 'drew a red segment from C to B.');
});

test('draw_circle through a point paints the 2 px ring |d − r| < 1 with r the distance between the pixel centres', async () => {
  const image = canvas();
  const outcome = await runToolCall(image, { name: 'draw_circle', arguments: { center: 'O', through: 'C' } }, META);
  assert.ok(outcome.ok);
  const r = Math.hypot(40 - 60, 70 - 45);
  assertPixels(image, outcome.image, (x, y) => (Math.abs(Math.hypot(x - 60, y - 45) - r) < 1 - 1e-9 ? RED : null));
  const byRadius = await runToolCall(image, { name: 'draw_circle', arguments: { center: [60, 45], radius: 12.5 } }, META);
  assert.ok(byRadius.ok);
  assertPixels(image, byRadius.image, (x, y) => (Math.abs(Math.hypot(x - 60, y - 45) - 12.5) < 1 - 1e-9 ? RED : null));
  assert.equal(byRadius.summary, 'drew a red circle about (60, 45) of radius 12.5 px.');
});

test('mark_point by label rings the point like mark_point by coordinates, and says so without coordinates', async () => {
  const image = canvas();
  const byLabel = await runToolCall(image, { name: 'mark_point', arguments: { point: 'C' } }, META);
  const byXY = await runToolCall(image, { name: 'mark_point', arguments: { x: 40, y: 70 } }, META);
  assert.ok(byLabel.ok && byXY.ok);
  assert.ok(byLabel.image.data.equals(byXY.image.data));
  assert.equal(byLabel.summary, 'marked point C with a red ring.');
  assert.equal(byXY.summary, 'marked the point (40, 70) with a red ring.');
  assert.doesNotMatch(byLabel.summary, /\d/, 'a labelled point\'s coordinates stay out of the summary');
});

test('unknown, ambiguous and missing labels are E4 errors that list the points; coordinates work without metadata', async () => {
  const image = canvas();
  const unknown = await runToolCall(image, { name: 'draw_line', arguments: { through: ['A', 'Q'] } }, META);
  assert.ok(!unknown.ok);
  assert.equal(unknown.error.class, 'E4');
  assert.match(unknown.error.message, /through\[1\]: unknown point 'Q' — points are: A, B, C, O/);
  const near = await runToolCall(image, { name: 'draw_segment', arguments: { endpoints: ['a', 'B'] } }, META);
  assert.ok(near.ok, 'a label differing only in case is read, as band labels are');
  assert.equal(near.matches[0]?.how, 'case');
  const bare = resolveMetadata({}, 120, 90);
  const noPoints = await runToolCall(image, { name: 'draw_circle', arguments: { center: 'O', radius: 5 } }, bare);
  assert.ok(!noPoints.ok);
  assert.equal(noPoints.error.class, 'E4');
  assert.match(noPoints.error.message, /no labelled points.*pixel coordinates \[x, y\]/);
  const coordinates = await runToolCall(image, { name: 'draw_segment', arguments: { endpoints: [[5, 5], [50, 60]] } }, bare);
  assert.ok(coordinates.ok);
  const off = await runToolCall(image, { name: 'draw_line', arguments: { through: [[5, 5], [500, 60]] } }, bare);
  assert.ok(!off.ok);
  assert.equal(off.error.class, 'E4');
  assert.match(off.error.message, /outside the image: x must be between 0 and 119/);
  const same = await runToolCall(image, { name: 'draw_line', arguments: { through: ['A', [10, 20]] } }, META);
  assert.ok(!same.ok);
  assert.match(same.error.message, /same pixel/);
});

test('argument shapes: the schema refuses a third point or a number, draw_circle needs exactly one of through and radius, mark_point one of point and x/y', async () => {
  const image = canvas();
  assert.equal(checkToolCall({ name: 'draw_line', arguments: { through: ['A', 'B', 'C'] } })?.class, 'E3');
  assert.equal(checkToolCall({ name: 'draw_segment', arguments: { endpoints: ['A', 7] } })?.class, 'E3');
  assert.equal(checkToolCall({ name: 'draw_line', arguments: { points: ['A', 'B'] } })?.class, 'E2');
  for (const args of [{ center: 'O' }, { center: 'O', through: 'A', radius: 4 }]) {
    const outcome = await runToolCall(image, { name: 'draw_circle', arguments: args }, META);
    assert.ok(!outcome.ok);
    assert.equal(outcome.error.class, 'E2');
  }
  for (const args of [{}, { x: 3 }, { point: 'A', x: 1, y: 2 }]) {
    const outcome = await runToolCall(image, { name: 'mark_point', arguments: args }, META);
    assert.ok(!outcome.ok);
    assert.equal(outcome.error.class, 'E2', JSON.stringify(args));
  }
});

test('metadata points: normalised ones are scaled and truncated, pixel ones rounded, bad ones refused with the label', () => {
  const meta = resolveMetadata({ unit: 'normalized', points: { A: { x: 0.5, y: 0.999 } } }, 120, 90);
  assert.deepEqual(meta.points, { A: { x: 60, y: 89 } });
  assert.deepEqual(resolveMetadata({ points: { B: { x: 10.5, y: 3.4 } } }, 120, 90).points, { B: { x: 11, y: 3 } });
  assert.throws(() => resolveMetadata({ points: { Z: { x: 130, y: 3 } } }, 120, 90), (err: unknown) => err instanceof MetadataError && /point 'Z'.*outside the 120×90 image/.test(err.message));
  assert.throws(() => resolveMetadata({ points: { Z: { x: 'a', y: 3 } } } as never, 120, 90), /point 'Z' \(points\): must be \{x, y\}/);
});

test('zoom_in moves the points with the pixels, so a label call on the zoomed image hits the same point', async () => {
  const plan = planZoom(120, 90, [30, 40, 90, 80], 2);
  assert.ok(typeof plan !== 'string');
  const moved = zoomMetadata(META, plan);
  // C (40, 70): centre 40.5 − 30 = 10.5 → ×2 = 21 → pixel 21; 70.5 − 40 = 30.5 → 61. A lies outside the crop and goes.
  assert.deepEqual(moved.points, { C: { x: 21, y: 61 }, O: { x: 61, y: 11 } });
});

test('a geometry task is offered the diagram tools; charts keep their tools', () => {
  assert.deepEqual(toolNamesForTask('geometry', META), ['draw_line', 'draw_segment', 'draw_circle', 'mark_point', 'zoom_in']);
  const chart = resolveMetadata({ x_values_bbox: { a: { x1: 0, y1: 0, x2: 40, y2: 90 } } }, 120, 90);
  assert.deepEqual(toolNamesForTask('vbar', chart), availableToolNames(chart));
  assert.ok(!toolNamesForTask('vbar', chart).includes('draw_line'));
});
