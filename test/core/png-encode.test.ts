/**
 * The PNG writer (env/core/png-encode.ts) checked by decoders that share no code with it:
 * sharp (libspng) here, and Pillow (the trainer's reader) where the trainer's .venv exists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { defaultPython } from '../../env/eval/checkpoint-eval.js';
import { crc32, encodeRgbPng, tableCrc32 } from '../../env/core/png-encode.js';
import { pooledPixelBytes, drainPixelPool } from '../../env/core/pixel-pool.js';

/** Pixels with everything an encoder can get wrong: odd width, every byte value, flat runs and noise. */
function testImage(width: number, height: number): { width: number; height: number; data: Buffer } {
  const data = Buffer.alloc(width * height * 3);
  let state = 12345;
  for (let i = 0; i < data.length; i++) {
    const x = Math.floor(i / 3) % width;
    state = (state * 1103515245 + 12345) >>> 0;
    data[i] = x < width / 3 ? 255 : x < (2 * width) / 3 ? i % 256 : state >>> 24;
  }
  return { width, height, data };
}

test('sharp decodes the written PNG to the same pixels, and the same pixels give the same bytes', async () => {
  for (const [width, height] of [[1, 1], [7, 3], [333, 211]] as const) {
    const image = testImage(width, height);
    const png = encodeRgbPng(image);
    assert.deepEqual(encodeRgbPng({ ...image, data: Buffer.from(image.data) }), png);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height, info.channels], [width, height, 3]);
    assert.ok(data.equals(image.data), `${width}×${height}`);
  }
});

test('CRC-32 of the standard check strings, in node and in the fallback table', () => {
  for (const crc of [crc32, tableCrc32]) {
    assert.equal(crc(Buffer.from('123456789')), 0xcbf43926);
    assert.equal(crc(Buffer.from('The quick brown fox jumps over the lazy dog')), 0x414fa339);
  }
});

test('a buffer whose size does not match the dimensions is refused with both numbers', () => {
  assert.throws(() => encodeRgbPng({ width: 4, height: 4, data: Buffer.alloc(47) }), /4×4 RGB image from 47 bytes \(expected 48\)/);
  assert.throws(() => encodeRgbPng({ width: 0, height: 4, data: Buffer.alloc(0) }), /0×4/);
});

test('the scanline buffer goes back to the pixel pool once compressed', async () => {
  drainPixelPool();
  encodeRgbPng(testImage(200, 100));
  assert.ok(pooledPixelBytes() >= 201 * 3 * 100, `pooled ${pooledPixelBytes()} bytes`);
  drainPixelPool();
});

const python = defaultPython();
test('Pillow, the trainer\'s reader, decodes it to the same pixels', { skip: existsSync(python) ? false : `no trainer interpreter at ${python}` }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-png-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const image = testImage(97, 41);
  await writeFile(join(dir, 'a.png'), encodeRgbPng(image));
  await writeFile(join(dir, 'a.raw'), image.data);
  const run = spawnSync(python, ['-c', `
import sys
from PIL import Image
im = Image.open(sys.argv[1])
im.load()
assert im.mode == "RGB", im.mode
assert im.size == (97, 41), im.size
print("same" if im.tobytes() == open(sys.argv[2], "rb").read() else "different")
`, join(dir, 'a.png'), join(dir, 'a.raw')], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), 'same');
});
