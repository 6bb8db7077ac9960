import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { decodeImage, encodePng, contentHash } from '../../env/core/image.js';

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
