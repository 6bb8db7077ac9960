import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drainPixelPool, MAX_POOLED_BYTES, pooledPixelBytes, releaseBuffers, releasePixels, sizeClass, takeFloat32s, takeInt32s, takePixels } from '../../env/core/pixel-pool.js';
import type { RgbImage } from '../../env/core/image.js';

const imageOf = (data: Buffer, width = data.length / 3): RgbImage => ({ width, height: 1, data });

test('size classes: the smallest m·2^k (m = 4…7) not below the size, so a buffer is under 25 % larger than asked', () => {
  // The classes written out, independently of the arithmetic in sizeClass.
  const classes = [1, 2, 3, 4];
  for (let k = 0; k <= 30; k++) for (const m of [4, 5, 6, 7]) classes.push(m * 2 ** k);
  classes.sort((a, b) => a - b);
  const sizes = [1, 4, 5, 7, 8, 9, 100, 1023, 1024, 1025, 65535, 65536, 800 * 600 * 3, 1600 * 1200 * 3, 2 ** 24 - 1, 2 ** 24 + 1];
  for (let i = 0; i < 2000; i++) sizes.push(1 + Math.floor(Math.random() * 3e7));
  for (const size of sizes) {
    const expected = Math.max(4, classes.find((c) => c >= size) as number);
    assert.equal(sizeClass(size), expected, `size ${size}`);
    if (size >= 4) assert.ok(sizeClass(size) < size * 1.25, `size ${size}: class ${sizeClass(size)}`);
  }
  assert.equal(sizeClass(800 * 600 * 3), 6 * 2 ** 18);
});

test('a released buffer is handed out again for an image of its size class, with the length asked for', () => {
  drainPixelPool();
  const first = takePixels(800 * 600 * 3);
  assert.equal(first.length, 800 * 600 * 3);
  const memory = first.buffer;
  releasePixels(imageOf(first));
  assert.equal(pooledPixelBytes(), sizeClass(800 * 600 * 3));
  const again = takePixels(798 * 601 * 3); // another size in the same class
  assert.equal(again.buffer, memory, 'the same memory');
  assert.equal(again.length, 798 * 601 * 3);
  assert.equal(pooledPixelBytes(), 0);
  const other = takePixels(400 * 300 * 3);
  assert.notEqual(other.buffer, memory, 'another class gets its own');
});

test('with none free in its class, a request takes the smallest free buffer up to twice its class, never a larger one', () => {
  drainPixelPool();
  const big = takePixels(sizeClass(1_000_000)); // a class of its own
  const bigger = takePixels(sizeClass(1_500_000));
  const huge = takePixels(sizeClass(5_000_000));
  releaseBuffers(huge, bigger, big);
  const asked = 700_000; // its class (786,432) is empty; 1,048,576 and 1,572,864 fit within 2×, 5,242,880 does not
  assert.ok(sizeClass(asked) < big.buffer.byteLength && big.buffer.byteLength <= 2 * sizeClass(asked));
  const got = takePixels(asked);
  assert.equal(got.buffer, big.buffer, 'the smallest that fits');
  assert.equal(got.length, asked);
  const next = takePixels(asked);
  assert.equal(next.buffer, bigger.buffer, 'then the next smallest within 2×');
  assert.notEqual(takePixels(asked).buffer, huge.buffer, 'a buffer over twice the class is left for its own size');
  assert.equal(pooledPixelBytes(), huge.buffer.byteLength);
  drainPixelPool();
});

test('a second release of the same image, and buffers the pool never handed out, are ignored', () => {
  drainPixelPool();
  const image = imageOf(takePixels(3000));
  releasePixels(image);
  releasePixels(image);
  assert.equal(pooledPixelBytes(), sizeClass(3000), 'pooled once');
  const a = takePixels(3000);
  const b = takePixels(3000);
  assert.notEqual(a.buffer, b.buffer, 'two takes never share memory');
  releasePixels(image); // its memory now belongs to `a`
  const c = takePixels(3000);
  assert.notEqual(c.buffer, a.buffer, 'a stale release did not hand out memory in use');

  drainPixelPool();
  releasePixels(imageOf(Buffer.alloc(3000)));
  releasePixels(imageOf(Buffer.allocUnsafeSlow(3000)));
  assert.equal(pooledPixelBytes(), 0);
});

test('the pool keeps at most MAX_POOLED_BYTES, and draining empties it', () => {
  drainPixelPool();
  const size = 1600 * 1200 * 3;
  const images = Array.from({ length: Math.ceil(MAX_POOLED_BYTES / sizeClass(size)) + 3 }, () => imageOf(takePixels(size)));
  for (const image of images) releasePixels(image);
  assert.ok(pooledPixelBytes() <= MAX_POOLED_BYTES, `${pooledPixelBytes()} bytes pooled`);
  assert.ok(pooledPixelBytes() > MAX_POOLED_BYTES - sizeClass(size), 'filled up to the bound');
  drainPixelPool();
  assert.equal(pooledPixelBytes(), 0);
  const fresh = takePixels(size);
  assert.ok(images.every((image) => image.data.buffer !== fresh.buffer), 'nothing reused after draining');
});

test('typed views from the pool (the task generator\'s label-map ids and coverage) share its memory and its release rules', () => {
  drainPixelPool();
  const ids = takeInt32s(1000);
  assert.equal(ids.length, 1000);
  assert.equal(ids.buffer.byteLength, sizeClass(4000));
  const memory = ids.buffer;
  releaseBuffers(ids);
  releaseBuffers(ids); // a second release is ignored
  assert.equal(pooledPixelBytes(), sizeClass(4000), 'pooled once');
  const cover = takeFloat32s(1000);
  assert.equal(cover.buffer, memory, 'the same class is reused across view types');
  assert.equal(cover.length, 1000);
  releaseBuffers(ids); // stale: its memory now belongs to `cover`
  assert.equal(pooledPixelBytes(), 0, 'a stale typed view is not taken back');
  assert.notEqual(takeFloat32s(1000).buffer, memory, 'memory in use is not handed out again');
  releaseBuffers(new Int32Array(1000));
  assert.equal(pooledPixelBytes(), 0, 'a view the pool never gave is ignored');
});
