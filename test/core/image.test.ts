import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { decodeImage, encodePng, contentHash, ImageTooLargeError } from '../../env/core/image.js';
import { headerOnlyPng } from '../fixtures/header-only-png.js';

test('decoding flattens alpha onto white and encoding is byte-deterministic', async () => {
  const rgba = await sharp({ create: { width: 4, height: 3, channels: 4, background: { r: 10, g: 20, b: 30, alpha: 0 } } }).png().toBuffer();
  const image = await decodeImage(rgba);
  assert.equal(image.width, 4);
  assert.equal(image.height, 3);
  assert.equal(image.data.length, 4 * 3 * 3);
  assert.deepEqual([...image.data.subarray(0, 3)], [255, 255, 255]);
  const a = await encodePng(image);
  const b = await encodePng(image);
  assert.equal(contentHash(a), contentHash(b));
  assert.deepEqual(await decodeImage(a), image);
});

test('an image over the pixel limit is refused from its header: nothing past the header is read', async () => {
  // The file has no pixel data, so any attempt to decode it would fail with a decode error instead.
  const huge = headerOnlyPng(16000, 16000);
  await assert.rejects(decodeImage(huge, { maxPixels: 4_000_000 }), (err: unknown) => {
    assert.ok(err instanceof ImageTooLargeError);
    assert.equal(err.width, 16000);
    assert.match(err.message, /16000×16000 = 256000000 pixels, over the limit of 4000000/);
    return true;
  });
  await assert.rejects(decodeImage(huge), (err: unknown) => !(err instanceof ImageTooLargeError), 'without a limit it is decoded (and fails on the missing data)');
  const small = await sharp({ create: { width: 20, height: 10, channels: 3, background: 'white' } }).png().toBuffer();
  assert.equal((await decodeImage(small, { maxPixels: 200 })).width, 20);
  await assert.rejects(decodeImage(small, { maxPixels: 199 }), ImageTooLargeError);
});
