/**
 * A scene of whole-pixel rectangles is filled without librsvg; these tests hold the two to byte
 * equality, on random rectangles and on the scenes the layouts really make.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fillRects, isPixelRect } from '../../env/tasks/fill-rects.js';
import { buildTask, GENERATED_KINDS } from '../../env/tasks/generate.js';
import { taskStream } from '../../env/tasks/prng.js';
import { isMark, rasteriseOpaque, rectShape, shapeSvg, type Rect, type Scene, type Shape } from '../../env/tasks/scene.js';

function viaLibrsvg(width: number, height: number, shapes: readonly Shape[]): Promise<{ data: Buffer }> {
  return rasteriseOpaque(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${shapes.map(shapeSvg).join('')}</svg>`);
}

/** The scene's shapes in paint order, background first: what the image is made of before its text. */
function sceneShapes(scene: Scene): Shape[] {
  return [rectShape(0, 0, scene.width, scene.height, scene.background), ...scene.layers.flatMap((l) => (isMark(l) ? l.draw(null).shapes : [l]))];
}

test('whole-pixel rectangles filled in a loop are byte-identical to librsvg’s, overlapping and clipped at the edges', async () => {
  const rng = taskStream(3, 'test', 0, 0);
  for (let round = 0; round < 12; round++) {
    const width = rng.int(20, 300);
    const height = rng.int(20, 200);
    const rects: Rect[] = [{ x: 0, y: 0, width, height, fill: '#ffffff' }];
    for (let i = 0; i < 30; i++) {
      rects.push({
        x: rng.int(-20, width), y: rng.int(-20, height), width: rng.int(0, width), height: rng.int(0, 40),
        fill: `#${Array.from({ length: 3 }, () => rng.int(0, 255).toString(16).padStart(2, '0')).join('')}`,
      });
    }
    const ours = fillRects(width, height, rects);
    const theirs = await viaLibrsvg(width, height, rects.map((rect) => ({ rect })));
    assert.ok(ours.data.equals(theirs.data), `round ${round}: ${width}×${height}`);
  }
});

test('every table and bar chart the generator draws is whole-pixel rectangles, and filling them matches librsvg', async () => {
  let checked = 0;
  for (const kind of GENERATED_KINDS.filter((k) => k !== 'line')) {
    for (const difficulty of [1, 3, 5] as const) {
      for (const imageSize of [null, [224, 112]] as ([number, number] | null)[]) {
        let scene: Scene;
        try {
          scene = buildTask({ seed: 8, split: 'train', index: difficulty, attempt: 0, kind, difficulty, imageSize }).scene;
        } catch {
          continue; // a roll that does not fit the tiny canvas
        }
        const shapes = sceneShapes(scene);
        assert.ok(shapes.every((s) => 'rect' in s && isPixelRect(s.rect)), `${kind} d${difficulty} has a shape that is not a whole-pixel rectangle`);
        const ours = fillRects(scene.width, scene.height, shapes.map((s) => (s as { rect: Rect }).rect));
        assert.ok(ours.data.equals((await viaLibrsvg(scene.width, scene.height, shapes)).data), `${kind} d${difficulty} ${imageSize ?? 'default'}`);
        checked++;
      }
    }
  }
  assert.ok(checked >= 16, `only ${checked} scenes checked`);
});

test('fractional edges and colours that are not #rrggbb are left to librsvg', () => {
  assert.equal(isPixelRect({ x: 1.5, y: 0, width: 3, height: 3, fill: '#000000' }), false);
  assert.equal(isPixelRect({ x: 1, y: 0, width: 3, height: 2.25, fill: '#000000' }), false);
  assert.equal(isPixelRect({ x: 1, y: 0, width: 3, height: 3, fill: 'red' }), false);
  assert.equal(isPixelRect({ x: 1, y: 0, width: -3, height: 3, fill: '#000000' }), false);
  assert.equal(isPixelRect({ x: -4, y: 7, width: 3, height: 0, fill: '#a0B0c0' }), true);
});
