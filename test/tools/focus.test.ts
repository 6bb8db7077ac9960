import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentHash } from '../../env/core/image.js';
import { resolveMetadata, bandKey, type BandFamily, type BBox, type PixelMetadata } from '../../env/tools/metadata.js';
import { getTool, runToolCall } from '../../env/tools/registry.js';
import { tableFixture, verticalBarsFixture, horizontalBarsFixture, type Fixture } from '../fixtures/render.js';
import { assertPixels, inRect, insetBox, onOutline, pixelOf, tinted, RED, WHITE, type Rect } from './pixels.js';

interface Case {
  family: BandFamily;
  fixture: () => Promise<Fixture>;
  select: string[];
}

const CASES: Case[] = [
  { family: 'columns', fixture: tableFixture, select: ['Country', 'Wins'] },
  { family: 'rows', fixture: tableFixture, select: ['Hinault', 'Anquetil'] },
  { family: 'x_values', fixture: verticalBarsFixture, select: ['2020'] },
  { family: 'y_values', fixture: horizontalBarsFixture, select: ['Spain'] },
];

async function load(c: Case): Promise<{ fixture: Fixture; meta: PixelMetadata; bands: Record<string, BBox> }> {
  const fixture = await c.fixture();
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  return { fixture, meta, bands: meta[bandKey(c.family)] as Record<string, BBox> };
}

function rectsFor(bands: Record<string, BBox>, labels: string[], width: number, height: number): Rect[] {
  return labels.map((l) => insetBox(bands[l] as BBox, width, height)).filter((r): r is Rect => r !== null);
}

for (const c of CASES) {
  test(`focus_on_${c.family}_with_mask fills every non-selected band white (inset 2 px) and leaves every other pixel byte-equal`, async () => {
    const { fixture, meta, bands } = await load(c);
    const { image } = fixture;
    const others = Object.keys(bands).filter((l) => !c.select.includes(l));
    const masked = rectsFor(bands, others, image.width, image.height);
    const outcome = await runToolCall(image, { name: `focus_on_${c.family}_with_mask`, arguments: { [c.family]: c.select } }, meta);
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assertPixels(image, outcome.image, (x, y) => (masked.some((r) => inRect(r, x, y)) ? WHITE : null));
    // The masks did something visible: the fixture has ink under every non-selected band.
    assert.ok(masked.every((r) => !isAllWhite(image, r)), 'fixture bands should not already be white');
    assert.match(outcome.summary, new RegExp(`masked ${others.length} other`));
  });

  test(`focus_on_${c.family}_with_draw outlines each selected band in red, 5 px wide just inside the inset edge`, async () => {
    const { fixture, meta, bands } = await load(c);
    const { image } = fixture;
    const drawn = rectsFor(bands, c.select, image.width, image.height);
    const outcome = await runToolCall(image, { name: `focus_on_${c.family}_with_draw`, arguments: { [c.family]: c.select } }, meta);
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assertPixels(image, outcome.image, (x, y) => (drawn.some((r) => onOutline(r, x, y)) ? RED : null));
    // Spot checks at the middle of the first band's left edge, written out in box coordinates.
    const box = bands[c.select[0] as string] as BBox;
    const ym = Math.floor((box.y1 + box.y2) / 2);
    assert.deepEqual(pixelOf(outcome.image, box.x1 + 1, ym), pixelOf(image, box.x1 + 1, ym), 'the 2 px inset stays untouched');
    assert.deepEqual(pixelOf(outcome.image, box.x1 + 2, ym), RED, 'the outline starts at the inset edge');
    assert.deepEqual(pixelOf(outcome.image, box.x1 + 6, ym), RED, 'the outline is 5 px wide');
    assert.deepEqual(pixelOf(outcome.image, box.x1 + 7, ym), pixelOf(image, box.x1 + 7, ym), 'just inside the border is untouched');
    assert.deepEqual(pixelOf(outcome.image, box.x2 - 3, ym), RED, 'the last pixel inside the inset right edge is red');
    assert.deepEqual(pixelOf(outcome.image, box.x2 - 8, ym), pixelOf(image, box.x2 - 8, ym));
  });

  test(`focus_on_${c.family}_with_highlight tints each selected band with (255,0,0,50) by the documented formula`, async () => {
    const { fixture, meta, bands } = await load(c);
    const { image } = fixture;
    const lit = rectsFor(bands, c.select, image.width, image.height);
    const outcome = await runToolCall(image, { name: `focus_on_${c.family}_with_highlight`, arguments: { [c.family]: c.select } }, meta);
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assertPixels(image, outcome.image, (x, y, before) => (lit.some((r) => inRect(r, x, y)) ? tinted(before) : null));
  });
}

test('the highlight tint equals Pillow alpha_composite values for reference greys', () => {
  // Values printed by Pillow 13: Image.alpha_composite(grey c, (255,0,0,50)).
  const pillow: [number, [number, number, number]][] = [
    [0, [50, 0, 0]], [1, [51, 1, 1]], [17, [64, 14, 14]], [128, [153, 103, 103]], [200, [211, 161, 161]], [254, [254, 204, 204]], [255, [255, 205, 205]],
  ];
  for (const [c, want] of pillow) assert.deepEqual(tinted([c, c, c]), want, `grey ${c}`);
});

test('highlighting a white band in the real image gives exactly (255,205,205)', async () => {
  const { fixture, meta } = await load(CASES[2] as Case);
  const outcome = await runToolCall(fixture.image, { name: 'focus_on_x_values_with_highlight', arguments: { x_values: ['2019'] } }, meta);
  assert.ok(outcome.ok);
  // (60, 30): inside the 2019 band, above the bar, on the white page.
  assert.deepEqual(pixelOf(fixture.image, 60, 30), WHITE);
  assert.deepEqual(pixelOf(outcome.image, 60, 30), [255, 205, 205]);
});

test('row masking never touches the header row', async () => {
  const { fixture, meta } = await load(CASES[1] as Case);
  const { image } = fixture;
  const header: Rect = { left: 0, top: 0, right: image.width, bottom: 50 };
  const outcome = await runToolCall(image, { name: 'focus_on_rows_with_mask', arguments: { rows: ['Merckx'] } }, meta);
  assert.ok(outcome.ok);
  assert.ok(!isAllWhite(image, header), 'the header has ink to lose');
  for (let y = header.top; y < header.bottom; y++) for (let x = 0; x < image.width; x++) assert.deepEqual(pixelOf(outcome.image, x, y), pixelOf(image, x, y));
  assert.match(outcome.summary, /kept row Merckx \(and the header\); masked 4 others\./);
});

test('masking with nothing selected, or with everything selected, returns an unchanged image and says so', async () => {
  const { fixture, meta, bands } = await load(CASES[0] as Case);
  const { image } = fixture;
  const none = await runToolCall(image, { name: 'focus_on_columns_with_mask', arguments: { columns: [] } }, meta);
  assert.ok(none.ok);
  assert.ok(none.image.data.equals(image.data));
  assert.match(none.summary, /no columns selected: image unchanged/);
  const all = await runToolCall(image, { name: 'focus_on_columns_with_mask', arguments: { columns: Object.keys(bands).map((l) => l.toLowerCase()) } }, meta);
  assert.ok(all.ok);
  assert.ok(all.image.data.equals(image.data));
  assert.match(all.summary, /all 5 columns selected: nothing to mask, image unchanged/);
  assert.notEqual(all.image.data, image.data, 'even an unchanged result is a new buffer the caller may paint on');
});

test('draw and highlight with nothing selected return an unchanged image', async () => {
  const { fixture, meta } = await load(CASES[3] as Case);
  for (const mode of ['draw', 'highlight']) {
    const outcome = await runToolCall(fixture.image, { name: `focus_on_y_values_with_${mode}`, arguments: { y_values: [] } }, meta);
    assert.ok(outcome.ok);
    assert.ok(outcome.image.data.equals(fixture.image.data), mode);
    assert.match(outcome.summary, /image unchanged/);
  }
});

test('loosely written labels are applied to the right band and reported in matches and the summary', async () => {
  const { fixture, meta } = await load(CASES[0] as Case);
  const outcome = await runToolCall(fixture.image, { name: 'focus_on_columns_with_draw', arguments: { columns: ['wins', ' Country '] } }, meta);
  assert.ok(outcome.ok);
  assert.deepEqual(outcome.matches, [
    { requested: 'wins', matched: 'Wins', how: 'case' },
    { requested: ' Country ', matched: 'Country', how: 'whitespace' },
  ]);
  assert.match(outcome.summary, /read 'wins' as 'Wins', ' Country ' as 'Country'/);
  const exact = await runToolCall(fixture.image, { name: 'focus_on_columns_with_draw', arguments: { columns: ['Wins', 'Country'] } }, meta);
  assert.ok(exact.ok);
  assert.ok(exact.image.data.equals(outcome.image.data));
});

test('focus tools never mutate the input image', async () => {
  for (const c of CASES) {
    const { fixture, meta } = await load(c);
    const before = contentHash(fixture.image.data);
    for (const mode of ['mask', 'draw', 'highlight']) {
      const tool = getTool(`focus_on_${c.family}_with_${mode}`);
      assert.ok(tool);
      const outcome = await tool.apply(fixture.image, { [c.family]: c.select }, meta);
      assert.ok(outcome.ok);
      assert.notEqual(outcome.image.data, fixture.image.data);
    }
    assert.equal(contentHash(fixture.image.data), before, c.family);
  }
});

test('overlapping selected bands are tinted once, not twice', async () => {
  const { fixture } = await load(CASES[0] as Case);
  const meta = resolveMetadata({ columns_bbox: { A: { x1: 20, y1: 20, x2: 120, y2: 80 }, B: { x1: 60, y1: 20, x2: 200, y2: 80 } } }, fixture.image.width, fixture.image.height);
  const outcome = await runToolCall(fixture.image, { name: 'focus_on_columns_with_highlight', arguments: { columns: ['A', 'B'] } }, meta);
  assert.ok(outcome.ok);
  // Pillow's inclusive corners: (x1 + 2, y1 + 2) to (x2 − 2, y2 − 2), so half-open ends at x2 − 1.
  const a = { left: 22, top: 22, right: 119, bottom: 79 };
  const b = { left: 62, top: 22, right: 199, bottom: 79 };
  assertPixels(fixture.image, outcome.image, (x, y, before) => (inRect(a, x, y) || inRect(b, x, y) ? tinted(before) : null));
});

test('bands reaching past the image edge are clamped, not rejected', async () => {
  const { fixture } = await load(CASES[0] as Case);
  const { image } = fixture;
  const meta = resolveMetadata({ columns_bbox: { Edge: { x1: -50, y1: -10, x2: 40, y2: image.height + 30 }, Keep: { x1: 100, y1: 0, x2: 150, y2: 50 } } }, image.width, image.height);
  const outcome = await runToolCall(image, { name: 'focus_on_columns_with_mask', arguments: { columns: ['Keep'] } }, meta);
  assert.ok(outcome.ok);
  const edge = { left: 0, top: 0, right: 39, bottom: image.height };
  assertPixels(image, outcome.image, (x, y) => (inRect(edge, x, y) ? WHITE : null));
});

function isAllWhite(image: Fixture['image'], r: Rect): boolean {
  for (let y = r.top; y < r.bottom; y++) for (let x = r.left; x < r.right; x++) if (pixelOf(image, x, y).some((v) => v !== 255)) return false;
  return true;
}

test("rows and columns tools on a bar chart act on its y and x values, as VTool-R1 binds them: the same pixels as the chart's own tools", async () => {
  for (const [fixtureOf, family, bound, select] of [
    [horizontalBarsFixture, 'rows', 'y_values', ['Spain']],
    [verticalBarsFixture, 'columns', 'x_values', ['2020']],
  ] as const) {
    const fixture = await fixtureOf();
    const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
    for (const mode of ['mask', 'draw', 'highlight'] as const) {
      const viaBinding = await runToolCall(fixture.image, { name: `focus_on_${family}_with_${mode}`, arguments: { [family]: [...select] } }, meta);
      const own = await runToolCall(fixture.image, { name: `focus_on_${bound}_with_${mode}`, arguments: { [bound]: [...select] } }, meta);
      assert.ok(viaBinding.ok && own.ok, JSON.stringify(viaBinding.ok ? own : viaBinding));
      if (!viaBinding.ok || !own.ok) continue;
      assert.equal(contentHash(viaBinding.image.data), contentHash(own.image.data), `${family} ${mode}`);
      assert.match(viaBinding.summary, /VTool-R1's binding/);
    }
  }
  // A table keeps its own rows; the binding is only for images without them.
  const table = await tableFixture();
  const tableMeta = resolveMetadata(table.meta, table.image.width, table.image.height);
  const rows = await runToolCall(table.image, { name: 'focus_on_rows_with_mask', arguments: { rows: ['Hinault'] } }, tableMeta);
  assert.ok(rows.ok && !rows.summary.includes('binding'));
});
