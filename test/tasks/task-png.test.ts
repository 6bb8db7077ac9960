/**
 * A generated task's PNG (env/tasks/task-png.ts): small canvases are png-encode.ts's bytes, large
 * ones sharp's, read back here by hand (chunks, node's inflate, filter bytes) so that the check
 * shares no code with either encoder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { encodeRgbPng } from '../../env/core/png-encode.js';
import { encodeTaskPng, LARGE_CANVAS_PIXELS } from '../../env/tasks/task-png.js';
import { taskStream } from '../../env/tasks/prng.js';

/** Flat bands, a gradient and noise: what a scene has, and what an encoder can get wrong. */
function scene(width: number, height: number): { width: number; height: number; data: Buffer } {
  const rng = taskStream(11, 'test', 0, 0);
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const band = Math.floor(y / 37) % 3;
      for (let c = 0; c < 3; c++) data[i + c] = band === 0 ? 224 : band === 1 ? (x + 7 * c) % 256 : rng.int(0, 255);
    }
  }
  return { width, height, data };
}

/** Header fields and the unfiltered rows of an 8-bit RGB PNG without interlace, or an assertion failure. */
function readPng(png: Buffer): { width: number; height: number; filters: Set<number>; pixels: Buffer } {
  assert.ok(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'PNG signature');
  let width = 0, height = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      assert.deepEqual([...body.subarray(8, 13)], [8, 2, 0, 0, 0], 'IHDR: 8 bits, RGB, deflate, filter method 0, no interlace');
    }
    if (type === 'IDAT') idat.push(body);
    at += 12 + length;
  }
  const rows = inflateSync(Buffer.concat(idat));
  const stride = width * 3;
  assert.equal(rows.length, (stride + 1) * height);
  const filters = new Set<number>();
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    filters.add(rows[y * (stride + 1)] as number);
    rows.copy(pixels, y * stride, y * (stride + 1) + 1, (y + 1) * (stride + 1));
  }
  return { width, height, filters, pixels };
}

test('a canvas under the threshold is written by png-encode.ts, byte for byte', async () => {
  const image = scene(640, 480);
  assert.ok(image.width * image.height < LARGE_CANVAS_PIXELS);
  assert.ok((await encodeTaskPng(image)).equals(encodeRgbPng(image)));
});

test('a large canvas is written losslessly, unfiltered, and the same pixels give the same bytes', async () => {
  const image = scene(2048, 1000);
  assert.ok(image.width * image.height >= LARGE_CANVAS_PIXELS);
  const png = await encodeTaskPng(image);
  // Not png-encode.ts's bytes: the other encoder wrote it.
  assert.ok(!png.equals(encodeRgbPng(image)));
  const read = readPng(png);
  assert.deepEqual([read.width, read.height, [...read.filters]], [2048, 1000, [0]]);
  assert.ok(read.pixels.equals(image.data), 'the decoded pixels are the painted ones');
  assert.ok((await encodeTaskPng({ ...image, data: Buffer.from(image.data) })).equals(png));
});
