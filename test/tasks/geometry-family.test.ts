import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset, MIN_TASKS_FOR_WORKERS } from '../../env/tasks/dataset.js';
import { loadTasks } from '../../env/tasks/load.js';
import { buildTask, renderTask, type TaskSpec } from '../../env/tasks/generate.js';
import { checkTask } from '../../env/tasks/check.js';
import type { Difficulty } from '../../env/tasks/difficulty.js';
import { recomputeDiagramAnswer } from '../../env/tasks/geometry/answer-check.js';
import { DIAGRAM_PROFILES, ROBUST_MARGIN_PX } from '../../env/tasks/geometry/profiles.js';
import { GEOMETRY_FAMILIES, type GeometryFamily } from '../../env/tasks/geometry/questions.js';
import { CONFLICT, NO_INK } from '../../env/tasks/label-map.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import type { PointXY } from '../../env/tools/metadata.js';
import { Rng } from '../../env/tasks/prng.js';

function spec(family: GeometryFamily, difficulty: Difficulty, index: number, imageSize: [number, number] | null = null): TaskSpec {
  return { seed: 7, split: 'train', index, attempt: 0, kind: 'geometry', difficulty, imageSize, families: [family] as never };
}

/** Builds like the data-set writer: a roll that cannot be laid out is re-rolled. */
function build(s: TaskSpec) {
  for (let attempt = 0; ; attempt++) {
    try {
      return buildTask({ ...s, attempt });
    } catch (err) {
      if (attempt >= 6 || !['LayoutError', 'IllPosedQuestion'].includes((err as Error).name)) throw err;
    }
  }
}

// A third computation of each answer, in plain floats from the textbook definitions (not the
// generator's margins, not the checker's BigInt path).
function naiveAnswer(task: TaskRecord): string {
  const pts = task.meta.points as Record<string, PointXY>;
  const labels = task.query?.points ?? [];
  const p = labels.map((l) => pts[l] as PointXY);
  const cross = (a: PointXY, b: PointXY, c: PointXY) => (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
  switch (task.query?.family) {
    case 'above_below': {
      const [a, b, c] = p as [PointXY, PointXY, PointXY];
      const y = a.y + ((b.y - a.y) / (b.x - a.x)) * (c.x - a.x);
      return y < c.y ? 'above' : 'below';
    }
    case 'same_side':
      return Math.sign(cross(p[0]!, p[1]!, p[2]!)) === Math.sign(cross(p[0]!, p[1]!, p[3]!)) ? 'yes' : 'no';
    case 'inside_triangle': {
      const [a, b, c] = p as [PointXY, PointXY, PointXY];
      const area = Math.abs(cross(a, b, c));
      const inside = p.slice(3).map((q) => Math.abs(Math.abs(cross(a, b, q)) + Math.abs(cross(b, c, q)) + Math.abs(cross(c, a, q)) - area) < 1e-9);
      return labels[3 + inside.indexOf(true)] as string;
    }
    case 'segments_cross': {
      const [a, b, c, d] = p as [PointXY, PointXY, PointXY, PointXY];
      return cross(a, b, c) * cross(a, b, d) < 0 && cross(c, d, a) * cross(c, d, b) < 0 ? 'yes' : 'no';
    }
    case 'longer_segment': {
      const [o, a, b] = p as [PointXY, PointXY, PointXY];
      return Math.hypot(a.x - o.x, a.y - o.y) > Math.hypot(b.x - o.x, b.y - o.y) ? `${labels[0]}${labels[1]}` : `${labels[0]}${labels[2]}`;
    }
    default:
      return `(${p[0]!.x}, ${p[0]!.y})`;
  }
}

test('every family at difficulties 1, 3 and 5 passes the checker, and its answer agrees with a naive float computation', async () => {
  for (const family of GEOMETRY_FAMILIES) {
    for (const d of [1, 3, 5] as const) {
      for (const index of [0, 1]) {
        const built = build(spec(family, d, index));
        const rendered = await renderTask(built);
        const report = await checkTask(built.record, { rendered });
        assert.deepEqual(report.issues, [], `${family} d${d} #${index}`);
        assert.equal(built.record.answer, naiveAnswer(built.record), `${family} d${d} #${index}: ${built.record.question}`);
        assert.equal(built.record.kind, 'geometry');
        assert.equal(built.record.family, family);
        const [w, h] = DIAGRAM_PROFILES[d].canvas;
        assert.deepEqual([rendered.image.width, rendered.image.height], [w, h]);
      }
    }
  }
});

test('the same spec gives the same record and the same PNG bytes', async () => {
  for (const family of GEOMETRY_FAMILIES) {
    const a = await renderTask(build(spec(family, 3, 5)));
    const b = await renderTask(build(spec(family, 3, 5)));
    assert.deepEqual(a.record, b.record);
    assert.ok(a.png.equals(b.png), family);
  }
});

test('the stored points are on the pixels: each point\'s pixel and its four neighbours are the dot\'s colour', async () => {
  const task = await renderTask(build(spec('same_side', 4, 3)));
  const points = Object.entries(task.record.meta.points as Record<string, PointXY>);
  assert.ok(points.length >= DIAGRAM_PROFILES[4].points[0]);
  for (const [label, p] of points) {
    for (const [dx, dy] of [[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]]) {
      const i = ((p.y + dy!) * task.image.width + p.x + dx!) * 3;
      assert.deepEqual([...task.image.data.subarray(i, i + 3)], [17, 17, 17], `point ${label} (${p.x}, ${p.y}) offset ${dx},${dy}`);
    }
  }
});

test('every letter is legible: its own ink, touching no other ink (the label map has no conflicts), none within 2 px of the diagram', async () => {
  for (const d of [1, 5] as const) {
    const task = await renderTask(build(spec('inside_triangle', d, 2)));
    const { labelMap } = task;
    assert.equal(labelMap.marks.length, Object.keys(task.record.meta.points as object).length + 1, 'the diagram and one letter per point');
    assert.equal(labelMap.conflicts, 0);
    const { width, height, ids } = labelMap;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const id = ids[y * width + x] as number;
        if (id <= 0) continue; // the diagram is mark 0; letters are 1..n
        for (let dy = -2; dy <= 2; dy++) {
          for (let dx = -2; dx <= 2; dx++) {
            const other = ids[(y + dy) * width + x + dx];
            assert.ok(other === NO_INK || other === id, `letter ${labelMap.marks[id]?.name} at (${x}, ${y}) is within 2 px of ${other === CONFLICT ? 'a conflict' : labelMap.marks[other as number]?.name}`);
          }
        }
      }
    }
  }
});

test('no answer changes when the points it depends on move by up to 3 px in any direction (random moves against the checker\'s answer)', () => {
  const stream = new Rng([99, 1, 2, 3]);
  const rng = () => stream.next();
  for (const family of GEOMETRY_FAMILIES.filter((f) => f !== 'locate')) {
    for (const d of [1, 3, 5] as const) {
      const task = build(spec(family, d, 11)).record;
      const points = task.meta.points as Record<string, PointXY>;
      for (let trial = 0; trial < 300; trial++) {
        const moved: Record<string, PointXY> = { ...points };
        for (const label of task.query?.points ?? []) {
          const angle = rng() * 2 * Math.PI;
          const r = ROBUST_MARGIN_PX * Math.sqrt(rng());
          // Whole pixels: the move is rounded, so it never exceeds 3 px by more than rounding.
          moved[label] = { x: Math.round(points[label]!.x + r * Math.cos(angle) * 0.8), y: Math.round(points[label]!.y + r * Math.sin(angle) * 0.8) };
        }
        assert.equal(recomputeDiagramAnswer(moved, task.query!), task.answer, `${family} d${d} trial ${trial}`);
      }
    }
  }
});

test('the margin a difficulty asks for shrinks with difficulty: harder diagrams put the answer nearer its boundary', () => {
  const mean = (d: Difficulty) => {
    let sum = 0;
    for (let i = 0; i < 12; i++) {
      const task = build(spec('above_below', d, 100 + i)).record;
      const [a, b, c] = (task.query!.points as string[]).map((l) => (task.meta.points as Record<string, PointXY>)[l]!);
      const y = a!.y + ((b!.y - a!.y) / (b!.x - a!.x)) * (c!.x - a!.x);
      sum += Math.abs(y - c!.y);
    }
    return sum / 12;
  };
  assert.ok(mean(1) > 2 * mean(5), `d1 offset ${mean(1)} vs d5 ${mean(5)}`);
});

test('the checker refuses a wrong answer, an ambiguous point, a point off its dot, and a gold construction that does not show the answer', async () => {
  const rendered = await renderTask(build(spec('above_below', 2, 4)));
  const record = rendered.record;
  const issuesOf = async (r: TaskRecord) => (await checkTask(r, { rendered: { ...rendered, record: r } })).issues;
  assert.deepEqual(await issuesOf(record), []);

  const flipped = { ...record, answer: record.answer === 'above' ? 'below' : 'above' };
  assert.match((await issuesOf(flipped)).map((i) => `${i.check}: ${i.message}`).join('\n'), /answer: stored answer .* but the points give/);

  // C moved onto the line through A and B (1 px off it): the answer is no longer robust.
  const [la, lb, lc] = record.query!.points as [string, string, string];
  const pts = record.meta.points as Record<string, PointXY>;
  const a = pts[la]!, b = pts[lb]!, c = pts[lc]!;
  const onLine = { x: c.x, y: Math.round(a.y + ((b.y - a.y) * (c.x - a.x)) / (b.x - a.x)) + (record.answer === 'above' ? 1 : -1) };
  const ambiguous = { ...record, meta: { ...record.meta, points: { ...pts, [lc]: onLine } } };
  const messages = (await issuesOf(ambiguous)).map((i) => `${i.check}: ${i.message}`).join('\n');
  assert.match(messages, /ambiguous: the answer can change if the points move/);

  const shifted = { ...record, meta: { ...record.meta, points: { ...pts, [lc]: { x: c.x + 4, y: c.y } } } };
  assert.match((await issuesOf(shifted)).map((i) => i.message).join('\n'), /point .* is not on its dot/);

  // A line through the wrong points shows another answer, or none.
  const others = Object.keys(pts).filter((l) => l !== la && l !== lb && l !== lc);
  const wrongGold = { ...record, gold: [{ name: 'draw_line', arguments: { through: [lc, others[0]] } }] };
  assert.match((await issuesOf(wrongGold)).map((i) => i.message).join('\n'), /the gold construction shows .* on the edited image, but the answer is/);
});

test('gold calls name only the question\'s points and never carry the answer; locate is answered directly', () => {
  for (const family of GEOMETRY_FAMILIES) {
    for (let i = 0; i < 6; i++) {
      const task = build(spec(family, 3, 40 + i)).record;
      const named = new Set(task.query?.points);
      for (const call of task.gold ?? []) {
        const values = JSON.stringify(call.arguments).match(/"[^"]*"/g)?.map((v) => JSON.parse(v) as string).filter((v) => !['through', 'endpoints', 'center'].includes(v)) ?? [];
        for (const v of values) assert.ok(named.has(v), `${family}: gold names ${v}, not a point of the question`);
        assert.ok(!values.includes(task.answer as string), `${family}: gold carries the answer`);
      }
      // Where the answer's word appears in the question, every other option does too: it says nothing.
      const options = { above_below: ['above', 'below'], same_side: ['yes', 'no'], segments_cross: ['yes', 'no'] }[family as string];
      if (options) for (const option of options) assert.match(task.question, new RegExp(`\\b${option}\\b`), `${family} lists ${option}`);
      if (family === 'locate') assert.ok(!task.question.includes(task.answer as string) && !/\d/.test(task.question), 'locate: no coordinates in the question');
      if (family === 'locate') assert.deepEqual(task.gold, []);
    }
  }
});

test('locate records its tolerance, 3 % of the longer side, and keeps every other point three tolerances away', () => {
  for (const d of [1, 5] as const) {
    const task = build(spec('locate', d, 9)).record;
    const [w, h] = DIAGRAM_PROFILES[d].canvas;
    assert.equal(task.query?.tolerance_px, Math.max(4, Math.round(0.03 * Math.max(w, h))));
    const points = task.meta.points as Record<string, PointXY>;
    const asked = points[task.query!.points![0]!]!;
    assert.equal(task.answer, `(${asked.x}, ${asked.y})`);
    for (const [label, p] of Object.entries(points)) {
      if (label !== task.query!.points![0]) assert.ok(Math.hypot(p.x - asked.x, p.y - asked.y) >= 3 * task.query!.tolerance_px!, label);
    }
  }
});

test('a small canvas (the CPU demo\'s 224×112) still gives checked diagrams at difficulty 1', async () => {
  for (const family of ['above_below', 'same_side', 'locate'] as const) {
    const built = build(spec(family, 1, 3, [224, 112]));
    const rendered = await renderTask(built);
    assert.deepEqual((await checkTask(built.record, { rendered })).issues, [], family);
    assert.equal(rendered.image.width, 224);
  }
});

test('a geometry data set is byte-identical whatever the concurrency, and data check regenerates every task from its seed', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-geometry-set-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const options = { kind: 'geometry' as const, n: MIN_TASKS_FOR_WORKERS, seed: 17, split: 'train' as const, difficulty: [1, 5] as [1, 5], imageSize: null };
  const inline = await generateDataset(join(dir, 'a'), { ...options, concurrency: 1 });
  const threaded = await generateDataset(join(dir, 'b'), { ...options, concurrency: 2 });
  assert.deepEqual([inline.workers, threaded.workers, inline.generated], [0, 2, MIN_TASKS_FOR_WORKERS]);
  assert.ok((await readFile(join(dir, 'a', 'tasks.jsonl'))).equals(await readFile(join(dir, 'b', 'tasks.jsonl'))));
  const images = (await readdir(join(dir, 'a', 'images'))).sort();
  for (const name of images) assert.ok((await readFile(join(dir, 'a', 'images', name))).equals(await readFile(join(dir, 'b', 'images', name))), name);
  const tasks = await loadTasks(join(dir, 'a', 'tasks.jsonl'));
  assert.deepEqual(new Set(tasks.map((task) => task.family)), new Set(GEOMETRY_FAMILIES.filter((f) => f !== 'locate')), 'every construction family is asked; locate only by name');
  for (const task of tasks.slice(0, 25)) {
    const report = await checkTask(task, { taskDir: join(dir, 'a') });
    assert.deepEqual(report.issues, [], task.id);
  }
});
