import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import sharp from 'sharp';
import type { RgbImage } from '../../env/core/image.js';
import { detectionWindow, inkedBox } from '../../env/grounding/content-window.js';
import { detectText } from '../../env/grounding/detect-text.js';
import { groundImage } from '../../env/grounding/ground.js';
import { readText } from '../../env/grounding/ocr.js';
import { ocrSessions } from '../../env/grounding/sessions.js';
import { tableFixture } from '../fixtures/render.js';

function blankImage(width: number, height: number, rgb: [number, number, number]): RgbImage {
  const data = Buffer.alloc(width * height * 3);
  for (let i = 0; i < data.length; i += 3) data.set(rgb, i);
  return { width, height, data };
}

test('inkedBox is the box of the pixels unlike the border colour, by a pixel-by-pixel scan', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 40 }),
      fc.integer({ min: 2, max: 40 }),
      fc.constantFrom<[number, number, number]>([255, 255, 255], [240, 240, 236], [0, 0, 0]),
      fc.array(fc.record({ x: fc.nat(), y: fc.nat(), channel: fc.integer({ min: 0, max: 2 }) }), { maxLength: 6 }),
      (width, height, border, marks) => {
        const image = blankImage(width, height, border);
        // Inked pixels away from the corners, so the corners keep the border colour.
        const inside = marks.map((m) => ({ x: 1 + (m.x % Math.max(1, width - 2)), y: 1 + (m.y % Math.max(1, height - 2)), channel: m.channel })).filter((m) => m.x < width - 1 && m.y < height - 1);
        for (const m of inside) {
          const i = (m.y * width + m.x) * 3 + m.channel;
          image.data[i] = (border[m.channel] as number) ^ 1; // the smallest difference still counts
        }
        const expected = inside.length === 0 ? null : { x1: Math.min(...inside.map((m) => m.x)), y1: Math.min(...inside.map((m) => m.y)), x2: Math.max(...inside.map((m) => m.x)) + 1, y2: Math.max(...inside.map((m) => m.y)) + 1 };
        assert.deepEqual(inkedBox(image), expected);
      },
    ),
  );
});

test('inkedBox takes the whole image when the corners disagree (no uniform border to trim)', () => {
  const image = blankImage(30, 20, [255, 255, 255]);
  image.data.set([10, 20, 30], (19 * 30 + 29) * 3);
  assert.deepEqual(inkedBox(image), { x1: 0, y1: 0, x2: 30, y2: 20 });
});

test('detectionWindow: on the stride grid, inside the image, covering the inked box and its margin', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 900 }),
      fc.integer({ min: 1, max: 900 }),
      fc.double({ min: 0.3, max: 2, noNaN: true }),
      fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
      (imageWidth, imageHeight, scale, [a, b, c, d]) => {
        const inked = { x1: Math.floor(Math.min(a, b) * imageWidth), x2: Math.max(1, Math.ceil(Math.max(a, b) * imageWidth)), y1: Math.floor(Math.min(c, d) * imageHeight), y2: Math.max(1, Math.ceil(Math.max(c, d) * imageHeight)) };
        const width = Math.max(1, Math.round(imageWidth * scale));
        const height = Math.max(1, Math.round(imageHeight * scale));
        const w = detectionWindow(inked, scale, width, height, 32, 32);
        for (const [start, length, padded, size, from, to] of [
          [w.x, w.width, w.padWidth, width, inked.x1 * scale, inked.x2 * scale],
          [w.y, w.height, w.padHeight, height, inked.y1 * scale, inked.y2 * scale],
        ] as const) {
          assert.equal(start % 32, 0, 'starts on the stride grid');
          assert.equal(padded % 32, 0, 'a whole number of strides');
          assert.ok(padded >= length && padded - length < 32, 'padding only to the next stride');
          assert.ok(start >= 0 && start + length <= size, 'inside the scaled image');
          assert.ok(length === size - start || length === padded, 'padding only where the image ends');
          assert.ok(start <= Math.max(0, Math.floor(from) - 32), 'the margin before the ink');
          assert.ok(start + length >= Math.min(size, Math.ceil(to) + 32), 'the margin after the ink');
        }
      },
    ),
  );
});

/** The fixture table in the middle of a blank 800×600 canvas, as the generator draws small tables. */
async function tableOnCanvas(): Promise<RgbImage> {
  const { image } = await tableFixture();
  const left = Math.floor((800 - image.width) / 2);
  const top = Math.floor((600 - image.height) / 2);
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .extend({ left, top, right: 800 - image.width - left, bottom: 600 - image.height - top, background: { r: 255, g: 255, b: 255 } })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

test('a table on a blank canvas: the detector sees only the inked window, and grounding and OCR come out as on the whole image', async () => {
  const sessions = await ocrSessions();
  const image = await tableOnCanvas();
  const inputs: number[][] = [];
  const spied = { ...sessions, detection: Object.assign(Object.create(sessions.detection) as typeof sessions.detection, { run: (feeds: Record<string, { dims: readonly number[] }>) => { inputs.push([...(Object.values(feeds)[0]?.dims ?? [])]); return sessions.detection.run(feeds as never); } }) };

  const windowed = await detectText(spied.detection, image);
  const [, , h, w] = inputs[0] as number[];
  assert.ok((h as number) * (w as number) < 0.5 * 480 * 640, `detector input ${w}×${h}, less than half of the whole image's 640×480`);
  assert.ok(windowed.length > 0);

  const whole = await groundImage(image, { sessions, detection: { wholeImage: true } });
  const trimmed = await groundImage(image, { sessions });
  assert.equal(whole.kind, 'table');
  assert.deepEqual(trimmed.meta, whole.meta, 'the same bands under the same labels');

  const wholeText = await readText(image, { sessions, detection: { wholeImage: true } });
  const trimmedText = await readText(image, { sessions });
  assert.deepEqual(trimmedText.words.map((word) => [word.text, word.box]), wholeText.words.map((word) => [word.text, word.box]));
});

test('a blank image has no text, and the detector is not run on it', async () => {
  const sessions = await ocrSessions();
  let runs = 0;
  const counting = Object.assign(Object.create(sessions.detection) as typeof sessions.detection, { run: () => { runs++; throw new Error('not expected'); } });
  assert.deepEqual(await detectText(counting, blankImage(200, 100, [250, 250, 250])), []);
  assert.equal(runs, 0);
});
