import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bandFamiliesOf, MetadataError, resolveMetadata, type ImageMetadata } from '../../env/tools/metadata.js';

test("normalized metadata is converted to pixels by multiplying by the image size and truncating, as ReFocus's int() does", () => {
  const meta: ImageMetadata = {
    unit: 'normalized',
    columns_bbox: { Wins: { x1: 0.1, y1: 0.05, x2: 0.3, y2: 0.9 }, Team: { x1: 0.30125, y1: 0, x2: 0.5, y2: 1 } },
    figure_bbox: { x1: 0, y1: 0, x2: 1, y2: 1 },
  };
  const px = resolveMetadata(meta, 400, 300);
  assert.equal(px.unit, 'pixels');
  assert.deepEqual(px.columns_bbox?.Wins, { x1: 40, y1: 15, x2: 120, y2: 270 });
  // 0.30125 × 400 = 120.5 → 120: truncated, the same way every time.
  assert.deepEqual(px.columns_bbox?.Team, { x1: 120, y1: 0, x2: 200, y2: 300 });
  // 12/734 of 734 px is 11.999… in floating point: ReFocus's int() gives 11, and so does this.
  const tricky = resolveMetadata({ unit: 'normalized', x_values_bbox: { A: { x1: 12 / 734, y1: 0, x2: 40 / 734, y2: 1 } } }, 734, 100);
  assert.equal(tricky.x_values_bbox?.A?.x1, Math.trunc((12 / 734) * 734));
  assert.equal(tricky.x_values_bbox?.A?.x1, 11);
  assert.deepEqual(px.figure_bbox, { x1: 0, y1: 0, x2: 400, y2: 300 });
});

test('pixel metadata keeps its values (rounded to whole pixels) and its extra fields', () => {
  const meta: ImageMetadata = { rows_bbox: { A: { x1: 10.4, y1: 20.5, x2: 90, y2: 40 } }, cells: [1, 2] };
  const px = resolveMetadata(meta, 100, 100);
  assert.deepEqual(px.rows_bbox?.A, { x1: 10, y1: 21, x2: 90, y2: 40 });
  assert.deepEqual(px.cells, [1, 2]);
  assert.equal(meta.unit, undefined, 'the input object is not modified');
});

test('a box with x1 >= x2 is rejected with a message naming the family, the label and what is wrong', () => {
  assert.throws(
    () => resolveMetadata({ columns_bbox: { Wins: { x1: 50, y1: 0, x2: 20, y2: 10 } } }, 100, 100),
    (err: unknown) => err instanceof MetadataError && /column 'Wins' \(columns_bbox\): x1 \(50\) must be less than x2 \(20\)/.test(err.message),
  );
});

test('a box with y1 >= y2 is rejected naming the row', () => {
  assert.throws(() => resolveMetadata({ rows_bbox: { '1969': { x1: 0, y1: 30, x2: 20, y2: 30 } } }, 100, 100), /row '1969' \(rows_bbox\): y1 \(30\) must be less than y2 \(30\)/);
});

test('non-finite and missing coordinates are rejected', () => {
  assert.throws(() => resolveMetadata({ x_values_bbox: { '2020': { x1: 0, y1: 0, x2: Number.NaN, y2: 5 } } }, 100, 100), /x value '2020' \(x_values_bbox\): x2 must be a finite number/);
  assert.throws(() => resolveMetadata({ y_values_bbox: { Spain: { x1: 0, y1: 0, x2: 5 } as never } }, 100, 100), /y value 'Spain' \(y_values_bbox\): y2 must be a finite number, got nothing/);
  assert.throws(() => resolveMetadata({ columns_bbox: { A: { x1: '0', y1: 0, x2: 5, y2: 5 } as never } }, 100, 100), /x1 must be a finite number, got "0"/);
});

test('a box that does not intersect the image is rejected, with a hint when it looks normalised', () => {
  assert.throws(() => resolveMetadata({ columns_bbox: { Far: { x1: 200, y1: 0, x2: 300, y2: 10 } } }, 100, 100), /column 'Far' \(columns_bbox\): box \(200,0\)–\(300,10\) in pixels lies outside the 100×100 image/);
  assert.throws(() => resolveMetadata({ columns_bbox: { Wins: { x1: 0.1, y1: 0.1, x2: 0.4, y2: 0.9 } } }, 100, 100), /set "unit": "normalized"/);
  // Touching the edge from outside is not intersecting: the box must share at least one pixel.
  assert.throws(() => resolveMetadata({ rows_bbox: { Edge: { x1: 0, y1: 100, x2: 10, y2: 120 } } }, 100, 100), /lies outside/);
});

test('a normalised box thinner than a pixel after conversion is rejected', () => {
  assert.throws(() => resolveMetadata({ unit: 'normalized', x_values_bbox: { a: { x1: 0.5, y1: 0, x2: 0.501, y2: 1 } } }, 100, 100), /less than one pixel wide or tall/);
});

test('malformed metadata objects and units are rejected with what was expected', () => {
  assert.throws(() => resolveMetadata({ unit: 'percent' as never }, 10, 10), /"unit" must be "pixels" or "normalized", got "percent"/);
  assert.throws(() => resolveMetadata({ columns_bbox: [] as never }, 10, 10), /columns_bbox must be an object mapping each column label to a box/);
  assert.throws(() => resolveMetadata({ columns_bbox: { ' ': { x1: 0, y1: 0, x2: 5, y2: 5 } } }, 10, 10), /empty label/);
  assert.throws(() => resolveMetadata(null as never, 10, 10), /metadata must be a JSON object/);
  assert.throws(() => resolveMetadata({}, 0, 10), /image size must be positive integers/);
});

test('bandFamiliesOf lists only families with at least one band', () => {
  const px = resolveMetadata({ columns_bbox: { A: { x1: 0, y1: 0, x2: 5, y2: 5 } }, rows_bbox: {} }, 10, 10);
  assert.deepEqual(bandFamiliesOf(px), ['columns']);
});
