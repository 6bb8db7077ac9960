import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readText } from '../../env/grounding/ocr.js';
import { ocrSessions } from '../../env/grounding/sessions.js';
import type { BBox } from '../../env/tools/metadata.js';
import sharp from 'sharp';
import { decodeImage, type RgbImage } from '../../env/core/image.js';
import { tableFixture, TABLE_COLUMNS, TABLE_ROWS } from '../fixtures/render.js';

function inside(inner: BBox, outer: BBox): boolean {
  return inner.x1 >= outer.x1 && inner.y1 >= outer.y1 && inner.x2 <= outer.x2 && inner.y2 <= outer.y2;
}

test('readText reads every cell of the fixture table exactly, each segment inside its cell', async () => {
  const { image, meta } = await tableFixture();
  const result = await readText(image);
  const texts = result.segments.map((s) => s.text);
  const cells = [TABLE_COLUMNS, ...TABLE_ROWS];
  for (const [r, row] of cells.entries()) {
    for (const [c, text] of row.entries()) {
      const segment = result.segments.find((s) => s.text === text && inside(s.box, { ...meta.columns_bbox![TABLE_COLUMNS[c] as string]!, y1: 20 + r * 30, y2: 20 + (r + 1) * 30 }));
      assert.ok(segment, `cell (${r}, ${c}) "${text}" not read inside its cell; read: ${JSON.stringify(texts)}`);
    }
  }
  assert.equal(result.segments.length, cells.flat().length, `no text besides the cells: ${JSON.stringify(texts)}`);
});

test('readText lists segments in reading order, words with boxes inside their segment and a confidence', async () => {
  const { image } = await tableFixture();
  const result = await readText(image);
  assert.deepEqual(result.segments.slice(0, 5).map((s) => s.text), TABLE_COLUMNS, 'the header row first, left to right');
  for (const word of result.words) {
    const segment = result.segments[word.segment];
    assert.ok(segment, 'every word points at its segment');
    assert.ok(inside(word.box, segment.box), `word "${word.text}" inside segment "${segment.text}"`);
    assert.ok(word.confidence > 0.5 && word.confidence <= 1, `confidence of "${word.text}" is ${word.confidence}`);
    assert.equal(word.angle, 0);
  }
  assert.equal(result.device, 'cpu');
  assert.ok(result.timing.totalMs >= result.timing.detectMs);
});

/** Labels right-aligned 3 px before 4 px tick marks on a y axis, as matplotlib and the generator draw them. */
async function labelsWithTicks(): Promise<RgbImage> {
  const labels = ['Lisbon', 'Oslo', 'Madrid'];
  const parts = labels.map((label, i) => {
    const y = 30 + i * 40;
    return `<text x="100" y="${y + 5}" text-anchor="end" font-size="14" font-family="DejaVu Sans" fill="#222222">${label}</text><rect x="103" y="${y}" width="4" height="1" fill="#444444"/>`;
  });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="140"><rect width="240" height="140" fill="#ffffff"/>${parts.join('')}<rect x="107" y="10" width="1" height="120" fill="#444444"/><rect x="108" y="20" width="90" height="20" fill="#4e79a7"/></svg>`;
  return decodeImage(await sharp(Buffer.from(svg)).png().toBuffer());
}

test('a tick mark touching a label is not read as part of it (axes and ticks are painted out first)', async () => {
  const result = await readText(await labelsWithTicks());
  assert.deepEqual(result.segments.map((s) => s.text), ['Lisbon', 'Oslo', 'Madrid']);
});

test('the OCR sessions are created once and shared by every caller', async () => {
  const first = ocrSessions();
  const second = ocrSessions({ threads: 1 });
  assert.equal(first, second, 'the same promise');
  assert.equal(await first, await second);
});
