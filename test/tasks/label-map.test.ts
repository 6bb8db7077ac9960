/**
 * The label map comes from the image's own pixels: text claims what it inks as it is painted,
 * whole-pixel rectangles claim their pixels, other shapes are measured in an atlas cell. These
 * tests show that no ink escapes it and that the checks built on it still fail when they must.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkGeometry } from '../../env/tasks/check.js';
import { buildTask, GENERATED_KINDS } from '../../env/tasks/generate.js';
import { CONFLICT, NO_INK, renderWithLabelMap } from '../../env/tasks/label-map.js';
import { placeText } from '../../env/tasks/place-text.js';
import { isMark, rectsPaint, type Mark, type Scene } from '../../env/tasks/scene.js';
import { circle } from '../../env/tasks/svg.js';
import type { BBox } from '../../env/tools/metadata.js';

/** The scene with every label's text left out (its shapes kept). */
function withoutText(scene: Scene): Scene {
  return { ...scene, layers: scene.layers.map((l) => (isMark(l) ? { ...l, draw: (fill: string | null) => ({ ...l.draw(fill), text: [] }) } : l)) };
}

test('every pixel a label inks in the image is claimed by a mark in the label map, for every kind', async () => {
  for (const kind of GENERATED_KINDS) {
    for (const difficulty of [1, 4] as const) {
      const { scene } = buildTask({ seed: 21, split: 'train', index: difficulty, attempt: 0, kind, difficulty, imageSize: null });
      const { image, labelMap } = await renderWithLabelMap(scene);
      const bare = (await renderWithLabelMap(withoutText(scene))).image;
      let inked = 0;
      for (let p = 0; p < labelMap.ids.length; p++) {
        const o = p * 3;
        if (image.data[o] === bare.data[o] && image.data[o + 1] === bare.data[o + 1] && image.data[o + 2] === bare.data[o + 2]) continue;
        inked++;
        assert.notEqual(labelMap.ids[p], NO_INK, `${kind} d${difficulty}: pixel (${p % image.width}, ${Math.floor(p / image.width)}) was inked by text no mark claims`);
      }
      assert.ok(inked > 100, `${kind} d${difficulty}: only ${inked} text pixels`);
    }
  }
});

function textMark(name: string, owner: string, at: { x: number; y: number }, shiftX = 0): Mark {
  const t = placeText(name, { fontSize: 14 }, { x: at.x, y: at.y, h: 'left', v: 'top' });
  return { name: `label "${name}"`, owners: { columns: owner }, draw: (fill) => ({ shapes: [], text: [{ ...t.run(fill ?? '#222222'), x: t.run('#000000').x + shiftX }] }) };
}

test('a label drawn off the box its layout estimated is caught: its ink leaves its band', async () => {
  // The band is made from the estimate; the label is drawn 9 px to the right of it, as a wrong metric would.
  const estimate = placeText('Wins', { fontSize: 14 }, { x: 20, y: 20, h: 'left', v: 'top' }).box;
  const band: BBox = { x1: Math.floor(estimate.x1) - 3, y1: Math.floor(estimate.y1) - 3, x2: Math.ceil(estimate.x2) + 3, y2: Math.ceil(estimate.y2) + 3 };
  const meta = { unit: 'pixels' as const, source: 'generator' as const, columns_bbox: { Wins: band } };
  const scene = (shift: number): Scene => ({ width: 160, height: 60, background: '#ffffff', layers: [textMark('Wins', 'Wins', { x: 20, y: 20 }, shift)], meta });
  assert.deepEqual(checkGeometry((await renderWithLabelMap(scene(0))).labelMap, meta), []);
  const messages = checkGeometry((await renderWithLabelMap(scene(9))).labelMap, meta).map((i) => i.message);
  assert.ok(messages.some((m) => /label "Wins" ink .* is not inside its columns band 'Wins'/.test(m)), messages.join('\n'));
});

test('a label printed over a bar, or two bars that overlap, are an overlap: their shared pixels belong to neither', async () => {
  const bar: Mark = { name: 'bar "A"', owners: {}, draw: (fill) => rectsPaint([{ x: 30, y: 10, width: 20, height: 60, fill: fill ?? '#4e79a7' }]) };
  const label = placeText('88', { fontSize: 12 }, { x: 34, y: 30, h: 'left', v: 'top' });
  const value: Mark = { name: 'value label "88"', owners: {}, draw: (fill) => label.paint(fill ?? '#222222') };
  const meta = { unit: 'pixels' as const, source: 'generator' as const };
  // A second bar over the first: its rows are no longer clear, so they are claimed pixel by pixel.
  const other: Mark = { name: 'bar "B"', owners: {}, draw: (fill) => rectsPaint([{ x: 45, y: 60, width: 20, height: 20, fill: fill ?? '#f28e2b' }]) };
  for (const layers of [[bar, value], [value, bar], [bar, other]]) {
    const { labelMap } = await renderWithLabelMap({ width: 100, height: 90, background: '#ffffff', layers, meta });
    assert.ok(labelMap.conflicts > 0);
    assert.ok(labelMap.ids.includes(CONFLICT));
    const messages = checkGeometry(labelMap, meta).map((i) => i.message);
    assert.ok(messages.some((m) => /the ink of two marks overlaps/.test(m)), messages.join('\n'));
  }
});

test('a shape mark whose bounds are too small is still measured in full, over the whole canvas', async () => {
  const dot = (bounds: BBox): Mark => ({ name: 'point', owners: {}, draw: (fill) => ({ shapes: [{ svg: circle(50.5, 40.25, 9, fill ?? '#e15759'), bounds }], text: [] }) });
  const meta = { unit: 'pixels' as const, source: 'generator' as const };
  const scene = (bounds: BBox): Scene => ({ width: 120, height: 90, background: '#ffffff', layers: [dot(bounds)], meta });
  const right = (await renderWithLabelMap(scene({ x1: 41.5, y1: 31.25, x2: 59.5, y2: 49.25 }))).labelMap;
  const short = (await renderWithLabelMap(scene({ x1: 48, y1: 38, x2: 52, y2: 42 }))).labelMap;
  assert.deepEqual(short.extents, right.extents);
  assert.deepEqual([...short.ids], [...right.ids]);
  const e = right.extents[0]!;
  assert.ok(e.x1 <= 42 && e.x2 >= 59 && e.y1 <= 32 && e.y2 >= 49, JSON.stringify(e));
});

test('a line chart’s points are measured on their own pixels, within their circles’ bounds', async () => {
  const { scene } = buildTask({ seed: 4, split: 'train', index: 2, attempt: 0, kind: 'line', difficulty: 2, imageSize: null });
  const { image, labelMap } = await renderWithLabelMap(scene);
  const points = labelMap.marks.flatMap((m, id) => (m.name.startsWith('points of') ? [id] : []));
  assert.ok(points.length >= 4);
  for (const id of points) {
    const mark = labelMap.marks[id]!;
    const bounds = (mark.draw('#000000').shapes[0] as { bounds: BBox }).bounds;
    let count = 0, white = 0;
    for (let p = 0; p < labelMap.ids.length; p++) {
      if (labelMap.ids[p] !== id) continue;
      count++;
      const x = p % image.width, y = Math.floor(p / image.width);
      assert.ok(x >= Math.floor(bounds.x1) && x < Math.ceil(bounds.x2) && y >= Math.floor(bounds.y1) && y < Math.ceil(bounds.y2), `${mark.name} claims (${x}, ${y}) outside its circles`);
      const o = p * 3;
      if (image.data[o] === 255 && image.data[o + 1] === 255 && image.data[o + 2] === 255) white++;
    }
    // Only the faintest anti-aliased rim can round to white in colour; the rest is the point.
    assert.ok(count > 10 && white <= count * 0.1, `${mark.name}: ${count} pixels, ${white} white`);
  }
});
