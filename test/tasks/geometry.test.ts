import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTask, GENERATED_KINDS, renderTask, type TaskSpec } from '../../env/tasks/generate.js';
import { checkGeometry, checkTask } from '../../env/tasks/check.js';
import { LayoutError } from '../../env/tasks/layout-error.js';
import { NO_INK } from '../../env/tasks/label-map.js';
import { resolveMetadata, type BBox } from '../../env/tools/metadata.js';
import { runToolCall } from '../../env/tools/registry.js';
import type { Difficulty } from '../../env/tasks/difficulty.js';

function spec(kind: TaskSpec['kind'], difficulty: Difficulty, index: number, imageSize: [number, number] | null = null): TaskSpec {
  return { seed: 42, split: 'train', index, attempt: 0, kind, difficulty, imageSize };
}

test('every kind at difficulties 1, 3 and 5 passes the pixel checker: ink inside its bands, none in others', async () => {
  for (const kind of GENERATED_KINDS) {
    for (const d of [1, 3, 5] as const) {
      const task = await renderTask(buildTask(spec(kind, d, d)));
      const report = await checkTask(task.record, { rendered: task });
      assert.deepEqual(report.issues, [], `${kind} d${d}`);
      assert.ok(task.labelMap.marks.length >= 6, `${kind} d${d} has marks to check`);
    }
  }
});

/** Builds like the data-set writer does: a layout that cannot fit is re-rolled (a repair). */
function buildWithRepairs(s: TaskSpec, attempts = 4) {
  for (let attempt = 0; ; attempt++) {
    try {
      return buildTask({ ...s, attempt });
    } catch (err) {
      if (attempt + 1 >= attempts) throw err;
    }
  }
}

test('tiny canvases for the CPU demo (112×112, 224×112) still give checked geometry at difficulty 1', async () => {
  for (const size of [[112, 112], [224, 112]] as [number, number][]) {
    for (const kind of GENERATED_KINDS) {
      const task = await renderTask(buildWithRepairs(spec(kind, 1, 7, size)));
      assert.equal(task.image.width, size[0]);
      assert.equal(task.image.height, size[1]);
      assert.deepEqual(checkGeometry(task.labelMap, task.record.meta), [], `${kind} at ${size.join('×')}`);
    }
  }
});

test('a canvas too small for the data is refused with a message that says how to fix it', () => {
  assert.throws(() => buildTask(spec('table', 5, 1, [112, 112])), (err: unknown) => {
    // Either the labels cannot be short enough or the layout cannot fit; both say what to change.
    assert.ok(err instanceof Error);
    assert.match(err.message, /--image-size/);
    return true;
  });
  assert.throws(() => buildTask(spec('hbar', 5, 1, [224, 112])), LayoutError);
});

test('masking one column with the real tool whitens every other column’s text and leaves its own untouched', async () => {
  const task = await renderTask(buildTask(spec('table', 3, 11)));
  const meta = resolveMetadata(task.record.meta, task.image.width, task.image.height);
  const keep = task.record.table!.columns[1]!;
  const outcome = await runToolCall(task.image, { name: 'focus_on_columns_with_mask', arguments: { columns: [keep] } }, meta);
  assert.ok(outcome.ok);
  const { ids, marks, width } = task.labelMap;
  let kept = 0, whitened = 0;
  for (let p = 0; p < ids.length; p++) {
    const id = ids[p] as number;
    if (id === NO_INK) continue;
    const owner = marks[id]!.owners.columns;
    if (owner === undefined) continue;
    const o = p * 3;
    const after: number[] = [...outcome.image.data.subarray(o, o + 3)];
    if (owner === keep) {
      assert.deepEqual(after, [...task.image.data.subarray(o, o + 3)], `pixel (${p % width}, ${Math.floor(p / width)}) of ${marks[id]!.name} changed`);
      kept++;
    } else {
      assert.deepEqual(after, [255, 255, 255], `pixel (${p % width}, ${Math.floor(p / width)}) of ${marks[id]!.name} survived the mask`);
      whitened++;
    }
  }
  assert.ok(kept > 50 && whitened > 50, `kept ${kept}, whitened ${whitened}`);
});

test('masking one bar with the real tool whitens every other bar and tick label', async () => {
  const task = await renderTask(buildTask(spec('vbar', 2, 3)));
  const meta = resolveMetadata(task.record.meta, task.image.width, task.image.height);
  const keep = task.record.table!.rows[0]![0] as string;
  const outcome = await runToolCall(task.image, { name: 'focus_on_x_values_with_mask', arguments: { x_values: [keep] } }, meta);
  assert.ok(outcome.ok);
  const { ids, marks } = task.labelMap;
  for (let p = 0; p < ids.length; p++) {
    const id = ids[p] as number;
    if (id < 0) continue;
    const owner = marks[id]!.owners.x_values;
    if (owner === undefined || owner === keep) continue;
    assert.deepEqual([...outcome.image.data.subarray(p * 3, p * 3 + 3)], [255, 255, 255], `${marks[id]!.name} survived`);
  }
});

test('x_values bands tile the plot, split half-way between the centres of the rendered tick labels', async () => {
  const task = await renderTask(buildTask(spec('vbar', 3, 5)));
  const bands = Object.entries(task.record.meta.x_values_bbox as Record<string, BBox>);
  const plot = task.record.meta.plot_bbox as BBox;
  assert.equal(bands[0]![1].x1, plot.x1, 'the first band starts at the plot edge');
  assert.equal(bands[bands.length - 1]![1].x2, plot.x2, 'the last band ends at the plot edge');
  const centres = bands.map(([label]) => {
    const id = task.labelMap.marks.findIndex((m) => m.name === `x tick label "${label}"`);
    const e = task.labelMap.extents[id]!;
    return (e.x1 + e.x2) / 2;
  });
  for (let i = 0; i + 1 < bands.length; i++) {
    assert.equal(bands[i]![1].x2, bands[i + 1]![1].x1, 'neighbouring bands share an edge');
    // Ink centres sit within a pixel and a half of the slot centres (glyph side bearings differ).
    assert.ok(Math.abs(bands[i]![1].x2 - (centres[i]! + centres[i + 1]!) / 2) <= 1.5, `edge ${bands[i]![1].x2} vs midpoint ${(centres[i]! + centres[i + 1]!) / 2}`);
  }
});

test('y_values bands run the full width, from the tick label to the value label', async () => {
  const task = await renderTask(buildTask(spec('hbar', 2, 4)));
  const bands = Object.values(task.record.meta.y_values_bbox as Record<string, BBox>);
  const figure = task.record.meta.figure_bbox as BBox;
  for (const b of bands) {
    assert.equal(b.x1, figure.x1);
    assert.equal(b.x2, figure.x2);
  }
  for (let i = 0; i + 1 < bands.length; i++) assert.equal(bands[i]!.y2, bands[i + 1]!.y1);
  assert.deepEqual(checkGeometry(task.labelMap, task.record.meta), []);
});
