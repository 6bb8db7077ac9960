import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTarget, zoomTargetIou, type CallScene, type TargetTask } from '../../env/episodes/call-target.js';
import { judgeSearchCrop, searchGoal } from '../../env/episodes/search-target.js';
import { resolveMetadata, type PixelMetadata } from '../../env/tools/metadata.js';
import type { OriginalView } from '../../env/tools/original-view.js';
import { buildTask } from '../../env/tasks/generate.js';
import { IllPosedQuestion } from '../../env/tasks/ill-posed.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { planZoom, zoomMetadata } from '../../env/tools/zoom.js';

const box = (x1: number, y1: number, x2: number, y2: number) => ({ x1, y1, x2, y2 });
const BUDGET = { maxPixels: 50176, legiblePx: 6 };

// A hand-made text_on scene on 1120×840: the target is object 1, a 41 px square labelled in 15 px
// type. Needed features: the label's cap height 0.73 × 15 = 10.95 px and the shape's detail 41 / 2
// = 20.5 px; the smaller, 10.95, decides legibility.
const task: TargetTask = {
  kind: 'search',
  query: { family: 'text_on', colour: 'red', shape: 'square' },
  meta: {
    unit: 'pixels',
    label_font_size: 15,
    objects: [
      { shape: 'circle', colour: 'blue', text: 'K3', bbox: box(100, 100, 141, 141) },
      { shape: 'square', colour: 'red', text: 'X7', bbox: box(400, 320, 441, 361) },
    ],
    targets: [1],
    target_bbox: box(400, 320, 441, 361),
  },
};
const view = (left: number, top: number, right: number, bottom: number, width: number, height: number): OriginalView => ({ left, top, right, bottom, width, height });

test('search goal: the target box and the needed features, from the record alone', () => {
  assert.deepEqual(searchGoal(task), { target: box(400, 320, 441, 361), needed: [15 * 0.73, 20.5] });
  // how_many: every counted shape's detail (half its side), no label.
  const count: TargetTask = { ...task, query: { family: 'how_many', colour: 'red', shape: 'square' }, meta: { ...task.meta, targets: [0, 1], target_bbox: box(100, 100, 441, 361) } };
  assert.deepEqual(searchGoal(count), { target: box(100, 100, 441, 361), needed: [20.5, 20.5] });
  // Missing pieces: no guess.
  assert.equal(searchGoal({ ...task, meta: { ...task.meta, target_bbox: undefined } }), null);
  assert.equal(searchGoal({ ...task, meta: { ...task.meta, targets: [5] } }), null, 'a target index past the objects');
  assert.equal(searchGoal({ ...task, query: { family: 'lookup' } }), null);
  assert.equal(searchGoal({ ...task, kind: 'vbar' }), null);
});

test('the criterion: holds the whole target and reads it at the budget on; cuts it or reads it too small partly; misses it off', () => {
  const goal = searchGoal(task)!;
  // The gold-like zoom: the target grown by 41 px, [359, 259, 482, 382] (123 px), enlarged to 224×224:
  // 224 / 123 = 1.821× and no budget downscale (224² = 50176), cap height 10.95 × 1.821 = 19.9 px ≥ 6.
  assert.equal(judgeSearchCrop(goal, view(359, 259, 482, 382, 224, 224), BUDGET), 'on');
  // A 400×400 crop at native size: the budget scales it by √(50176 / 160000) = 0.560, 10.95 × 0.560 = 6.13 px ≥ 6.
  assert.equal(judgeSearchCrop(goal, view(300, 200, 700, 600, 400, 400), BUDGET), 'on');
  // 420×420: √(50176 / 176400) = 0.533, 10.95 × 0.533 = 5.84 px < 6 — holds the target, reads it too small.
  assert.equal(judgeSearchCrop(goal, view(300, 200, 720, 620, 420, 420), BUDGET), 'partly');
  // The whole image at factor 1: √(50176 / 940800) = 0.231, 2.53 px.
  assert.equal(judgeSearchCrop(goal, view(0, 0, 1120, 840, 1120, 840), BUDGET), 'partly');
  // A legible crop that cuts the target's right edge (x 400–420 of 400–441): partly however sharp.
  assert.equal(judgeSearchCrop(goal, view(300, 300, 420, 400, 480, 400), BUDGET), 'partly');
  // Touching the target's edge shares no area: off.
  assert.equal(judgeSearchCrop(goal, view(441, 320, 500, 361, 236, 164), BUDGET), 'off');
  assert.equal(judgeSearchCrop(goal, view(0, 0, 112, 112, 224, 224), BUDGET), 'off');
  // A smaller legible size makes the 420 px crop readable: 5.84 ≥ 5.
  assert.equal(judgeSearchCrop(goal, view(300, 200, 720, 620, 420, 420), { maxPixels: 50176, legiblePx: 5 }), 'on');
});

/** The metadata a zoom_in hands back, as the tool makes it (the task image's metadata through each plan). */
function zoomed(meta: PixelMetadata, width: number, height: number, bbox: number[], factor: number): { meta: PixelMetadata; width: number; height: number } {
  const plan = planZoom(width, height, bbox, factor);
  assert.ok(typeof plan !== 'string', String(plan));
  return { meta: zoomMetadata(meta, plan), width: plan.outWidth, height: plan.outHeight };
}

const judge = (name: string, args: Record<string, unknown>, read: { meta: PixelMetadata; width: number; height: number }, result: PixelMetadata | undefined) => {
  const scene: CallScene = { ...read, ...(result ? { result } : {}) };
  return [callTarget(task, { name, arguments: args }, scene), zoomTargetIou(task, { name, arguments: args }, scene)];
};

test('a zoom judged in the task image through earlier zooms; IoU is plain IoU with the target box', () => {
  const original = { meta: resolveMetadata({}, 1120, 840), width: 1120, height: 840 };
  const gold = zoomed(original.meta, 1120, 840, [359, 259, 482, 382], 1.82);
  // 123 × 1.82 = 223.86 → 224 px; target 41² = 1681 px² inside a 123² = 15129 px² crop.
  assert.deepEqual(judge('zoom_in', { bbox: [359, 259, 482, 382], factor: 1.82 }, original, gold.meta), ['on', 1681 / 15129]);
  // Nested: zoom 2× into [224, 224, 896, 700] (672×476 → 1344×952), then 1× into its [336, 168, 672, 392]:
  // half-size steps, so the second crop is [224 + 168, 224 + 84, 224 + 336, 224 + 196] = [392, 308, 560, 420]
  // of the task image (168×112, holding the target), shown at 336×224: 336 / 168 = 2×, then downscaled to the
  // budget by √(50176 / 75264) = 0.816: 10.95 × 2 × 0.816 = 17.9 px. IoU 1681 / (168 × 112) = 1681 / 18816.
  const wide = zoomed(original.meta, 1120, 840, [224, 224, 896, 700], 2);
  assert.deepEqual(judge('zoom_in', { bbox: [224, 224, 896, 700], factor: 2 }, original, wide.meta).slice(0, 1), ['partly'], '672 px wide at 2× is downscaled back: 10.95 × 2 × √(50176 / 1279488) = 4.3 px');
  const inner = zoomed(wide.meta, wide.width, wide.height, [336, 168, 672, 392], 1);
  assert.deepEqual(judge('zoom_in', { bbox: [336, 168, 672, 392], factor: 1 }, wide, inner.meta), ['on', 1681 / 18816]);
  // A nested crop left of the target: [0, 168, 336, 392] → [224, 308, 392, 420], which ends before x 400.
  const away = zoomed(wide.meta, wide.width, wide.height, [0, 168, 336, 392], 1);
  assert.deepEqual(judge('zoom_in', { bbox: [0, 168, 336, 392], factor: 1 }, wide, away.meta), ['off', 0]);
  // A nested crop that cuts the target: [336, 168, 420, 232] → [392, 308, 434, 340]: the target's 400–434 × 320–340
  // (34 × 20 = 680 px²) of its 1681; union 42 × 32 + 1681 − 680 = 2345.
  const cut = zoomed(wide.meta, wide.width, wide.height, [336, 168, 420, 232], 1);
  assert.deepEqual(judge('zoom_in', { bbox: [336, 168, 420, 232], factor: 1 }, wide, cut.meta), ['partly', 680 / 2345]);
});

test('search: other tools, a call without its output, a record without a target: unknown and no IoU', () => {
  const original = { meta: resolveMetadata({}, 1120, 840), width: 1120, height: 840 };
  const gold = zoomed(original.meta, 1120, 840, [359, 259, 482, 382], 1.82);
  assert.deepEqual(judge('draw_line', { through: [[0, 0], [10, 10]] }, original, gold.meta), ['unknown', null], 'not a zoom, whatever it returned');
  assert.deepEqual(judge('zoom_in', { bbox: [359, 259, 482, 382] }, original, undefined), ['unknown', null], 'no output to say where it lies');
  const bare: TargetTask = { kind: 'search', query: task.query, meta: { unit: 'pixels' } };
  const scene: CallScene = { ...original, result: gold.meta };
  assert.equal(callTarget(bare, { name: 'crop', arguments: { bbox: [0, 0, 50, 50] } }, scene), 'unknown');
  assert.equal(zoomTargetIou(bare, { name: 'crop', arguments: { bbox: [0, 0, 50, 50] } }, scene), null);
});

/** The first task of `family` that builds, with `index` as a starting point (a refused roll is re-rolled, as data gen does). */
function generated(family: string, from: number): TaskRecord {
  for (let index = from; index < from + 20; index++) {
    for (let attempt = 0; attempt < 4; attempt++) {
      try {
        return buildTask({ seed: 5, split: 'train', index, attempt, kind: 'search', difficulty: ((index % 5) + 1) as 1, imageSize: null, families: [family as never] }).record;
      } catch (err) {
        if (!(err instanceof IllPosedQuestion)) throw err;
      }
    }
  }
  throw new Error(`no ${family} task built`);
}

test("every generated task's gold zoom is on target, at 0 < IoU < 1; the whole image is only partly", () => {
  for (const family of ['text_on', 'colour_of', 'next_to', 'how_many']) {
    for (const from of [0, 40, 80]) {
      const record = generated(family, from);
      const [width, height] = [2048, 1536];
      const meta = resolveMetadata(record.meta, width, height);
      const call = record.gold![0]!;
      const out = zoomed(meta, width, height, call.arguments.bbox as number[], call.arguments.factor as number);
      const scene: CallScene = { meta, width, height, result: out.meta };
      assert.equal(callTarget(record, call, scene), 'on', `${record.id} (${family})`);
      const overlap = zoomTargetIou(record, call, scene)!;
      assert.ok(overlap > 0 && overlap < 1, `${record.id}: the gold crop is the target with context, IoU ${overlap}`);
      const whole = zoomed(meta, width, height, [0, 0, width, height], 1);
      assert.equal(callTarget(record, { name: 'zoom_in', arguments: { bbox: [0, 0, width, height], factor: 1 } }, { meta, width, height, result: whole.meta }), 'partly', record.id);
    }
  }
});
