import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dragToImageBox, imageBoxToDisplay } from '../../webview/playground/drag-box.js';

// Expected boxes worked out by hand: each corner divided by the display zoom, clamped to the
// image, then the left/top floored and the right/bottom ceiled.

test('an image shown at its size: the box covers every pixel the drag touched, whichever way it was dragged', () => {
  // 10.2 → 10, 20.7 → 20, 100.5 → 101, 80.1 → 81.
  assert.deepEqual(dragToImageBox({ x: 10.2, y: 20.7 }, { x: 100.5, y: 80.1 }, 1, 460, 220), [10, 20, 101, 81]);
  assert.deepEqual(dragToImageBox({ x: 100.5, y: 80.1 }, { x: 10.2, y: 20.7 }, 1, 460, 220), [10, 20, 101, 81]);
  assert.deepEqual(dragToImageBox({ x: 100.5, y: 20.7 }, { x: 10.2, y: 80.1 }, 1, 460, 220), [10, 20, 101, 81]);
});

test('an image shown zoomed: display pixels are divided by the zoom', () => {
  // A 112×54 image shown at 4×: 22/4 = 5.5 → 5, 18/4 = 4.5 → 4, 262/4 = 65.5 → 66, 182/4 = 45.5 → 46.
  assert.deepEqual(dragToImageBox({ x: 22, y: 18 }, { x: 262, y: 182 }, 4, 112, 54), [5, 4, 66, 46]);
  // At 3×: 121.5/3 = 40.5 → 40, 61.5/3 = 20.5 → 20, 300/3 = 100, 150/3 = 50.
  assert.deepEqual(dragToImageBox({ x: 121.5, y: 61.5 }, { x: 300, y: 150 }, 3, 122, 84), [40, 20, 100, 50]);
});

test('a drag that leaves the image is clamped to it; one wholly outside it, or a click, is no box', () => {
  // At 4× on 112×54: (300, 100) → (75, 25); (600, 400) → (150, 100), clamped to (112, 54).
  assert.deepEqual(dragToImageBox({ x: 300, y: 100 }, { x: 600, y: 400 }, 4, 112, 54), [75, 25, 112, 54]);
  // From above and left of the image: (−40, −40) → (0, 0); (8, 8) → (2, 2).
  assert.deepEqual(dragToImageBox({ x: -40, y: -40 }, { x: 8, y: 8 }, 4, 112, 54), [0, 0, 2, 2]);
  // At 3× on 122×84, past the bottom-right corner: (500, 400) → (166.7, 133.3), clamped to (122, 84).
  assert.deepEqual(dragToImageBox({ x: 121.5, y: 61.5 }, { x: 500, y: 400 }, 3, 122, 84), [40, 20, 122, 84]);
  // Right of a 448-px-wide display: x from 125 to 150, both clamped to 112: no width.
  assert.equal(dragToImageBox({ x: 500, y: 10 }, { x: 600, y: 50 }, 4, 112, 54), null);
  assert.equal(dragToImageBox({ x: 40, y: 40 }, { x: 40, y: 40 }, 4, 112, 54), null);
  assert.equal(dragToImageBox({ x: 10, y: 10 }, { x: 90, y: Number.NaN }, 4, 112, 54), null);
});

test('a box is drawn back over the shown image at the zoom', () => {
  assert.deepEqual(imageBoxToDisplay([5, 4, 66, 46], 4), { left: 20, top: 16, width: 244, height: 168 });
  assert.deepEqual(imageBoxToDisplay([0, 0, 30, 30], 1), { left: 0, top: 0, width: 30, height: 30 });
});
