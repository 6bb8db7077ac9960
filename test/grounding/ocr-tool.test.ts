import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ocrTool, regionOf } from '../../env/grounding/ocr-tool.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import { validateArguments } from '../../env/tools/validate.js';
import { getTool, runToolCall } from '../../env/tools/registry.js';
import { tableFixture } from '../fixtures/render.js';

async function table() {
  const f = await tableFixture();
  return { image: f.image, meta: resolveMetadata(f.meta, f.image.width, f.image.height) };
}

test('ocr without a box lists every piece of text in the image with its box, and leaves the image as it was', async () => {
  const { image, meta } = await table();
  const before = Buffer.from(image.data);
  const outcome = await ocrTool.apply(image, {}, meta);
  assert.ok(outcome.ok, JSON.stringify(outcome));
  assert.equal(outcome.image, image);
  assert.deepEqual(image.data, before);
  assert.match(outcome.summary, /^read 30 pieces of text in the whole image/);
  assert.match(outcome.summary, /\n"Rider" \[\d+, \d+, \d+, \d+\]\n"Country" \[/);
  assert.match(outcome.summary, /"Cavendish" \[/);
});

test('ocr with a box reads only the text inside it, with boxes in the full image\'s pixels', async () => {
  const { image, meta } = await table();
  // The Wins column's data cells (x 188..272, rows 1–5).
  const outcome = await ocrTool.apply(image, { bbox: [188, 50, 272, 200] }, meta);
  assert.ok(outcome.ok);
  const lines = outcome.summary.split('\n').slice(1);
  assert.deepEqual(lines.map((l) => JSON.parse(l.slice(0, l.indexOf(' [')))), ['34', '28', '34', '16', '16']);
  for (const line of lines) {
    const [x1, y1, x2, y2] = JSON.parse(line.slice(line.indexOf('['))) as number[];
    assert.ok(x1! >= 188 && x2! <= 272 && y1! >= 50 && y2! <= 200, line);
  }
});

test('ocr refuses a box outside the image or upside down with E4 and says what the image spans', async () => {
  const { image, meta } = await table();
  const outside = await ocrTool.apply(image, { bbox: [900, 900, 950, 950] }, meta);
  assert.ok(!outside.ok);
  assert.equal(outside.error.class, 'E4');
  assert.match(outside.error.message, /outside the 460×220 image/);
  const flipped = await ocrTool.apply(image, { bbox: [50, 50, 10, 80] }, meta);
  assert.ok(!flipped.ok);
  assert.match(flipped.error.message, /x1 < x2/);
});

test('a tiny box is widened to 16 px around its centre; the arguments schema takes only an optional bbox', async () => {
  const { image, meta } = await table();
  assert.deepEqual(regionOf(image, [100, 100, 102, 101]), { x1: 93, y1: 93, x2: 109, y2: 109 });
  assert.equal(validateArguments(ocrTool, {}, meta), null);
  assert.equal(validateArguments(ocrTool, { bbox: [1, 2, 3, 4] }, meta), null);
  assert.equal(validateArguments(ocrTool, { box: [1, 2, 3, 4] }, meta)?.class, 'E2');
  assert.equal(validateArguments(ocrTool, { bbox: [1, 2, 3] }, meta)?.class !== undefined, true);
});

test('the registry lists the ocr tool itself, whose apply is the real reading', async () => {
  const { image, meta } = await table();
  assert.equal(getTool('ocr'), ocrTool);
  const read = await runToolCall(image, { name: 'ocr', arguments: { bbox: [20, 20, 120, 50] } }, meta);
  assert.ok(read.ok);
  assert.match(read.summary, /"Rider" \[/);
});
