import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GOOD_IOU, scoreBands, summarise, type ImageScore } from '../../env/grounding/evaluate.js';
import { groundImage, type Grounding } from '../../env/grounding/ground.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import { generatedSet, type GeneratedImage } from './generated-set.js';

// One grounding per image for the whole file: the models are the slow part, the assertions are not.
let runs: Promise<{ item: GeneratedImage; grounding: Grounding; score: ImageScore }[]> | undefined;

function groundedSet() {
  runs ??= (async () => {
    const out = [];
    for (const item of await generatedSet()) {
      const grounding = await groundImage(item.image);
      const truth = resolveMetadata(item.record.meta, item.image.width, item.image.height);
      const { labels, extra } = scoreBands(truth, grounding.meta);
      out.push({ item, grounding, score: { id: item.record.id, kind: item.record.kind, difficulty: item.record.difficulty, found: grounding.kind, labels, extra, ms: grounding.timing.totalMs } });
    }
    return out;
  })();
  return runs;
}

function failures(scores: readonly ImageScore[]): string {
  return scores
    .flatMap((s) => s.labels.filter((l) => l.predicted !== l.truth || l.iou < GOOD_IOU).map((l) => `${s.id}: ${JSON.stringify(l.truth)} → ${JSON.stringify(l.predicted)} IoU ${l.iou.toFixed(2)}`))
    .join('\n');
}

for (const kind of ['table', 'vbar', 'hbar'] as const) {
  test(`${kind} (difficulty 1–3): at least 95% of labels read exactly and 95% of bands at IoU ≥ 0.8, none missed`, async () => {
    const scores = (await groundedSet()).map((r) => r.score).filter((s) => s.kind === kind);
    assert.equal(scores.length, 6);
    const summary = summarise(scores)[kind];
    assert.ok(summary);
    assert.ok(summary.textExact >= 0.95, `text exact match ${summary.textExact.toFixed(3)}:\n${failures(scores)}`);
    assert.ok(summary.goodIou >= 0.95, `bands with IoU ≥ 0.8: ${summary.goodIou.toFixed(3)}:\n${failures(scores)}`);
    assert.equal(summary.labelRecall, 1, failures(scores));
    assert.equal(summary.extraBands, 0, 'no band was invented where the generator drew none');
  });
}

test('auto mode finds the right layout for every table, vertical-bar and horizontal-bar image', async () => {
  for (const { score } of await groundedSet()) assert.equal(score.found, score.kind, score.id);
});

test('the metadata is marked "source": "ocr", in pixels, and passes the tools\' own validation', async () => {
  for (const { item, grounding } of await groundedSet()) {
    assert.equal(grounding.meta.source, 'ocr');
    assert.equal(grounding.meta.unit, 'pixels');
    const resolved = resolveMetadata(grounding.meta, item.image.width, item.image.height);
    assert.deepEqual(resolved, grounding.meta, `${item.record.id}: already integer pixel boxes inside the image`);
  }
});

test('a table gets columns keyed by header text and rows keyed by first cell, and nothing else', async () => {
  const tables = (await groundedSet()).filter((r) => r.item.record.kind === 'table');
  for (const { item, grounding } of tables) {
    const table = item.record.table as { columns: string[]; rows: (string | number)[][] };
    assert.deepEqual(Object.keys(grounding.meta.columns_bbox ?? {}), table.columns, item.record.id);
    assert.deepEqual(Object.keys(grounding.meta.rows_bbox ?? {}), table.rows.map((r) => String(r[0])), item.record.id);
    assert.equal(grounding.meta.x_values_bbox, undefined);
    assert.equal(grounding.meta.y_values_bbox, undefined);
  }
});

test('slanted tick labels (vertical bars, difficulty 3) are found and read like flat ones', async () => {
  const slanted = (await groundedSet()).filter((r) => r.item.record.id.startsWith('test-vbar') && r.item.record.difficulty === 3);
  for (const { item, score } of slanted) {
    assert.ok(score.labels.length >= 6, item.record.id);
    const exact = score.labels.filter((l) => l.predicted === l.truth).length / score.labels.length;
    assert.ok(exact >= 0.85, `${item.record.id}: ${failures([score])}`);
    assert.ok(score.labels.every((l) => l.iou >= GOOD_IOU), failures([score]));
  }
});
