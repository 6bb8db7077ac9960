import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rasterise } from '../../env/tasks/scene.js';
import { placeText } from '../../env/tasks/place-text.js';
import { primitiveSvg } from '../../env/tasks/svg.js';
import { taskStream } from '../../env/tasks/prng.js';
import { DEJAVU_SANS_REGULAR } from '../../env/tasks/fonts/dejavu-sans-metrics.js';

/** Bounding box of every non-white pixel, half-open. */
function inkBox(data: Buffer, width: number, height: number) {
  let x1 = Infinity, y1 = Infinity, x2 = -1, y2 = -1;
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    const i = (y * width + x) * 3;
    if (data[i] !== 255 || data[i + 1] !== 255 || data[i + 2] !== 255) {
      x1 = Math.min(x1, x); y1 = Math.min(y1, y); x2 = Math.max(x2, x + 1); y2 = Math.max(y2, y + 1);
    }
  }
  return { x1, y1, x2, y2 };
}

test('the glyph table never understates where sharp puts a label’s ink, flat or rotated, regular or bold', async () => {
  const rng = taskStream(5, 'test', 0, 0);
  const chars = Object.keys(DEJAVU_SANS_REGULAR).filter((c) => c !== ' ');
  const cases = Array.from({ length: 24 }, (_, i) => ({
    text: Array.from({ length: rng.int(1, 14) }, () => rng.pick(chars)).join(''),
    fontSize: rng.pick([7, 8.5, 11, 13, 16, 22]),
    weight: i % 3 === 0 ? ('bold' as const) : ('normal' as const),
    rotate: i % 4 === 0 ? rng.pick([45, 90]) : 0,
  }));
  const width = 420, height = 420;
  for (const c of cases) {
    const placed = placeText(c.text, { fontSize: c.fontSize, weight: c.weight, rotate: c.rotate }, { x: 210.3, y: 210.6, h: 'center', v: 'middle' });
    const image = await rasterise(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${primitiveSvg(placed.draw('#000000'))}</svg>`);
    const ink = inkBox(image.data, width, height);
    const box = placed.box;
    assert.ok(ink.x2 > 0, `no ink for ${JSON.stringify(c)}`);
    assert.ok(ink.x1 >= Math.floor(box.x1) && ink.x2 <= Math.ceil(box.x2) && ink.y1 >= Math.floor(box.y1) && ink.y2 <= Math.ceil(box.y2),
      `ink ${JSON.stringify(ink)} escapes the estimate ${JSON.stringify(box)} for ${JSON.stringify(c)}`);
    // And the estimate is not absurdly loose: within a few pixels plus 10% of the ink width.
    const slackX = (box.x2 - box.x1) - (ink.x2 - ink.x1);
    assert.ok(slackX <= 6 + 0.15 * (ink.x2 - ink.x1) + (c.rotate ? c.fontSize : 0), `estimate is ${slackX.toFixed(1)} px wider than the ink for ${JSON.stringify(c)}`);
  }
});
