import { test } from 'node:test';
import assert from 'node:assert/strict';
import { metadataOrGrounding } from '../../env/grounding/fallback.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import { runToolCall } from '../../env/tools/registry.js';
import { horizontalBarsFixture, HBAR_LABELS } from '../fixtures/render.js';

test('an image with band metadata keeps it: no OCR runs', async () => {
  const f = await horizontalBarsFixture();
  const meta = resolveMetadata(f.meta, f.image.width, f.image.height);
  const choice = await metadataOrGrounding(f.image, meta);
  assert.equal(choice.source, 'given');
  assert.equal(choice.meta, meta);
  assert.equal(choice.grounding, undefined);
});

test('an image without metadata gets OCR bands, and a focus tool works on them right away', async () => {
  const f = await horizontalBarsFixture();
  const choice = await metadataOrGrounding(f.image, undefined);
  assert.equal(choice.source, 'ocr');
  assert.equal(choice.meta.source, 'ocr');
  assert.deepEqual(Object.keys(choice.meta.y_values_bbox ?? {}), HBAR_LABELS);
  const outcome = await runToolCall(f.image, { name: 'focus_on_y_values_with_draw', arguments: { y_values: ['Spain'] } }, choice.meta);
  assert.ok(outcome.ok, JSON.stringify(outcome));
});

test('a task that is never grounded keeps its metadata with the reason, even when its image is a chart OCR would ground', async () => {
  const f = await horizontalBarsFixture();
  const choice = await metadataOrGrounding(f.image, undefined, {}, "a search task's tools take boxes in the scene, not chart bands");
  assert.equal(choice.source, 'none');
  assert.equal(choice.grounding, undefined);
  assert.equal(choice.reason, "a search task's tools take boxes in the scene, not chart bands: no OCR");
  // The same image with no reason is grounded.
  assert.equal((await metadataOrGrounding(f.image, undefined, {}, null)).source, 'ocr');
});

test('an image with nothing to ground keeps the metadata it had and says why', async () => {
  const blank = { width: 64, height: 48, data: Buffer.alloc(64 * 48 * 3, 255) };
  const given = resolveMetadata({ figure_bbox: { x1: 0, y1: 0, x2: 10, y2: 10 } }, 64, 48);
  const choice = await metadataOrGrounding(blank, given);
  assert.equal(choice.source, 'none');
  assert.equal(choice.meta, given);
  assert.match(choice.reason ?? '', /OCR found no table or bar-chart layout/);
});
