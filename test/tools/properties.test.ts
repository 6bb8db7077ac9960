import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { RgbImage } from '../../env/core/image.js';
import { bandKey, BAND_FAMILIES, resolveMetadata, type BBox, type ImageMetadata } from '../../env/tools/metadata.js';
import { listTools, runToolCall } from '../../env/tools/registry.js';
import { assertPixels, inRect, insetBox, onOutline, tinted, RED, WHITE } from './pixels.js';

/** A small image of random pixels with a random layout of bands (boxes may reach past the edges). */
const layout = fc
  .record({ width: fc.integer({ min: 6, max: 48 }), height: fc.integer({ min: 6, max: 48 }) })
  .chain(({ width, height }) =>
    fc.record({
      width: fc.constant(width),
      height: fc.constant(height),
      // A seed rather than the bytes themselves keeps counterexamples short enough to read.
      seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      family: fc.constantFrom(...BAND_FAMILIES),
      bands: fc.uniqueArray(
        fc.record({
          label: fc.string({ minLength: 1, maxLength: 5 }).filter((s) => s.trim() !== ''),
          x1: fc.integer({ min: -5, max: width - 1 }),
          y1: fc.integer({ min: -5, max: height - 1 }),
          w: fc.integer({ min: 1, max: width + 10 }),
          h: fc.integer({ min: 1, max: height + 10 }),
        }),
        { minLength: 1, maxLength: 6, selector: (b) => b.label },
      ),
      mode: fc.constantFrom('mask', 'draw', 'highlight'),
    }),
  )
  .chain((l) => fc.record({ l: fc.constant(l), selected: fc.subarray(l.bands.map((b) => b.label)) }));

/** Deterministic pseudo-random bytes (a linear congruential generator; quality is irrelevant here). */
function noise(length: number, seed: number): Buffer {
  const data = Buffer.alloc(length);
  let state = seed >>> 0;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    data[i] = state >>> 24;
  }
  return data;
}

test('random focus calls on random band layouts never throw and touch exactly the pixels the specification names', async () => {
  await fc.assert(
    fc.asyncProperty(layout, async ({ l, selected }) => {
      const image: RgbImage = { width: l.width, height: l.height, data: noise(l.width * l.height * 3, l.seed) };
      const boxes: Record<string, BBox> = {};
      // Boxes start inside the image (x1 ≤ width − 1) and end past 0, so every one intersects it.
      for (const b of l.bands) boxes[b.label] = { x1: b.x1, y1: b.y1, x2: Math.max(b.x1 + b.w, 1), y2: Math.max(b.y1 + b.h, 1) };
      const meta = resolveMetadata({ [bandKey(l.family)]: boxes } as ImageMetadata, l.width, l.height);
      const inputCopy = Buffer.from(image.data);
      const outcome = await runToolCall(image, { name: `focus_on_${l.family}_with_${l.mode}`, arguments: { [l.family]: selected } }, meta);
      assert.ok(outcome.ok, JSON.stringify(outcome));
      assert.ok(image.data.equals(inputCopy), 'input mutated');
      const rect = (label: string) => insetBox(boxes[label] as BBox, l.width, l.height);
      const all = Object.keys(boxes);
      const others = all.filter((label) => !selected.includes(label)).map(rect);
      const chosen = selected.map(rect);
      if (selected.length === 0 || (l.mode === 'mask' && others.length === 0)) {
        assert.ok(outcome.image.data.equals(image.data), 'nothing or everything selected must leave the image unchanged');
        return;
      }
      assertPixels(image, outcome.image, (x, y, before) => {
        if (l.mode === 'mask') return others.some((r) => inRect(r, x, y)) ? WHITE : null;
        if (l.mode === 'draw') return chosen.some((r) => onOutline(r, x, y)) ? RED : null;
        return chosen.some((r) => inRect(r, x, y)) ? tinted(before) : null;
      });
    }),
    { numRuns: 300 },
  );
});

test('any call, however malformed, yields an outcome (ok or E1–E5) and never throws or mutates the input', async () => {
  // ocr runs two neural networks per call, too slow for a property run; registry.test.ts covers it.
  const names = [...listTools().map((t) => t.name).filter((n) => n !== 'ocr'), 'zoom', '', 'focus_on_rows'];
  const image: RgbImage = { width: 40, height: 30, data: Buffer.alloc(40 * 30 * 3, 200) };
  const meta = resolveMetadata({ columns_bbox: { A: { x1: 0, y1: 0, x2: 20, y2: 30 }, B: { x1: 20, y1: 0, x2: 40, y2: 30 } } }, 40, 30);
  const argumentValues = fc.oneof(
    fc.anything(),
    fc.record({ columns: fc.array(fc.constantFrom('A', 'b', ' a ', 'C', '')) }, { requiredKeys: [] }),
    fc.record({ bbox: fc.array(fc.double({ noNaN: false }), { maxLength: 5 }), factor: fc.double() }, { requiredKeys: [] }),
    fc.record({ x: fc.double(), y: fc.double() }, { requiredKeys: [] }),
  );
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...names), argumentValues, async (name, args) => {
      const outcome = await runToolCall(image, { name, arguments: args as Record<string, unknown> }, meta);
      assert.ok(image.data.every((v) => v === 200), 'input mutated');
      if (!outcome.ok) assert.ok(['E1', 'E2', 'E3', 'E4', 'E5'].includes(outcome.error.class) && outcome.error.message.length > 0);
      else assert.ok(outcome.image.width > 0 && outcome.image.data.length === outcome.image.width * outcome.image.height * 3);
      if (!outcome.ok) assert.notEqual(outcome.error.class, 'E5', `tool crashed: ${outcome.error.message}`);
    }),
    { numRuns: 400 },
  );
});
