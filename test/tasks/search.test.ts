import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDataCheckCommand } from '../../env/cli/data-check.js';
import { createDataGenCommand } from '../../env/cli/data-gen.js';
import { checkTask } from '../../env/tasks/check.js';
import { buildTask, renderTask, type TaskSpec } from '../../env/tasks/generate.js';
import { IllPosedQuestion } from '../../env/tasks/ill-posed.js';
import { renderWithLabelMap } from '../../env/tasks/paint.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { searchAnswer } from '../../env/tasks/search/answer.js';
import { budgetScale, judgeLegibility } from '../../env/tasks/search/legibility.js';
import { objectMark, type SearchObject } from '../../env/tasks/search/objects.js';
import { searchSizeProblem } from '../../env/tasks/search/build.js';
import type { Scene } from '../../env/tasks/scene.js';

const spec = (index: number, family: string, difficulty = 3): TaskSpec => ({ seed: 11, split: 'train', index, attempt: 0, kind: 'search', difficulty: difficulty as 3, imageSize: null, families: [family as never] });

/** The first task of `family` that builds (a roll may be refused and re-rolled, as data gen does). */
function firstOf(family: string, difficulty = 3): TaskRecord {
  for (let index = 0; index < 20; index++) {
    for (let attempt = 0; attempt < 4; attempt++) {
      try {
        return buildTask({ ...spec(index, family, difficulty), attempt }).record;
      } catch (err) {
        if (!(err instanceof IllPosedQuestion)) throw err;
      }
    }
  }
  throw new Error(`no ${family} task built`);
}

const objectsOf = (r: TaskRecord) => r.meta.objects as SearchObject[];
const centre = (o: SearchObject) => [(o.bbox.x1 + o.bbox.x2) / 2, (o.bbox.y1 + o.bbox.y2) / 2] as const;

// Independent readings of each family, straight from the question's wording and the objects.
test('text_on: the answer is the label of the only object of the named colour and shape', () => {
  const r = firstOf('text_on');
  const [, colour, shape] = /the (\w+) (\w+)\?/.exec(r.question) as RegExpExecArray;
  const named = objectsOf(r).filter((o) => o.colour === colour && o.shape === shape);
  assert.equal(named.length, 1, 'the description names one object');
  assert.equal(r.answer, named[0]!.text);
});

test('colour_of: the answer is the colour of the object carrying the quoted label, which no other carries', () => {
  const r = firstOf('colour_of');
  const [, shape, label] = /the (\w+) labelled "(\w+)"/.exec(r.question) as RegExpExecArray;
  const named = objectsOf(r).filter((o) => o.text === label);
  assert.equal(named.length, 1);
  assert.equal(named[0]!.shape, shape);
  assert.equal(r.answer, named[0]!.colour);
});

test('next_to: the answer is the label of the nearest object whose centre lies in the named object\'s span, on the named side', () => {
  for (let k = 0; k < 3; k++) {
    const r = buildTask({ ...spec(40 + k, 'next_to'), attempt: 0 }).record;
    const m = /with the (\w+) (\w+) \(.*nearest (?:to its )?(\w+)/.exec(r.question) as RegExpExecArray;
    const [, colour, shape, side] = m;
    const objects = objectsOf(r);
    const anchors = objects.filter((o) => o.colour === colour && o.shape === shape);
    assert.equal(anchors.length, 1);
    const a = anchors[0]!;
    const [ax, ay] = centre(a);
    const candidates = objects.filter((o) => o !== a).filter((o) => {
      const [cx, cy] = centre(o);
      if (side === 'left') return o.bbox.x2 <= a.bbox.x1 && cy >= a.bbox.y1 && cy < a.bbox.y2;
      if (side === 'right') return o.bbox.x1 >= a.bbox.x2 && cy >= a.bbox.y1 && cy < a.bbox.y2;
      if (side === 'above') return o.bbox.y2 <= a.bbox.y1 && cx >= a.bbox.x1 && cx < a.bbox.x2;
      return o.bbox.y1 >= a.bbox.y2 && cx >= a.bbox.x1 && cx < a.bbox.x2;
    });
    // Nearest by centre distance here (the generator measures box gaps): on the grid both agree.
    candidates.sort((p, q) => Math.hypot(centre(p)[0] - ax, centre(p)[1] - ay) - Math.hypot(centre(q)[0] - ax, centre(q)[1] - ay));
    assert.ok(candidates.length > 0);
    assert.equal(r.answer, candidates[0]!.text);
  }
});

test('how_many: the answer counts the objects of the named colour and shape, and the colour alone would count more', () => {
  const r = firstOf('how_many');
  const [, colour, shape] = /How many (\w+) (\w+)s are/.exec(r.question) as RegExpExecArray;
  const objects = objectsOf(r);
  const count = objects.filter((o) => o.colour === colour && o.shape === shape).length;
  assert.equal(r.answer, String(count));
  assert.ok(count >= 2);
  assert.ok(objects.filter((o) => o.colour === colour).length > count);
});

test('no answer is a word of its question, and every description names exactly the targets', () => {
  for (const family of ['text_on', 'colour_of', 'next_to', 'how_many']) {
    const r = firstOf(family, 5);
    assert.ok(!new RegExp(`\\b${r.answer as string}\\b`, 'i').test(r.question), `${r.question} / ${r.answer}`);
    assert.equal(searchAnswer(objectsOf(r), r.query!), r.answer);
  }
});

test('two objects of the named colour and shape make the question ill-posed', () => {
  const box = (x: number) => ({ x1: x, y1: 10, x2: x + 41, y2: 51 });
  const objects: SearchObject[] = [
    { shape: 'circle', colour: 'red', text: 'KT', bbox: box(10) },
    { shape: 'circle', colour: 'red', text: 'LX', bbox: box(100) },
  ];
  assert.throws(() => searchAnswer(objects, { family: 'text_on', colour: 'red', shape: 'circle' }), IllPosedQuestion);
  objects[1]!.colour = 'blue';
  assert.equal(searchAnswer(objects, { family: 'text_on', colour: 'red', shape: 'circle' }), 'KT');
});

test('each shape alone paints exactly the pixels of its meta box, its label included', async () => {
  for (const shape of ['circle', 'square', 'triangle', 'diamond'] as const) {
    for (const side of [35, 41, 45]) {
      const object: SearchObject = { shape, colour: 'blue', text: 'K7', bbox: { x1: 13, y1: 21, x2: 13 + side, y2: 21 + side } };
      const scene: Scene = { width: 80, height: 90, background: '#ffffff', layers: [objectMark(object, 0, 13)], meta: { unit: 'pixels', source: 'generator' } };
      const { image } = await renderWithLabelMap(scene);
      let x1 = Infinity, y1 = Infinity, x2 = -1, y2 = -1;
      for (let y = 0; y < image.height; y++) {
        for (let x = 0; x < image.width; x++) {
          const i = (y * image.width + x) * 3;
          if (image.data[i] === 255 && image.data[i + 1] === 255 && image.data[i + 2] === 255) continue;
          x1 = Math.min(x1, x); y1 = Math.min(y1, y); x2 = Math.max(x2, x + 1); y2 = Math.max(y2, y + 1);
        }
      }
      assert.deepEqual({ x1, y1, x2, y2 }, object.bbox, `${shape} ${side}`);
    }
  }
});

test('the zoom criterion on a hand-computed case', () => {
  // 2048×1536 under 50176 pixels: scale √(50176 / 3145728) = 0.12630; a 13 px font's cap height
  // 13 × 0.73 = 9.49 px is seen 1.20 px tall: illegible. A 100×100 crop zoomed 2.24× is 224×224,
  // within the budget: seen at 2.24, 9.49 × 2.24 = 21.3 px: legible. A 1024×768 crop zoomed 1×
  // is seen at √(50176 / 786432) = 0.2526: 2.40 px, still illegible.
  assert.ok(Math.abs(budgetScale(2048, 1536, 50176) - 0.126299) < 1e-5);
  const cap = 13 * 0.73;
  const small = judgeLegibility(2048, 1536, cap, [cap], [500, 500, 600, 600], 2.24, { maxPixels: 50176, legiblePx: 6 });
  assert.ok(Math.abs(small.atBudget - 1.1985) < 1e-3);
  assert.ok(Math.abs(small.inZoom - 21.26) < 0.01);
  assert.equal(small.ok, true);
  const wide = judgeLegibility(2048, 1536, cap, [cap], [0, 0, 1024, 768], 1, { maxPixels: 50176, legiblePx: 6 });
  assert.ok(Math.abs(wide.inZoom - 2.397) < 0.01);
  assert.equal(wide.ok, false);
  // A budget large enough to read the whole image makes the zoom unnecessary: refused up front.
  assert.equal(searchSizeProblem(null, [1, 5], { maxPixels: 50176, legiblePx: 6 }), null);
  assert.match(searchSizeProblem(null, [1, 1], { maxPixels: 3_000_000, legiblePx: 6 }) ?? '', /legible without a zoom/);
});

test('the checker refuses a task whose answer needs no zoom, and a wrong stored answer', async () => {
  const built = buildTask({ ...spec(3, 'text_on'), attempt: 0 });
  const rendered = await renderTask(built);
  assert.deepEqual((await checkTask(built.record, { rendered })).issues, []);
  const lax = await checkTask(built.record, { rendered, budget: { maxPixels: 4_000_000 } });
  assert.ok(lax.issues.some((i) => /no zoom needed/.test(i.message)));
  const wrong = await checkTask({ ...built.record, answer: 'XX' }, { rendered });
  assert.ok(wrong.issues.some((i) => i.check === 'answer'));
});

test('the same seed gives the same record and the same PNG bytes', async () => {
  const a = await renderTask(buildTask({ ...spec(5, 'how_many'), attempt: 0 }));
  const b = await renderTask(buildTask({ ...spec(5, 'how_many'), attempt: 0 }));
  assert.equal(JSON.stringify(a.record), JSON.stringify(b.record));
  assert.ok(a.png.equals(b.png));
  assert.deepEqual([a.image.width, a.image.height], [2048, 1536]);
});

test('data gen --kind search and data check pass on a few tasks; the same seed writes byte-identical files', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-search-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const quiet = { stdout: { write: () => true }, stderr: { write: () => true } };
  for (const out of ['a', 'b']) {
    assert.equal(await createDataGenCommand(quiet).run(['--kind', 'search', '--n', '4', '--seed', '9', '--out', join(dir, out)]), 0);
  }
  const text = await readFile(join(dir, 'a', 'tasks.jsonl'), 'utf8');
  assert.equal(text, await readFile(join(dir, 'b', 'tasks.jsonl'), 'utf8'));
  for (const name of await readdir(join(dir, 'a', 'images'))) assert.ok((await readFile(join(dir, 'a', 'images', name))).equals(await readFile(join(dir, 'b', 'images', name))));
  let report = '';
  const code = await createDataCheckCommand({ stdout: { write: (s: string) => (report += s) }, stderr: { write: () => true } }).run([join(dir, 'a', 'tasks.jsonl')]);
  assert.equal(code, 0, report);
  assert.match(report, /4 checked, 4 ok, 0 failed/);
  await assert.rejects(createDataGenCommand(quiet).run(['--kind', 'search', '--n', '1', '--seed', '1', '--image-size', '320x240', '--out', join(dir, 'c')]), /legible without a zoom/);
});
