import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DIFF_COLOUR, pixelDifference } from '../../webview/shared/image-diff.js';
import { fieldKind, parseList, parsePointRef } from '../../webview/playground/schema-form.js';
import { listTools } from '../../env/tools/registry.js';

test('the difference overlay marks exactly the pixels whose colour changed beyond the threshold', () => {
  const width = 3;
  const height = 1;
  const before = new Uint8ClampedArray([255, 255, 255, 255, 10, 10, 10, 255, 100, 100, 100, 255]);
  const after = new Uint8ClampedArray([255, 255, 255, 255, 200, 10, 10, 255, 105, 100, 100, 255]);
  const diff = pixelDifference(before, after, width, height);
  assert.equal(diff.changed, 1);
  assert.equal(diff.total, 3);
  assert.deepEqual([...diff.overlay.slice(4, 8)], [...DIFF_COLOUR, 255]);
  assert.notDeepEqual([...diff.overlay.slice(8, 11)], [...DIFF_COLOUR]);
});

test('images of different sizes are refused with both sizes named', () => {
  assert.throws(() => pixelDifference(new Uint8ClampedArray(16), new Uint8ClampedArray(12), 2, 2), /2×2 RGBA \(16 bytes\), got 16 and 12/);
});

test('every registered tool\'s arguments get a form field: labels where metadata has them, tuples for bbox, numbers for coordinates', () => {
  const kinds = Object.fromEntries(listTools().flatMap((tool) => Object.entries(tool.parameters.properties).map(([name, schema]) => [`${tool.name}.${name}`, fieldKind(schema, name === 'columns' ? ['Rider'] : undefined)])));
  assert.equal(kinds['focus_on_columns_with_mask.columns'], 'labels');
  assert.equal(kinds['focus_on_rows_with_draw.rows'], 'string-list');
  assert.equal(kinds['zoom_in.bbox'], 'number-tuple');
  assert.equal(kinds['zoom_in.factor'], 'number');
  assert.equal(kinds['mark_point.x'], 'number');
  assert.equal(kinds['mark_point.point'], 'point');
  assert.equal(kinds['draw_line.through'], 'point-pair');
  assert.equal(kinds['draw_circle.center'], 'point');
  assert.equal(kinds['draw_circle.radius'], 'number');
  assert.ok(Object.values(kinds).every((k) => k !== 'json'), 'no tool argument should fall back to raw JSON');
});

test('comma lists are trimmed and empty pieces dropped', () => {
  assert.deepEqual(parseList(' Rider, Wins ,, Team '), ['Rider', 'Wins', 'Team']);
  assert.deepEqual(parseList(''), []);
});

test('a point is typed as a label or as coordinates', () => {
  assert.equal(parsePointRef(' A '), 'A');
  assert.deepEqual(parsePointRef('120, 45'), [120, 45]);
  assert.deepEqual(parsePointRef('[12.5 7]'), [12.5, 7]);
  assert.equal(parsePointRef('  '), undefined);
});
