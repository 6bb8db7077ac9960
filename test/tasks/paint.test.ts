import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderWithLabelMap } from '../../env/tasks/paint.js';
import { renderWithLabelMapSvg } from '../../env/tasks/label-map-svg.js';
import { CONFLICT } from '../../env/tasks/label-map.js';
import { measureText } from '../../env/tasks/text-metrics.js';
import { taskStream } from '../../env/tasks/prng.js';
import type { Scene } from '../../env/tasks/scene.js';
import { text, type TextPrimitive } from '../../env/tasks/svg.js';

function oneLabel(t: TextPrimitive, width = 320, height = 120): Scene {
  return { width, height, background: '#ffffff', layers: [{ name: 'label', owners: {}, draw: (f) => [{ ...t, fill: f ?? t.fill }] }], meta: { unit: 'pixels', source: 'generator' } };
}

const STRINGS = ['Revenue (million $)', 'Ana Berg', 'Wireless Puzzle Nord', '1234.5', 'Quick Stool III', 'Eolo', 'Größe µ 42%'];

test('a composited label inks where the glyph table says, within 1 px on every side', async () => {
  const rng = taskStream(3, 'test', 0, 0);
  for (const content of STRINGS) {
    const fontSize = rng.pick([7, 8.5, 11, 13, 16]);
    const weight = rng.chance(0.3) ? 'bold' as const : 'normal' as const;
    const x = 10 + rng.next(), y = 60 + rng.next();
    const { labelMap } = await renderWithLabelMap(oneLabel(text(x, y, content, '#222222', { fontSize, weight })));
    const e = measureText(content, fontSize, weight);
    const ink = labelMap.extents[0];
    assert.ok(ink, `no ink for ${content}`);
    const expected = { x1: x + e.left, x2: x + e.right, y1: y + e.top, y2: y + e.bottom };
    for (const side of ['x1', 'x2', 'y1', 'y2'] as const) {
      assert.ok(Math.abs(ink[side] - expected[side]) <= 1.01, `${content} at ${fontSize}px ${weight}: ink ${side} ${ink[side]} vs the table's ${expected[side].toFixed(2)}`);
    }
  }
});

test('text from the glyph cache matches pango drawing the same string: same ink box within 1 px, small mean difference', async () => {
  for (const [i, content] of STRINGS.entries()) {
    for (const rotate of [0, -45, -90]) {
      const t = text(rotate ? 160 : 10.3, rotate ? 200 : 40.6, content, '#000000', { fontSize: 11 + (i % 3) * 2.5, rotate });
      const scene = oneLabel(t, 320, 240);
      const ours = await renderWithLabelMap(scene);
      const pango = await renderWithLabelMapSvg(scene);
      const a = ours.labelMap.extents[0];
      const b = pango.labelMap.extents[0];
      assert.ok(a && b);
      // Pango kerns (pairs such as "Ve", "Wi" pull together) and we do not; the far end of a long string may drift by a pixel or two.
      const drift = Math.ceil(content.length / 8);
      for (const side of ['x1', 'y1'] as const) assert.ok(Math.abs(a[side] - b[side]) <= 1, `${content} @${rotate}: ${side} ${a[side]} vs pango ${b[side]}`);
      for (const side of ['x2', 'y2'] as const) assert.ok(Math.abs(a[side] - b[side]) <= 1 + drift, `${content} @${rotate}: ${side} ${a[side]} vs pango ${b[side]}`);
      // Mean absolute difference over the label's box, in grey levels (0–255): measured 0.4–34.4 on these strings (most from pango kerning and hinting shifting glyphs by a fraction of a pixel; ink boxes agreed within 1 px), bounded at 40.
      let sum = 0, count = 0;
      for (let y = Math.min(a.y1, b.y1); y < Math.max(a.y2, b.y2); y++) {
        for (let x = Math.min(a.x1, b.x1); x < Math.max(a.x2, b.x2); x++) {
          sum += Math.abs((ours.image.data[(y * 320 + x) * 3] as number) - (pango.image.data[(y * 320 + x) * 3] as number));
          count++;
        }
      }
      assert.ok(sum / count <= 40, `${content} @${rotate}: mean difference ${(sum / count).toFixed(1)} grey levels`);
    }
  }
});

test('the painted label map marks pixels two marks cover as conflicts, as the librsvg code renders do', async () => {
  const a = text(20, 40, 'Overlap', '#000000', { fontSize: 14 });
  const b = text(24, 42, 'Overlap', '#000000', { fontSize: 14 });
  const scene: Scene = {
    width: 120, height: 70, background: '#ffffff',
    layers: [
      { name: 'A', owners: {}, draw: (f) => [{ ...a, fill: f ?? a.fill }] },
      { name: 'B', owners: {}, draw: (f) => [{ ...b, fill: f ?? b.fill }] },
      { name: 'bar', owners: {}, draw: (f) => [{ kind: 'rect', x: 100.5, y: 10, width: 10, height: 20, fill: f ?? '#336699' }] },
    ],
    meta: { unit: 'pixels', source: 'generator' },
  };
  const ours = (await renderWithLabelMap(scene)).labelMap;
  const ref = (await renderWithLabelMapSvg(scene)).labelMap;
  assert.ok(ours.conflicts > 0 && ref.conflicts > 0);
  assert.ok(ours.ids.includes(CONFLICT));
  // The bar: an exact rect, half-covered columns at its left and right edge; same box as librsvg's.
  assert.deepEqual(ours.extents[2], { x1: 100, y1: 10, x2: 111, y2: 30 });
  assert.deepEqual(ours.extents[2], ref.extents[2]);
});
