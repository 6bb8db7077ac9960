import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { actionError } from '../../env/core/errors.js';
import { FINDING_NAMES, SCANNERS, scanTrajectory, type ScanContext } from '../../env/episodes/scanners/index.js';
import type { CallRecord, Trajectory } from '../../env/episodes/trajectory.js';
import { answerTurn, call, callTurn, observation, trajectory } from '../rewards/trajectories.js';

/** The task image of every record trajectory() builds. */
const TASK_IMAGE = 'c'.repeat(64);
const fires = (name: string, record: Trajectory, context: ScanContext = {}): boolean => {
  const scanner = SCANNERS.find((s) => s.name === name);
  assert.ok(scanner, `no scanner ${name}`);
  return scanner.fires(record, context);
};
const ran = (name: string, args: Record<string, unknown>, extra: Partial<CallRecord> = {}): CallRecord => ({ ...call(name, args), ...extra });

test('the scanners are exactly the rollout record’s findings, in its order', () => {
  const schema = JSON.parse(readFileSync(join(__dirname, '..', '..', 'schemas', 'rollout-record.schema.json'), 'utf8')) as { properties: { findings: { items: { enum: string[] } } } };
  assert.deepEqual(FINDING_NAMES, schema.properties.findings.items.enum);
});

test('off_target_call: a call that ran with target off; partly and unknown do not fire', () => {
  const with_ = (target: CallRecord['target']) => trajectory([callTurn([ran('focus_on_x_values_with_mask', { x_values: ['F'] }, { target })]), observation(), answerTurn('7')]);
  assert.equal(fires('off_target_call', with_('off')), true);
  assert.equal(fires('off_target_call', with_('partly')), false);
  assert.equal(fires('off_target_call', with_('unknown')), false);
  assert.equal(fires('off_target_call', with_(undefined)), false);
});

test('repeated_call: the same tool and arguments twice, keys in any order; a different argument is no repeat', () => {
  const a = ran('zoom_in', { bbox: [0, 0, 10, 10], factor: 2 });
  const same = ran('zoom_in', { factor: 2, bbox: [0, 0, 10, 10] });
  const other = ran('zoom_in', { bbox: [0, 0, 10, 11], factor: 2 });
  assert.equal(fires('repeated_call', trajectory([callTurn([a]), observation(), callTurn([same]), observation(), answerTurn('7')])), true);
  assert.equal(fires('repeated_call', trajectory([callTurn([a]), observation(), callTurn([other]), observation(), answerTurn('7')])), false);
  assert.equal(fires('repeated_call', trajectory([callTurn([a, same]), observation(), answerTurn('7')])), true, 'within one turn too');
});

test('ignored_tool_error: an error, then an answer with no call; a retry first does not fire', () => {
  const failed = call('focus_on_x_values_with_mask', { x_values: ['Q'] }, false, actionError('E4', 'unknown x value Q', 'focus_on_x_values_with_mask'));
  const retry = ran('focus_on_x_values_with_mask', { x_values: ['E'] });
  assert.equal(fires('ignored_tool_error', trajectory([callTurn([failed]), observation('ERROR E4'), answerTurn('7')])), true);
  assert.equal(fires('ignored_tool_error', trajectory([callTurn([failed]), observation('ERROR E4'), callTurn([retry]), observation(), answerTurn('7')])), false);
  // A parse error (E1) counts as well.
  const garbled = callTurn([], 'I will call <tool_call>{oops', [actionError('E1', 'no JSON object')]);
  assert.equal(fires('ignored_tool_error', trajectory([garbled, observation('ERROR E1'), answerTurn('7')])), true);
  assert.equal(fires('ignored_tool_error', trajectory([callTurn([retry]), observation(), answerTurn('7')])), false, 'no error at all');
});

test('degenerate_edit: an edit whose output is its input; a zoom on the task image off every box the metadata has', () => {
  const unchanged = ran('focus_on_x_values_with_mask', { x_values: ['A', 'B'] }, { image_in: TASK_IMAGE, image_out: TASK_IMAGE });
  const changed = ran('focus_on_x_values_with_mask', { x_values: ['A'] }, { image_in: TASK_IMAGE, image_out: 'f'.repeat(64) });
  const ocr = ran('ocr', {}, { image_in: TASK_IMAGE, image_out: TASK_IMAGE });
  const record = (c: CallRecord) => trajectory([callTurn([c]), observation(), answerTurn('7')]);
  assert.equal(fires('degenerate_edit', record(unchanged)), true);
  assert.equal(fires('degenerate_edit', record(changed)), false);
  assert.equal(fires('degenerate_edit', record(ocr)), false, 'ocr only reads');
  // A 200×100 chart whose figure is [20, 10, 180, 90]: the corner [180, 90, 200, 100] holds nothing.
  const context: ScanContext = { taskImage: { width: 200, height: 100, meta: { unit: 'pixels', figure_bbox: { x1: 20, y1: 10, x2: 180, y2: 90 } } } };
  const zoom = (bbox: number[], imageIn = TASK_IMAGE) => record(ran('zoom_in', { bbox }, { image_in: imageIn, image_out: 'd'.repeat(64) }));
  // Grown to 28 px around its centre, the corner box becomes x 172–200, y 72–100 (shifted inside the image), which reaches the figure.
  assert.equal(fires('degenerate_edit', zoom([185, 92, 200, 100]), context), false, 'the 28 px growth reaches the figure');
  assert.equal(fires('degenerate_edit', zoom([0, 0, 10, 5]), { taskImage: { ...context.taskImage!, meta: { unit: 'pixels', figure_bbox: { x1: 60, y1: 40, x2: 180, y2: 90 } } } }), true, 'grown to [0, 0, 28, 28]: clear of [60, 40, 180, 90]');
  assert.equal(fires('degenerate_edit', zoom([0, 0, 10, 5])), false, 'without the task image’s metadata it cannot say');
  assert.equal(fires('degenerate_edit', zoom([0, 0, 10, 5], 'e'.repeat(64)), { taskImage: { ...context.taskImage!, meta: { unit: 'pixels', figure_bbox: { x1: 60, y1: 40, x2: 180, y2: 90 } } } }), false, 'a zoom of a zoomed image: the task’s boxes do not describe it');
});

test('degenerate_edit on a search scene: a zoom or crop of the task image that touches no object; the crop read under the episode’s bounds', () => {
  const record = (c: CallRecord) => trajectory([callTurn([c]), observation(), answerTurn('X7')]);
  const on = (name: string, args: Record<string, unknown>, imageIn = TASK_IMAGE) => record(ran(name, args, { image_in: imageIn, image_out: 'd'.repeat(64) }));
  // A 1120×840 scene (shown as is under the default bounds) with two objects; no figure box, bands or points.
  const objects = [
    { shape: 'circle', colour: 'blue', text: 'K3', bbox: { x1: 100, y1: 100, x2: 141, y2: 141 } },
    { shape: 'square', colour: 'red', text: 'X7', bbox: { x1: 400, y1: 320, x2: 441, y2: 361 } },
  ];
  const scene: ScanContext = { taskImage: { width: 1120, height: 840, meta: { unit: 'pixels', label_font_size: 15, objects, targets: [1], target_bbox: objects[1]!.bbox } } };
  assert.equal(fires('degenerate_edit', on('crop', { bbox: [600, 600, 700, 700] }), scene), true, 'background only');
  assert.equal(fires('degenerate_edit', on('zoom_in', { bbox: [600, 600, 700, 700], factor: 2 }), scene), true);
  assert.equal(fires('degenerate_edit', on('image_zoom_in_tool', { bbox_2d: [600, 600, 700, 700] }), scene), true);
  // Not the target, but an object: a wrong look (off target), not an empty one.
  assert.equal(fires('degenerate_edit', on('crop', { bbox: [90, 90, 110, 110] }), scene), false);
  // [440, 360, 500, 400] touches the square's last column and row (x 440, y 360): not empty.
  assert.equal(fires('degenerate_edit', on('crop', { bbox: [440, 360, 500, 400] }), scene), false);
  assert.equal(fires('degenerate_edit', on('crop', { bbox: [441, 361, 500, 400] }), scene), true, 'half-open boxes: just past the square');
  // Shown at 252×168 under a 50176-pixel budget, [90, 60, 99, 70] is [400, 300, 440, 350] of the task image (×40/9, ×5):
  // it reaches the square. Under the default bounds it is [90, 60, 99, 70] grown to 28 px, clear of both objects.
  const small = { minPixels: 3136, maxPixels: 50176 };
  assert.equal(fires('degenerate_edit', on('crop', { bbox: [90, 60, 99, 70] }), { ...scene, bounds: small }), false);
  assert.equal(fires('degenerate_edit', on('crop', { bbox: [90, 60, 99, 70] }), scene), true);
  // A crop of a crop: where it lies in the task image is not in the record, so it is not judged.
  assert.equal(fires('degenerate_edit', on('crop', { bbox: [600, 600, 700, 700] }, 'e'.repeat(64)), scene), false);
  // A converted V* photo's target boxes do not locate everything in it: a crop beside them is not empty space.
  const vstar: ScanContext = { taskImage: { width: 1120, height: 840, meta: { unit: 'pixels', source: 'dataset', targets: [{ label: 'glove', bbox: { x1: 400, y1: 320, x2: 441, y2: 361 } }] } } };
  assert.equal(fires('degenerate_edit', on('crop', { bbox: [600, 600, 700, 700] }), vstar), false);
  // A crop of the whole image at its own size changes no pixel: the unchanged-output rule, as for any edit.
  assert.equal(fires('degenerate_edit', record(ran('crop', { bbox: [0, 0, 1120, 840] }, { image_in: TASK_IMAGE, image_out: TASK_IMAGE })), scene), true);
});

test('format_collapse: the last assistant turn has no answer and no call', () => {
  const garbled = callTurn([], 'the the the', [actionError('E1', 'no action')]);
  assert.equal(fires('format_collapse', trajectory([callTurn([ran('zoom_in', { bbox: [0, 0, 9, 9] })]), observation(), garbled], { answer: null, end_reason: 'max_turns' })), true);
  assert.equal(fires('format_collapse', trajectory([garbled, observation('ERROR E1'), answerTurn('7')])), false, 'recovered: the last turn answers');
  const refused = call('zoom_in', { bbox: [5, 5, 1, 1] }, false, actionError('E4', 'x2 < x1', 'zoom_in'));
  assert.equal(fires('format_collapse', trajectory([callTurn([refused])], { answer: null, end_reason: 'max_turns' })), false, 'a refused call was still read');
});

test('answered_without_looking reads the replay: unchanged fires, changed or absent does not', () => {
  const base = trajectory([callTurn([ran('zoom_in', { bbox: [0, 0, 9, 9] })]), observation(), answerTurn('7')]);
  assert.equal(fires('answered_without_looking', { ...base, counterfactual: { answer: '7', correct: true, changed: false } }), true);
  assert.equal(fires('answered_without_looking', { ...base, counterfactual: { answer: '3', correct: false, changed: true } }), false);
  assert.equal(fires('answered_without_looking', base), false);
});

test('scanTrajectory lists what fired in the fixed order, [] when nothing did', () => {
  const off = ran('focus_on_x_values_with_mask', { x_values: ['F'] }, { target: 'off' });
  const record = trajectory([callTurn([off]), observation(), callTurn([{ ...off }]), observation(), answerTurn('7')]);
  assert.deepEqual(scanTrajectory(record), ['off_target_call', 'repeated_call']);
  assert.deepEqual(scanTrajectory(trajectory([answerTurn('7')])), []);
});
