import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchmarkTargetBoxes } from '../../env/episodes/benchmark-target.js';
import { callTarget, zoomTargetIou, type CallScene, type TargetTask } from '../../env/episodes/call-target.js';
import { metadataFrom } from '../../env/tasks/loaders/common.js';
import type { PixelMetadata } from '../../env/tools/metadata.js';
import { composeView, viewBox, type OriginalView } from '../../env/tools/original-view.js';
import type { ToolCall } from '../../env/tools/types.js';

const box = (x1: number, y1: number, x2: number, y2: number) => ({ x1, y1, x2, y2 });

/**
 * The relative_position record of the loader test (test/tasks/search-benchmarks.test.ts) as
 * loadVStar writes it for its 200×150 image: bbox [[10, 40, 30, 90], [60, 50, 100, 70]] → the
 * ladder at [10, 40, 40, 130], the wagon at [60, 50, 160, 120]. Their union box is
 * [10, 40, 160, 130], 150 × 90 = 13500 px².
 */
const vstar: TargetTask = {
  kind: 'chart',
  meta: {
    unit: 'pixels',
    source: 'dataset',
    targets: [
      { label: 'steel ladder', bbox: box(10, 40, 40, 130) },
      { label: 'wagon', bbox: box(60, 50, 160, 120) },
    ],
  },
};

const crop = (bbox: number[]): ToolCall => ({ name: 'crop', arguments: { bbox } });

/** The scene of a zoom tool whose output shows `view` of the task image (the call's own arguments are not read: the view says where it lies). */
function sceneShowing(view: OriginalView): CallScene {
  const result: PixelMetadata = { unit: 'pixels', original_view: view };
  return { meta: { unit: 'pixels' }, width: 200, height: 150, result, taskSize: { width: 200, height: 150 } };
}

const judged = (task: TargetTask, call: ToolCall, scene: CallScene) => [callTarget(task, call, scene), zoomTargetIou(task, call, scene)];

test('V* with two targets: on holds both, partly cuts one away, off overlaps neither; IoU against their union box', () => {
  // [0, 30, 170, 140] holds both: IoU 13500 / (170 × 110 = 18700).
  assert.deepEqual(judged(vstar, crop([0, 30, 170, 140]), sceneShowing({ left: 0, top: 30, right: 170, bottom: 140, width: 170, height: 110 })), ['on', 13500 / 18700]);
  // [0, 0, 50, 150] holds the ladder, misses the wagon: shares [10, 40, 50, 130] = 3600 with the union; union of areas 7500 + 13500 − 3600.
  assert.deepEqual(judged(vstar, crop([0, 0, 50, 150]), sceneShowing({ left: 0, top: 0, right: 50, bottom: 150, width: 50, height: 150 })), ['partly', 3600 / 17400]);
  // [50, 40, 70, 130] cuts into the wagon only (x 60–70): partly, though it holds neither whole.
  assert.deepEqual(judged(vstar, crop([50, 40, 70, 130]), sceneShowing({ left: 50, top: 40, right: 70, bottom: 130, width: 20, height: 90 })), ['partly', (20 * 90) / 13500]);
  // [40, 0, 60, 150] lies between them: boxes are half-open, the ladder ends before x 40, the wagon starts at 60.
  // Its IoU with the union box is not 0 (the union spans the gap): 20 × 90 shared, 3000 + 13500 − 1800.
  assert.deepEqual(judged(vstar, crop([40, 0, 60, 150]), sceneShowing({ left: 40, top: 0, right: 60, bottom: 150, width: 20, height: 150 })), ['off', 1800 / 14700]);
  // Far from both: off, IoU 0; image_zoom_in_tool and zoom_in are judged alike.
  const far = sceneShowing({ left: 170, top: 0, right: 200, bottom: 150, width: 30, height: 150 });
  assert.deepEqual(judged(vstar, { name: 'image_zoom_in_tool', arguments: { bbox_2d: [170, 0, 200, 150] } }, far), ['off', 0]);
  assert.deepEqual(judged(vstar, { name: 'zoom_in', arguments: { bbox: [170, 0, 200, 150], factor: 2 } }, far), ['off', 0]);
});

test('V*: a nested crop is judged where it lies in the task image, through the view of the image it read', () => {
  // A 2× zoom of [0, 30, 170, 140] (shown 340 × 220), then its [0, 0, 100, 220] → [0, 30, 50, 140] of the task image.
  const read: OriginalView = { left: 0, top: 30, right: 170, bottom: 140, width: 340, height: 220 };
  const nested = composeView(read, { left: 0, top: 0, right: 100, bottom: 220, outWidth: 100, outHeight: 220, grown: false });
  assert.deepEqual(viewBox(nested), box(0, 30, 50, 140));
  // It holds the ladder and misses the wagon: partly; shares [10, 40, 50, 130] = 3600 with the union, 5500 + 13500 − 3600.
  assert.deepEqual(judged(vstar, crop([0, 0, 100, 220]), sceneShowing(nested)), ['partly', 3600 / 15400]);
});

test('V*: a target box past the image edge is judged by its part inside the task image, where its size is known', () => {
  // The loader keeps [190, 140, 20, 20] on a 200×150 image as annotated: [190, 140, 210, 160].
  const edge: TargetTask = { kind: 'chart', meta: { unit: 'pixels', source: 'dataset', targets: [{ label: 'glove', bbox: box(190, 140, 210, 160) }] } };
  const corner = sceneShowing({ left: 150, top: 100, right: 200, bottom: 150, width: 50, height: 50 });
  // Clipped to [190, 140, 200, 150]: held, IoU 100 / 2500.
  assert.deepEqual(judged(edge, crop([150, 100, 200, 150]), corner), ['on', 100 / 2500]);
  // Without the task image's size, judged as annotated: the crop cannot hold it.
  const unsized: CallScene = { meta: corner.meta, width: corner.width, height: corner.height, ...(corner.result ? { result: corner.result } : {}) };
  assert.deepEqual(judged(edge, crop([150, 100, 200, 150]), unsized), ['partly', 100 / (2500 + 400 - 100)]);
});

test('records without target boxes stay unknown, with no IoU: never a guess', () => {
  const anywhere = sceneShowing({ left: 0, top: 0, right: 200, bottom: 150, width: 200, height: 150 });
  const unknown = ['unknown', null];
  // HR-Bench's meta (hrbench.ts) and VisualProbe's (metadataFrom({}), visualprobe.ts).
  assert.deepEqual(judged({ kind: 'chart', meta: { unit: 'pixels', source: 'dataset', cycle_category: 'ABCD' } }, crop([0, 0, 200, 150]), anywhere), unknown);
  assert.deepEqual(judged({ kind: 'chart', meta: metadataFrom({}) }, crop([0, 0, 200, 150]), anywhere), unknown);
  // Boxes in V*'s raw [x, y, w, h] lists, normalised units, an empty list: not the loader's format, not read.
  assert.deepEqual(judged({ kind: 'chart', meta: { unit: 'pixels', targets: [{ label: 'glove', bbox: [120, 30, 20, 20] }] } }, crop([0, 0, 200, 150]), anywhere), unknown);
  assert.deepEqual(judged({ kind: 'chart', meta: { unit: 'normalized', targets: [{ label: 'glove', bbox: box(0.1, 0.1, 0.2, 0.2) }] } }, crop([0, 0, 200, 150]), anywhere), unknown);
  assert.deepEqual(judged({ kind: 'chart', meta: { unit: 'pixels', targets: [] } }, crop([0, 0, 200, 150]), anywhere), unknown);
  // A V* record: other tools, and a zoom whose output does not say where it lies.
  assert.deepEqual(judged(vstar, { name: 'draw_line', arguments: { through: [[0, 0], [10, 10]] } }, anywhere), unknown);
  assert.deepEqual(judged(vstar, crop([0, 0, 200, 150]), { meta: { unit: 'pixels' }, width: 200, height: 150 }), unknown);
  // A search scene's targets are object indices: read by search-target.ts, not here.
  assert.equal(benchmarkTargetBoxes({ kind: 'search', meta: { unit: 'pixels', targets: [0] } }), null);
});
