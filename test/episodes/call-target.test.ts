import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTarget, compareSets, iou, zoomTargetIou, type CallScene, type TargetTask } from '../../env/episodes/call-target.js';
import type { PixelMetadata } from '../../env/tools/metadata.js';

const box = (x1: number, y1: number, x2: number, y2: number) => ({ x1, y1, x2, y2 });

// A 3-column table: Country is the row-key column, so gold masks keep it beside the asked column.
const table: TargetTask = {
  kind: 'table',
  table: { columns: ['Country', 'Wins', 'Year'], rows: [['France', 3, 2001], ['Spain', 5, 2002]] },
  gold: [
    { name: 'focus_on_columns_with_mask', arguments: { columns: ['Country', 'Wins'] } },
    { name: 'focus_on_rows_with_draw', arguments: { rows: ['France'] } },
  ],
};
const tableScene: CallScene = {
  width: 150,
  height: 100,
  meta: {
    unit: 'pixels',
    columns_bbox: { Country: box(0, 0, 50, 100), Wins: box(50, 0, 100, 100), Year: box(100, 0, 150, 100) },
    rows_bbox: { France: box(0, 20, 150, 40), Spain: box(0, 40, 150, 60) },
  },
};

const on = (task: TargetTask, name: string, args: Record<string, unknown>, scene: CallScene) => callTarget(task, { name, arguments: args }, scene);

test('sets: equal is on, overlapping partly, disjoint off', () => {
  assert.equal(compareSets(new Set(['a', 'b']), new Set(['b', 'a'])), 'on');
  assert.equal(compareSets(new Set(['a']), new Set(['a', 'b'])), 'partly');
  assert.equal(compareSets(new Set(['a', 'c']), new Set(['a', 'b'])), 'partly');
  assert.equal(compareSets(new Set(['c']), new Set(['a', 'b'])), 'off');
  assert.equal(compareSets(new Set(), new Set(['a'])), 'off');
});

test("table columns: the row-key column counts on neither side, labels match as the tools match them", () => {
  assert.equal(on(table, 'focus_on_columns_with_mask', { columns: ['Country', 'Wins'] }, tableScene), 'on');
  assert.equal(on(table, 'focus_on_columns_with_highlight', { columns: ['Wins'] }, tableScene), 'on', 'Wins alone is the asked column');
  assert.equal(on(table, 'focus_on_columns_with_draw', { columns: ['wins', 'Year'] }, tableScene), 'partly', 'wins matches Wins ignoring case');
  assert.equal(on(table, 'focus_on_columns_with_mask', { columns: ['Year'] }, tableScene), 'off');
  assert.equal(on(table, 'focus_on_columns_with_mask', { columns: ['Country'] }, tableScene), 'off', 'the key column alone shows none of the target');
});

test('table rows: the gold rows; an empty selection is off', () => {
  assert.equal(on(table, 'focus_on_rows_with_draw', { rows: ['France'] }, tableScene), 'on');
  assert.equal(on(table, 'focus_on_rows_with_highlight', { rows: ['France', 'Spain'] }, tableScene), 'partly');
  assert.equal(on(table, 'focus_on_rows_with_mask', { rows: ['Spain'] }, tableScene), 'off');
  assert.equal(on(table, 'focus_on_rows_with_mask', { rows: [] }, tableScene), 'off');
});

// The bars demo's failure: asked about bar E, the policy masks bar F.
const bars: TargetTask = { kind: 'vbar', gold: [{ name: 'focus_on_x_values_with_mask', arguments: { x_values: ['E'] } }] };
const barsScene: CallScene = {
  width: 240,
  height: 100,
  meta: { unit: 'pixels', x_values_bbox: Object.fromEntries(['A', 'B', 'C', 'D', 'E', 'F'].map((label, i) => [label, box(40 * i, 0, 40 * i + 40, 100)])) },
};

test('bars: masking F when asked about E is off; E on; both partly; rows/columns tools bound as VTool-R1 binds them', () => {
  assert.equal(on(bars, 'focus_on_x_values_with_mask', { x_values: ['F'] }, barsScene), 'off');
  assert.equal(on(bars, 'focus_on_x_values_with_mask', { x_values: ['E'] }, barsScene), 'on');
  assert.equal(on(bars, 'focus_on_x_values_with_highlight', { x_values: ['E', 'F'] }, barsScene), 'partly');
  assert.equal(on(bars, 'focus_on_columns_with_mask', { columns: ['E'] }, barsScene), 'on', 'columns act on the x values of a chart');
});

test('zoom on a chart: IoU with the gold bands, 0.5 and up on, any overlap partly', () => {
  // E's band is [160, 0, 200, 100] (4000 px²).
  assert.equal(on(bars, 'zoom_in', { bbox: [160, 0, 200, 100] }, barsScene), 'on', 'IoU 1');
  assert.equal(on(bars, 'zoom_in', { bbox: [150, 0, 210, 100] }, barsScene), 'on', 'IoU 4000 / 6000 = 0.67');
  assert.equal(on(bars, 'zoom_in', { bbox: [160, 0, 200, 40] }, barsScene), 'partly', 'IoU 1600 / 4000 = 0.4');
  assert.equal(on(bars, 'zoom_in', { bbox: [0, 0, 40, 40] }, barsScene), 'off');
  assert.equal(iou(box(0, 0, 10, 10), box(5, 0, 15, 10)), 50 / 150);
});

test('zoom on a table: the cells where gold columns and rows cross, after the 28 px growth the tool applies', () => {
  // Target: Wins ∩ France = [50, 20, 100, 40]. The box's 20 px height grows to 28: rows 16–44.
  // IoU = 50·20 / (50·28) = 0.71.
  assert.equal(on(table, 'zoom_in', { bbox: [50, 20, 100, 40] }, tableScene), 'on');
  // The whole table: 1000 / 15000 of the union.
  assert.equal(on(table, 'zoom_in', { bbox: [0, 0, 150, 100] }, tableScene), 'partly');
  assert.equal(on(table, 'zoom_in', { bbox: [100, 60, 150, 100] }, tableScene), 'off');
  // After a zoom that cropped the target away, the bands left say it is not there.
  const cropped: CallScene = { width: 100, height: 100, meta: { unit: 'pixels', columns_bbox: { Year: box(0, 0, 100, 100) } } };
  assert.equal(on(table, 'zoom_in', { bbox: [0, 0, 50, 50] }, cropped), 'off');
});

const diagram: TargetTask = {
  kind: 'geometry',
  gold: [{ name: 'draw_line', arguments: { through: ['A', 'B'] } }],
  query: { family: 'above_below', points: ['A', 'B', 'C'] },
};
const diagramMeta: PixelMetadata = { unit: 'pixels', points: { A: { x: 10, y: 10 }, B: { x: 50, y: 10 }, C: { x: 30, y: 40 }, D: { x: 80, y: 80 } } };
const diagramScene: CallScene = { width: 100, height: 100, meta: diagramMeta };

test("geometry: the gold construction is on, other constructions on the question's points partly, others off", () => {
  assert.equal(on(diagram, 'draw_line', { through: ['B', 'A'] }, diagramScene), 'on', 'a line is the same either way');
  assert.equal(on(diagram, 'draw_line', { through: [[11, 12], [50, 10]] }, diagramScene), 'on', '(11, 12) is 2.2 px from A: it names A');
  assert.equal(on(diagram, 'draw_segment', { endpoints: ['A', 'B'] }, diagramScene), 'partly', 'another tool over the same points');
  assert.equal(on(diagram, 'draw_line', { through: ['A', 'C'] }, diagramScene), 'partly');
  assert.equal(on(diagram, 'draw_line', { through: ['D', [80, 40]] }, diagramScene), 'off');
  assert.equal(on(diagram, 'draw_line', { through: [[14, 10], [80, 40]] }, diagramScene), 'off', '(14, 10) is 4 px from A: no point');
  assert.equal(on(diagram, 'mark_point', { point: 'C' }, diagramScene), 'partly');
  assert.equal(on(diagram, 'mark_point', { x: 80, y: 81 }, diagramScene), 'off');
});

test('geometry: a circle is its centre then its point; a zoom holds all, some or none of the question points', () => {
  const circle: TargetTask = { kind: 'geometry', gold: [{ name: 'draw_circle', arguments: { center: 'A', through: 'B' } }], query: { family: 'longer_segment', points: ['A', 'B', 'C'] } };
  assert.equal(on(circle, 'draw_circle', { center: 'A', through: 'B' }, diagramScene), 'on');
  assert.equal(on(circle, 'draw_circle', { center: 'B', through: 'A' }, diagramScene), 'partly');
  assert.equal(on(circle, 'draw_circle', { center: 'A', radius: 40 }, diagramScene), 'partly');
  assert.equal(on(diagram, 'zoom_in', { bbox: [0, 0, 60, 50] }, diagramScene), 'on');
  assert.equal(on(diagram, 'zoom_in', { bbox: [0, 0, 20, 20] }, diagramScene), 'partly', 'grown to [0, 0, 28, 28]: A only');
  assert.equal(on(diagram, 'zoom_in', { bbox: [70, 70, 100, 100] }, diagramScene), 'off');
});

test('no target known: unknown, never a guess', () => {
  const converted: TargetTask = { kind: 'vbar' };
  assert.equal(on(converted, 'focus_on_x_values_with_mask', { x_values: ['E'] }, barsScene), 'unknown', 'a converted task has no gold calls');
  assert.equal(on(converted, 'zoom_in', { bbox: [0, 0, 40, 40] }, barsScene), 'unknown');
  assert.equal(on(bars, 'draw_horizontal_line', { y: 40 }, barsScene), 'unknown', 'no gold for a line on a chart');
  assert.equal(on(bars, 'mark_point', { x: 10, y: 10 }, barsScene), 'unknown');
  const locate: TargetTask = { kind: 'geometry', gold: [], query: { family: 'locate', points: ['C'] } };
  assert.equal(on(locate, 'mark_point', { point: 'C' }, diagramScene), 'unknown', 'locate has no gold call');
  assert.equal(on(locate, 'zoom_in', { bbox: [0, 0, 60, 50] }, diagramScene), 'unknown');
});

const cropIou = (task: TargetTask, name: string, args: Record<string, unknown>, scene: CallScene) => zoomTargetIou(task, { name, arguments: args }, scene);

test("crop IoU: a zoom's crop against the target box, by hand; null where the task has no target box", () => {
  // Bars: E's band is [160, 0, 200, 100] (4000 px²).
  assert.equal(cropIou(bars, 'zoom_in', { bbox: [160, 0, 200, 100] }, barsScene), 1);
  assert.equal(cropIou(bars, 'zoom_in', { bbox: [150, 0, 210, 100] }, barsScene), 4000 / 6000);
  assert.equal(cropIou(bars, 'zoom_in', { bbox: [160, 0, 200, 40] }, barsScene), 1600 / 4000);
  assert.equal(cropIou(bars, 'zoom_in', { bbox: [0, 0, 40, 40] }, barsScene), 0);
  // Table: Wins ∩ France = [50, 20, 100, 40] (1000 px²); the 20 px tall box grows to 28 (rows 16–44): 1000 / 1400.
  assert.equal(cropIou(table, 'zoom_in', { bbox: [50, 20, 100, 40] }, tableScene), 1000 / 1400);
  // The target cropped away by an earlier zoom: the crop shares nothing with it.
  const cropped: CallScene = { width: 100, height: 100, meta: { unit: 'pixels', columns_bbox: { Year: box(0, 0, 100, 100) } } };
  assert.equal(cropIou(table, 'zoom_in', { bbox: [0, 0, 50, 50] }, cropped), 0);
  // No target box: a converted task, a geometry diagram (its target is points), another tool, an unusable box.
  assert.equal(cropIou({ kind: 'vbar' }, 'zoom_in', { bbox: [0, 0, 40, 40] }, barsScene), null);
  assert.equal(cropIou(diagram, 'zoom_in', { bbox: [0, 0, 60, 50] }, diagramScene), null);
  assert.equal(cropIou(bars, 'focus_on_x_values_with_mask', { x_values: ['E'] }, barsScene), null);
  assert.equal(cropIou(bars, 'zoom_in', { bbox: [0, 0] }, barsScene), null);
});
