import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderWithLabelMap } from '../../env/tasks/paint.js';
import { renderWithLabelMapSvg } from '../../env/tasks/label-map-svg.js';
import { CONFLICT, labelMapFromIds } from '../../env/tasks/label-map.js';
import { measureText } from '../../env/tasks/text-metrics.js';
import { taskStream } from '../../env/tasks/prng.js';
import type { Scene } from '../../env/tasks/scene.js';
import { text, type Primitive, type TextPrimitive } from '../../env/tasks/svg.js';

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
  // Summarised from the painter's search boxes and conflict tally: the same as a full scan of its ids.
  const full = labelMapFromIds(scene.width, scene.height, ours.marks, ours.ids);
  assert.deepEqual([ours.extents, ours.conflicts, ours.firstConflict], [full.extents, full.conflicts, full.firstConflict]);
});

/**
 * The painter's coverage rules (paint.ts's header), written the plain way: every pixel of the
 * image, every primitive, the formula as stated. The painter's loops (solid runs, skipped square
 * roots, a stroke's touched pixels only) must give exactly these pixels and owners.
 */
function referencePaint(scene: Scene): { data: Uint8Array; ids: Int32Array } {
  const { width, height } = scene;
  const data = new Uint8Array(width * height * 3).fill(255);
  const ids = new Int32Array(width * height).fill(-1);
  const hex = (c: string) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  let markIndex = 0;
  for (const layer of scene.layers) {
    const isMark = 'owners' in layer;
    const mark = isMark ? markIndex++ : -1;
    for (const p of isMark ? layer.draw(null) : [layer]) {
      if (p.kind === 'text') throw new Error('the reference paints shapes only');
      const colour = hex(p.kind === 'polyline' ? p.stroke : p.fill);
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          let cover: number;
          if (p.kind === 'rect') {
            cover = Math.max(0, Math.min(x + 1, p.x + p.width) - Math.max(x, p.x)) * Math.max(0, Math.min(y + 1, p.y + p.height) - Math.max(y, p.y));
          } else if (p.kind === 'circle') {
            cover = Math.min(1, Math.max(0, p.r + 0.5 - Math.hypot(x + 0.5 - p.cx, y + 0.5 - p.cy)));
          } else {
            cover = 0;
            for (let s = 0; s < Math.max(1, p.points.length - 1); s++) {
              const [ax, ay] = p.points[s] as readonly [number, number];
              const [bx, by] = (p.points[s + 1] ?? p.points[s]) as readonly [number, number];
              const dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy;
              const px = x + 0.5 - ax, py = y + 0.5 - ay;
              const t = len2 === 0 ? 0 : Math.min(1, Math.max(0, (px * dx + py * dy) / len2));
              cover = Math.max(cover, Math.min(1, Math.max(0, p.width / 2 + 0.5 - Math.hypot(px - t * dx, py - t * dy))));
            }
          }
          const a = Math.round(cover * 255);
          if (a === 0) continue;
          const i = (y * width + x) * 3;
          for (let c = 0; c < 3; c++) data[i + c] = a >= 255 ? (colour[c] as number) : Math.floor(((data[i + c] as number) * (255 - a) + (colour[c] as number) * a + 127) / 255);
          if (mark < 0) continue;
          const owner = ids[y * width + x] as number;
          ids[y * width + x] = owner === -1 || owner === mark ? mark : CONFLICT;
        }
      }
    }
  }
  return { data, ids };
}

test('rects, circles and strokes are painted exactly as the coverage rules say, owners and conflicts included', async () => {
  const rng = taskStream(5, 'test', 0, 0);
  let roundsWithConflicts = 0;
  for (let round = 0; round < 12; round++) {
    const shapes = (): Scene['layers'][number] => {
      const kind = rng.pick(['rect', 'circle', 'polyline'] as const);
      const colour = rng.pick(['#336699', '#cc3311', '#777777', '#20a060']);
      const at = () => rng.next() * 90 - 5;
      if (kind === 'rect') return { kind, x: at(), y: at() * 0.6, width: rng.next() * 30, height: rng.next() * 20 + (rng.chance(0.5) ? 0 : 0.5), fill: colour };
      if (kind === 'circle') return { kind, cx: at(), cy: at() * 0.6, r: 0.5 + rng.next() * 6, fill: colour };
      return { kind, points: Array.from({ length: rng.int(1, 5) }, () => [at(), at() * 0.6] as const), stroke: colour, width: 0.5 + rng.next() * 3 };
    };
    const layers: Scene['layers'] = [];
    for (let i = 0; i < 8; i++) {
      const primitive = shapes();
      layers.push(rng.chance(0.5) ? primitive as Primitive : { name: `mark ${i}`, owners: {}, draw: () => [primitive as Primitive] });
    }
    // Whole-pixel rects take the solid-run path.
    const bar: Primitive = { kind: 'rect', x: rng.int(0, 40), y: rng.int(0, 20), width: rng.int(1, 40), height: rng.int(1, 30), fill: '#112233' };
    layers.push({ name: 'bar', owners: {}, draw: () => [bar] });
    const scene: Scene = { width: 90, height: 56, background: '#ffffff', layers, meta: { unit: 'pixels', source: 'generator' } };
    const ours = await renderWithLabelMap(scene);
    const ref = referencePaint(scene);
    assert.ok(Buffer.from(ref.data).equals(ours.image.data), `round ${round}: pixels differ from the reference`);
    assert.deepEqual(ours.labelMap.ids, ref.ids, `round ${round}: owners differ from the reference`);
    // The label map the painter summarises from its search boxes and conflict tally equals a full scan of the ids.
    const full = labelMapFromIds(scene.width, scene.height, ours.labelMap.marks, ref.ids);
    assert.deepEqual([ours.labelMap.extents, ours.labelMap.conflicts, ours.labelMap.firstConflict], [full.extents, full.conflicts, full.firstConflict]);
    if (full.conflicts > 0) roundsWithConflicts++;
  }
  assert.ok(roundsWithConflicts >= 3, `only ${roundsWithConflicts} rounds had overlapping marks`);
});

test('shapes on the half-pixel grid drawn again elsewhere, and runs of whole-pixel rects, are painted exactly as the coverage rules say', async () => {
  const rng = taskStream(9, 'test', 0, 0);
  for (let round = 0; round < 6; round++) {
    const width = 120, height = 80;
    const layers: Scene['layers'] = [];
    // A texture of whole-pixel rects, some past the canvas's edges, overlapping (the later wins), in a few runs.
    for (let run = 0; run < 3; run++) {
      for (let i = 0; i < 25; i++) {
        const grey = rng.int(150, 240).toString(16).padStart(2, '0');
        layers.push({ kind: 'rect', x: rng.int(-20, width), y: rng.int(-10, height), width: rng.int(1, 50), height: rng.int(1, 30), fill: rng.chance(0.3) ? '#20a060' : `#${grey}${grey}${grey}` });
      }
      // A rect off the whole-pixel grid ends the run.
      layers.push({ kind: 'rect', x: rng.int(0, 100) + 0.5, y: rng.int(0, 60), width: 7.25, height: 9, fill: '#cc3311' });
    }
    // A few templates, each drawn at several whole-pixel offsets: the first draw computes its coverage, the rest reuse it.
    const side = 2 * rng.int(4, 9) + 1;
    const circle = (x: number, y: number): Primitive => ({ kind: 'circle', cx: x + side / 2, cy: y + side / 2, r: (side - 1) / 2, fill: '#336699' });
    const triangle = (x: number, y: number): Primitive => ({ kind: 'polyline', points: [[x + side / 2, y + 2.5], [x + side - 2.5, y + side - 2.5], [x + 2.5, y + side - 2.5], [x + side / 2, y + 2.5]], stroke: '#cc3311', width: 4 });
    // The triangle upside down: the same x coordinates, other y coordinates.
    const vee = (x: number, y: number): Primitive => ({ kind: 'polyline', points: [[x + side / 2, y + side - 2.5], [x + side - 2.5, y + 2.5], [x + 2.5, y + 2.5], [x + side / 2, y + side - 2.5]], stroke: '#8c4fbf', width: 4 });
    const pebble = (x: number, y: number): Primitive => ({ kind: 'circle', cx: x + 0.5, cy: y + rng.pick([0, 0.5]), r: rng.int(4, 8) / 2, fill: '#777777' });
    for (let i = 0; i < 18; i++) {
      const make = rng.pick([circle, triangle, vee, pebble]);
      // Some reach past the edge (clipped: painted without the reused coverage).
      const primitive = make(rng.int(-6, width - side + 6), rng.int(-6, height - side + 6));
      layers.push(rng.chance(0.6) ? { name: `mark ${i}`, owners: {}, draw: () => [primitive] } : primitive);
    }
    const scene: Scene = { width, height, background: '#ffffff', layers, meta: { unit: 'pixels', source: 'generator' } };
    const ours = await renderWithLabelMap(scene);
    const ref = referencePaint(scene);
    assert.ok(Buffer.from(ref.data).equals(ours.image.data), `round ${round}: pixels differ from the reference`);
    assert.deepEqual(ours.labelMap.ids, ref.ids, `round ${round}: owners differ from the reference`);
    const full = labelMapFromIds(width, height, ours.labelMap.marks, ref.ids);
    assert.deepEqual([ours.labelMap.extents, ours.labelMap.conflicts, ours.labelMap.firstConflict], [full.extents, full.conflicts, full.firstConflict]);
  }
});
