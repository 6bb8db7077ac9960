/**
 * Glyph rasters are the glyphs librsvg draws: the same coverage, pixel for pixel, at any
 * quarter-pixel position, size, weight and angle — whatever atlas they were drawn in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { glyphId, glyphRaster, loadGlyphs, PHASES, type GlyphKey } from '../../env/tasks/glyph-cache.js';
import { rasteriseOpaque } from '../../env/tasks/scene.js';
import { text } from '../../env/tasks/svg.js';

const SIDE = 96;
const ORIGIN = 40;

/** librsvg's own drawing of one glyph at (ORIGIN + phase), as coverage. */
async function drawnAlone(key: GlyphKey): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${SIDE}" height="${SIDE}"><rect width="${SIDE}" height="${SIDE}" fill="#ffffff"/>` +
    `${text(ORIGIN + key.phaseX / PHASES, ORIGIN + key.phaseY / PHASES, key.char, '#000000', { fontSize: key.fontSize, weight: key.weight, rotate: key.rotate })}</svg>`;
  const { data } = await rasteriseOpaque(svg);
  return Uint8Array.from({ length: SIDE * SIDE }, (_, p) => 255 - Math.min(data[p * 3] as number, data[p * 3 + 1] as number, data[p * 3 + 2] as number));
}

/** The cached raster placed with its origin at ORIGIN, as coverage on the same canvas. */
function fromCache(key: GlyphKey): Uint8Array {
  const out = new Uint8Array(SIDE * SIDE);
  const raster = glyphRaster(key);
  if (!raster) return out;
  for (let y = 0; y < raster.height; y++) {
    for (let x = 0; x < raster.width; x++) out[(ORIGIN + raster.top + y) * SIDE + ORIGIN + raster.left + x] = raster.coverage[y * raster.width + x] as number;
  }
  return out;
}

const KEYS: GlyphKey[] = [
  { char: 'a', fontSize: 13, weight: 'normal', rotate: 0, phaseX: 0, phaseY: 0 },
  { char: 'W', fontSize: 16, weight: 'bold', rotate: 0, phaseX: 3, phaseY: 1 },
  { char: 'g', fontSize: 7.5, weight: 'normal', rotate: 0, phaseX: 1, phaseY: 2 },
  { char: '%', fontSize: 11.05, weight: 'normal', rotate: -45, phaseX: 2, phaseY: 3 },
  { char: 'Q', fontSize: 12, weight: 'bold', rotate: -90, phaseX: 1, phaseY: 1 },
  { char: 'é', fontSize: 14, weight: 'normal', rotate: 90, phaseX: 3, phaseY: 0 },
  { char: '‱', fontSize: 20, weight: 'normal', rotate: 0, phaseX: 2, phaseY: 2 },
];

test('a cached glyph raster is exactly what librsvg draws for that glyph there', async () => {
  await loadGlyphs(KEYS);
  for (const key of KEYS) assert.deepEqual(fromCache(key), await drawnAlone(key), glyphId(key));
});

test('a space has no raster, and the same glyph drawn in another batch is the same raster', async () => {
  const key: GlyphKey = { char: 'k', fontSize: 15.5, weight: 'normal', rotate: 0, phaseX: 2, phaseY: 1 };
  const space: GlyphKey = { ...key, char: ' ' };
  await loadGlyphs([key, space, { ...key, char: 'x' }, { ...key, char: 'y', phaseX: 0 }]);
  assert.equal(glyphRaster(space), null);
  const first = glyphRaster(key);
  const alone: GlyphKey = { ...key, fontSize: 15.5, weight: 'bold' };
  await loadGlyphs([alone]);
  assert.deepEqual(fromCache(key), await drawnAlone(key));
  assert.ok(first && first.width > 0);
});

test('a glyph whose ink reaches the edge of its cell is drawn again in a larger one, and comes out whole', async () => {
  // A first cell a tenth of an em across cannot hold any glyph: every one must be redrawn.
  const keys: GlyphKey[] = [
    { char: 'M', fontSize: 17.75, weight: 'normal', rotate: 0, phaseX: 1, phaseY: 0 },
    { char: 'j', fontSize: 17.75, weight: 'bold', rotate: -45, phaseX: 2, phaseY: 3 },
  ];
  await loadGlyphs(keys, { cellEm: 0.1 });
  for (const key of keys) assert.deepEqual(fromCache(key), await drawnAlone(key), glyphId(key));
});

test('asking for a glyph that was never loaded is an error, not a blank', () => {
  assert.throws(() => glyphRaster({ char: 'z', fontSize: 99.25, weight: 'normal', rotate: 0, phaseX: 0, phaseY: 0 }), /never loaded/);
});
