import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { orientedBox } from '../../env/grounding/detect-text.js';
import { boxIou, scoreBands, summarise } from '../../env/grounding/evaluate.js';
import { splitHalfway } from '../../env/grounding/layout-plan.js';
import { resolveLookalikes } from '../../env/grounding/lookalikes.js';
import { convexHull, minAreaRect } from '../../env/grounding/min-area-rect.js';
import { decodeCtc } from '../../env/grounding/recognize-text.js';
import type { ReadCharacter } from '../../env/grounding/types.js';

test('minAreaRect of an upright rectangle\'s corners is that rectangle, axis along x', () => {
  const r = minAreaRect([{ x: 10, y: 20 }, { x: 110, y: 20 }, { x: 110, y: 50 }, { x: 10, y: 50 }, { x: 60, y: 35 }]);
  assert.deepEqual(r.center, { x: 60, y: 35 });
  assert.equal(Math.abs(r.axis.y), 0);
  assert.deepEqual([r.width, r.height].sort((a, b) => a - b), [30, 100]);
});

test('minAreaRect finds a rectangle rotated by 45° and its true side lengths', () => {
  const c = Math.SQRT1_2;
  // A 40 × 10 rectangle centred at (100, 100), long side along (c, -c).
  const corners = [[-20, -5], [20, -5], [20, 5], [-20, 5]].map(([u, v]) => ({ x: 100 + (u as number) * c + (v as number) * c, y: 100 - (u as number) * c + (v as number) * c }));
  const r = minAreaRect(corners);
  assert.ok(Math.abs(r.center.x - 100) < 1e-9 && Math.abs(r.center.y - 100) < 1e-9);
  const sides = [r.width, r.height].sort((a, b) => a - b);
  assert.ok(Math.abs((sides[0] as number) - 10) < 1e-9 && Math.abs((sides[1] as number) - 40) < 1e-9, JSON.stringify(r));
});

test('the convex hull contains every point and is no larger than their bounding box', () => {
  fc.assert(
    fc.property(fc.array(fc.record({ x: fc.integer({ min: -50, max: 50 }), y: fc.integer({ min: -50, max: 50 }) }), { minLength: 3, maxLength: 40 }), (points) => {
      const hull = convexHull(points);
      const cross = (o: { x: number; y: number }, a: { x: number; y: number }, b: { x: number; y: number }) => (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
      if (hull.length < 3) return true; // collinear input
      for (const p of points) {
        for (let i = 0; i < hull.length; i++) assert.ok(cross(hull[i]!, hull[(i + 1) % hull.length]!, p) >= 0, 'counter-clockwise hull with every point on the inside');
      }
      return true;
    }),
  );
});

test('orientedBox reads long upright boxes left to right and tall narrow ones bottom to top', () => {
  const flat = orientedBox({ x: 50, y: 10 }, { x: 1, y: 0 }, 80, 20);
  assert.deepEqual([flat.direction, flat.normal, flat.length, flat.thickness], [{ x: 1, y: 0 }, { x: 0, y: 1 }, 80, 20]);
  const standing = orientedBox({ x: 50, y: 10 }, { x: 1, y: 0 }, 20, 80);
  assert.deepEqual([standing.direction, standing.normal, standing.length, standing.thickness], [{ x: 0, y: -1 }, { x: 1, y: 0 }, 80, 20]);
  const digit = orientedBox({ x: 5, y: 5 }, { x: 1, y: 0 }, 14, 18);
  assert.deepEqual(digit.direction, { x: 1, y: 0 }, 'a near-square box (a lone "7") is upright text');
  const tilted = orientedBox({ x: 5, y: 5 }, { x: Math.SQRT1_2, y: -Math.SQRT1_2 }, 60, 12);
  assert.ok(tilted.direction.x > 0 && tilted.direction.y < 0, 'slanted text reads up and to the right');
});

test('splitHalfway cuts half-way between centres and reaches half a spacing beyond the ends (ReFocus)', () => {
  assert.deepEqual(splitHalfway([100, 200, 300], 50), [[50, 150], [150, 250], [250, 350]]);
  assert.deepEqual(splitHalfway([100, 120, 200], 50), [[90, 110], [110, 160], [160, 240]]);
  assert.deepEqual(splitHalfway([40], 30), [[25, 55]]);
  assert.deepEqual(splitHalfway([], 30), []);
});

test('boxIou: identical boxes 1, disjoint 0, a half overlap 1/3', () => {
  const a = { x1: 0, y1: 0, x2: 10, y2: 10 };
  assert.equal(boxIou(a, a), 1);
  assert.equal(boxIou(a, { x1: 10, y1: 0, x2: 20, y2: 10 }), 0);
  assert.equal(boxIou(a, { x1: 5, y1: 0, x2: 15, y2: 10 }), 1 / 3);
});

test('scoreBands pairs each true band with the predicted band over it, whatever its label, and counts extras', () => {
  const truth = { columns_bbox: { Wins: { x1: 0, y1: 0, x2: 10, y2: 100 }, Team: { x1: 10, y1: 0, x2: 20, y2: 100 }, Year: { x1: 20, y1: 0, x2: 30, y2: 100 } } };
  const predicted = { columns_bbox: { Wins: { x1: 0, y1: 0, x2: 10, y2: 100 }, Tearn: { x1: 11, y1: 0, x2: 20, y2: 100 }, Note: { x1: 40, y1: 0, x2: 50, y2: 100 } } };
  const { labels, extra } = scoreBands(truth, predicted);
  assert.deepEqual(labels.map((l) => [l.truth, l.predicted]), [['Wins', 'Wins'], ['Team', 'Tearn'], ['Year', null]]);
  assert.equal(labels[1]?.iou, 0.9);
  assert.equal(extra, 1);
  const summary = summarise([{ id: 'a', kind: 'table', difficulty: 1, found: 'table', labels, extra, ms: 10 }]).table!;
  assert.equal(summary.labelRecall, 2 / 3);
  assert.equal(summary.textExact, 1 / 3);
  assert.equal(summary.goodIou, 2 / 3);
  assert.equal(summary.meanIou, (1 + 0.9 + 0) / 3);
});

test('greedy CTC collapses repeats, drops blanks, keeps a letter repeated across a blank, and places characters', () => {
  const classes = ['', 'a', 'b', ' '];
  // Steps: a a _ a b b _ → "aab"; four probabilities per step.
  const rows = [[0, 0.9, 0.1, 0], [0, 0.8, 0.2, 0], [0.9, 0.1, 0, 0], [0.1, 0.7, 0.2, 0], [0, 0.1, 0.9, 0], [0, 0, 0.95, 0.05], [1, 0, 0, 0]];
  const probs = Float32Array.from(rows.flat());
  const read = decodeCtc(probs, 0, rows.length, 4, classes, null, 8);
  assert.equal(read.text, 'aab');
  assert.deepEqual(read.characters.map((c) => c.offset), [8, 28, 40], 'centre of each run of steps, 8 px per step');
  assert.deepEqual(read.characters[0]?.alternative, { text: 'b', probability: Math.fround(0.1) });
  const onlyA = decodeCtc(probs, 0, rows.length, 4, classes, Uint8Array.from([1, 1, 0, 0]), 8);
  // With 'b' masked, step 4 reads 'a' (joining the 'a' before it) and step 5 a blank.
  assert.equal(onlyA.text, 'aa', 'a masked class is never answered');
  assert.ok(onlyA.characters.every((c) => c.text === 'a'));
});

function chars(text: string, unsure: Record<number, string> = {}): ReadCharacter[] {
  return [...text].map((t, i) => ({ text: t, offset: i * 8, halfSpan: 4, probability: 0.7, ...(unsure[i] ? { alternative: { text: unsure[i] as string, probability: 0.25 } } : {}) }));
}

const join = (cs: ReadCharacter[]) => cs.map((c) => c.text).join('');

test('look-alikes: an unsure word-initial l before small letters is I; an unsure I after small letters is l', () => {
  assert.equal(join(resolveLookalikes(chars('lvo', { 0: 'I' }))), 'Ivo');
  assert.equal(join(resolveLookalikes(chars('FulI', { 2: 'I', 3: 'l' }))), 'Full');
  assert.equal(join(resolveLookalikes(chars('IIl', { 2: 'I' }))), 'III');
  assert.equal(join(resolveLookalikes(chars('Eli', { 1: 'I' }))), 'Eli', 'l between a capital and a small letter stays');
  assert.equal(join(resolveLookalikes(chars('lvo'))), 'lvo', 'no swap when the recogniser had no doubt');
});

test('look-alikes with titleCase: an unsure first letter shaped like its capital becomes the capital', () => {
  assert.equal(join(resolveLookalikes(chars('oct', { 0: 'O' }), true)), 'Oct');
  assert.equal(join(resolveLookalikes(chars('oct', { 0: 'O' }), false)), 'oct');
  assert.equal(join(resolveLookalikes(chars('apr', { 0: 'A' }), true)), 'apr', 'only letters whose capital is the same shape');
});
