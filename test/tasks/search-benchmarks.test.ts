import { test } from 'node:test';
import { whyNoGrounding } from '../../env/tasks/grounding-need.js';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { createDataConvertCommand } from '../../env/cli/data-convert.js';
import { writeConverted } from '../../env/tasks/loaders/common.js';
import { loadHrBench } from '../../env/tasks/loaders/hrbench.js';
import { loadVisualProbe } from '../../env/tasks/loaders/visualprobe.js';
import { loadVStar, orderOptions } from '../../env/tasks/loaders/vstar.js';
import { loadTasks } from '../../env/tasks/load.js';

type Ctx = { after: (fn: () => Promise<void>) => void };

async function tempDir(t: Ctx): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-search-bench-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A small photo stand-in: a grey field with a red square. */
async function jpeg(path: string, width = 200, height = 150): Promise<void> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="${width}" height="${height}" fill="#888"/><rect x="120" y="30" width="20" height="20" fill="red"/></svg>`;
  await sharp(Buffer.from(svg)).jpeg().toFile(path);
}

/** The letters of a converted question's "Choices:" line → option text, read from the text (not from the loader). */
function choicesOf(question: string): Map<string, string> {
  const line = question.split('\n').find((l) => l.startsWith('Choices: ')) ?? assert.fail(`no Choices line in ${question}`);
  return new Map([...line.slice('Choices: '.length).matchAll(/([A-F])\. (.*?)(?=\s{2}[A-F]\. |$)/g)].map((m) => [m[1] as string, m[2] as string]));
}

/** Two V* annotations as the release writes them (README of penghao-wu/vstar): the right option first, boxes [x, y, w, h]. */
const VSTAR = {
  direct_attributes: { stem: 'sa_4690', ann: { target_object: ['glove'], bbox: [[120, 30, 20, 20]], question: 'What is the color of the glove?', options: ['red', 'blue', 'white', 'black'] } },
  relative_position: { stem: 'sa_79958', ann: { target_object: ['steel ladder', 'wagon'], bbox: [[10, 40, 30, 90], [60, 50, 100, 70]], question: 'Is the steel ladder on the left or right side of the wagon?', options: ['The steel ladder is on the left side of the wagon.', 'The steel ladder is on the right side of the wagon.'] } },
};

async function vstarBench(dir: string): Promise<void> {
  for (const [subtask, { stem, ann }] of Object.entries(VSTAR)) {
    await mkdir(join(dir, subtask), { recursive: true });
    await jpeg(join(dir, subtask, `${stem}.jpg`));
    await writeFile(join(dir, subtask, `${stem}.json`), JSON.stringify(ann, null, 4));
  }
  // Not part of the 191 questions: the loader lists it as skipped.
  await mkdir(join(dir, 'OCR'));
}

test('V*: both subtask folders convert to multiple-choice records whose answer letter names the first (right) option and whose target boxes stay in pixels', async (t) => {
  const dir = await tempDir(t);
  await vstarBench(join(dir, 'vstar_bench'));
  const result = await loadVStar(join(dir, 'vstar_bench'));
  assert.deepEqual(result.skipped.map((s) => s.where), [join(dir, 'vstar_bench', 'OCR')]);
  await writeConverted(join(dir, 'out'), result);
  const tasks = await loadTasks(join(dir, 'out', 'tasks.jsonl'));
  assert.deepEqual(tasks.map((r) => [r.id, r.source, r.family, r.kind, r.difficulty]), [
    ['vstar-direct_attributes-sa_4690', 'vstar/direct_attributes', 'direct_attributes', 'chart', 0],
    ['vstar-relative_position-sa_79958', 'vstar/relative_position', 'relative_position', 'chart', 0],
  ]);
  for (const [i, r] of tasks.entries()) {
    const ann = Object.values(VSTAR)[i]?.ann ?? assert.fail(`no annotation for ${r.id}`);
    assert.ok(r.question.startsWith(`${ann.question}\nChoices: `), r.question);
    const choices = choicesOf(r.question);
    assert.deepEqual([...choices.values()].sort(), [...ann.options].sort());
    assert.equal(choices.get(r.answer as string), ann.options[0], `${r.id}: the answer letter names the right option`);
    // [x, y, w, h] → edges x2 = x + w, y2 = y + h, in the image's pixels.
    assert.deepEqual(r.meta.targets, ann.target_object.map((label: string, k: number) => {
      const [x, y, w, h] = ann.bbox[k] as number[];
      return { label, bbox: { x1: x, y1: y, x2: (x as number) + (w as number), y2: (y as number) + (h as number) } };
    }));
    assert.equal(r.meta.unit, 'pixels');
  }
  // The image is copied byte for byte.
  assert.deepEqual(await readFile(join(dir, 'out', tasks[0]?.image as string)), await readFile(join(dir, 'vstar_bench', 'direct_attributes', 'sa_4690.jpg')));
  // One subtask folder converts alone.
  assert.deepEqual((await loadVStar(join(dir, 'vstar_bench', 'relative_position'))).tasks.map((c) => c.record.id), ['vstar-relative_position-sa_79958']);
});

test('V* options: the order is the same for the same id, and the right one is not always A', () => {
  const options = ['right', 'wrong 1', 'wrong 2', 'wrong 3'];
  assert.deepEqual(orderOptions('vstar-direct_attributes-sa_1', options), orderOptions('vstar-direct_attributes-sa_1', options));
  const letters = Array.from({ length: 16 }, (_, i) => orderOptions(`vstar-direct_attributes-sa_${i}`, options));
  for (const { options: ordered, answer } of letters) assert.equal(ordered['ABCD'.indexOf(answer)], 'right');
  assert.ok(new Set(letters.map((l) => l.answer)).size >= 3, `answers over 16 ids: ${letters.map((l) => l.answer).join('')}`);
});

test('V* refuses unpaired files, a box count other than the names\', an empty box and a box outside the image, naming the file and field; a box past the edge is a warning', async (t) => {
  const dir = await tempDir(t);
  const folder = join(dir, 'direct_attributes');
  await mkdir(folder);
  await jpeg(join(folder, 'sa_1.jpg'));
  const write = (ann: Record<string, unknown>) => writeFile(join(folder, 'sa_1.json'), JSON.stringify({ ...VSTAR.direct_attributes.ann, ...ann }));
  await write({ bbox: [[1, 2, 3, 4], [5, 6, 7, 8]] });
  await assert.rejects(loadVStar(dir), /direct_attributes\/sa_1\.json: bbox: expected a list of 1 boxes \[x, y, w, h\], one per target_object entry, got/);
  await write({ bbox: [[10, 10, 0, 5]] });
  await assert.rejects(loadVStar(dir), /sa_1\.json: bbox\[0\]: expected a box \[x, y, w, h\] with a positive width and height, got \[10,10,0,5\]/);
  await write({ bbox: [[250, 10, 5, 5]] });
  await assert.rejects(loadVStar(dir), /sa_1\.json: bbox\[0\]: expected a box inside the 200×150 image, got \[250,10,5,5\]/);
  await write({ options: ['only one'] });
  await assert.rejects(loadVStar(dir), /sa_1\.json: options: expected a list of 2 to 6 choices/);
  await write({ bbox: [[190, 140, 20, 20]] });
  assert.deepEqual((await loadVStar(dir)).warnings.map((w) => w.reason), ['bbox[0] (glove) runs past the 200×150 image\'s edge: kept as annotated']);
  await jpeg(join(folder, 'sa_2.jpg'));
  await assert.rejects(loadVStar(dir), /direct_attributes\/sa_2\.jpg: \(annotation\): expected sa_2\.json beside the image/);
  await rm(join(folder, 'sa_2.jpg'));
  await rm(join(folder, 'sa_1.jpg'));
  await assert.rejects(loadVStar(dir), /direct_attributes\/sa_1\.json: \(image\): expected an image sa_1\.jpg \(or \.png\) beside the annotation/);
});

/** A PNG of `width`×`height` noisy pixels (noise keeps it large: the big one crosses the TSV reader's 1 MiB chunks). */
async function noisyPng(width: number, height: number, seed: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  let s = seed;
  for (let i = 0; i < pixels.length; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    pixels[i] = s >>> 24;
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
}

const HEADER = ['index', 'question', 'answer', 'category', 'A', 'B', 'C', 'D', 'cycle_category', 'image'];

/** An HR-Bench row in the hub card's column order; a field holding a tab, newline or quote is quoted as pandas writes it. */
function row(values: Record<string, string>): string {
  return HEADER.map((h) => {
    const v = values[h] ?? '';
    return /[\t\n"]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
  }).join('\t');
}

test('HR-Bench: the TSV converts row by row, base64 images decoded once each, quoted fields and image references read as VLMEvalKit reads them', async (t) => {
  const dir = await tempDir(t);
  const big = await noisyPng(700, 700, 7);
  const small = await noisyPng(40, 30, 9);
  assert.ok(big.toString('base64').length > 1 << 20, 'the big image crosses a chunk boundary');
  const question = 'What is written on the sign?\n(look at the "top" right)';
  const lines = [
    HEADER.join('\t'),
    row({ index: '0', question, answer: 'B', category: 'single', A: 'EXIT', B: 'OPEN', C: 'SALE', D: 'STOP', cycle_category: 'ABCD', image: big.toString('base64') }),
    row({ index: '1', question, answer: 'A', category: 'single', A: 'OPEN', B: 'SALE', C: 'STOP', D: 'EXIT', cycle_category: 'BCDA', image: big.toString('base64') }),
    row({ index: '2', question: 'How many boats?', answer: 'C', category: 'cross', A: '1', B: '2', C: '3', D: '4', cycle_category: 'ABCD', image: '3' }),
    row({ index: '3', question: 'Which boat is red?', answer: 'D', category: 'cross', A: 'left', B: 'middle', C: 'right', D: 'none', cycle_category: 'ABCD', image: small.toString('base64') }),
  ];
  await writeFile(join(dir, 'hr_bench_4k.tsv'), lines.join('\n') + '\n');
  const scratch = join(dir, 'scratch');
  const result = await loadHrBench(join(dir, 'hr_bench_4k.tsv'), scratch);
  await writeConverted(join(dir, 'out'), result);
  const tasks = await loadTasks(join(dir, 'out', 'tasks.jsonl'));
  assert.deepEqual(tasks.map((r) => [r.id, r.answer, r.family, r.source, r.meta.cycle_category]), [
    ['hrbench-4k-0', 'B', 'single', 'hrbench/4k', 'ABCD'],
    ['hrbench-4k-1', 'A', 'single', 'hrbench/4k', 'BCDA'],
    ['hrbench-4k-2', 'C', 'cross', 'hrbench/4k', 'ABCD'],
    ['hrbench-4k-3', 'D', 'cross', 'hrbench/4k', 'ABCD'],
  ]);
  assert.equal(tasks[0]?.question, `${question}\nChoices: A. EXIT  B. OPEN  C. SALE  D. STOP\nAnswer with the letter of the correct choice.`);
  // Both rotations share one decoded file; row 2 takes row 3's image through its index.
  assert.equal(tasks[0]?.image, tasks[1]?.image);
  assert.equal(tasks[2]?.image, tasks[3]?.image);
  assert.deepEqual(await readFile(join(dir, 'out', tasks[0]?.image as string)), big);
  assert.deepEqual(await readFile(join(dir, 'out', tasks[3]?.image as string)), small);
  assert.equal((await readdir(join(dir, 'out', 'images'))).length, 2);
});

test('HR-Bench refuses a wrong answer letter, a short row, a gap in the options, bytes that are no image and a dangling reference, naming the file, line and field', async (t) => {
  const dir = await tempDir(t);
  const image = (await noisyPng(8, 8, 1)).toString('base64');
  const ok = { index: '0', question: 'Q?\nsecond line', answer: 'A', category: 'single', A: 'a', B: 'b', C: 'c', D: 'd', cycle_category: 'ABCD', image };
  const tsv = async (...rows: Record<string, string>[]) => {
    const file = join(dir, 'hr_bench_8k.tsv');
    await writeFile(file, [HEADER.join('\t'), ...rows.map(row)].join('\n') + '\n');
    return file;
  };
  // Row 1 spans lines 2–3 (a quoted newline), so the second row starts on line 4.
  await assert.rejects(loadHrBench(await tsv(ok, { ...ok, index: '1', answer: 'E' }), join(dir, 's')), /hr_bench_8k\.tsv:4: answer: expected the letter of one of the 4 options \(A, B, C, D\), got "E"/);
  await assert.rejects(loadHrBench(await tsv(ok, { ...ok, index: '1', C: '' }), join(dir, 's')), /hr_bench_8k\.tsv:4: D: expected options filled from A without a gap \(C is empty\), got "d"/);
  await assert.rejects(loadHrBench(await tsv({ ...ok, image: 'x'.repeat(80) }), join(dir, 's')), /hr_bench_8k\.tsv:2: image: expected base64 of a JPEG or PNG image, got "60 bytes starting c71c71c7"/);
  await assert.rejects(loadHrBench(await tsv({ ...ok, image: '!'.repeat(80) }), join(dir, 's')), /hr_bench_8k\.tsv:2: image: expected the image as base64 \(or the index of a row holding it\)/);
  await assert.rejects(loadHrBench(await tsv(ok, { ...ok, index: '1', image: '7' }), join(dir, 's')), /hr_bench_8k\.tsv:4: image: expected base64 of the image, or the index of a row that holds one, got "7"/);
  const file = join(dir, 'hr_bench_8k.tsv');
  await writeFile(file, `${HEADER.join('\t')}\n0\tQ?\tA\n`);
  await assert.rejects(loadHrBench(file, join(dir, 's')), /hr_bench_8k\.tsv:2: \(row\): expected 10 tab-separated fields, as the header has, got "3 fields"/);
  await writeFile(file, `index\tquestion\tA\tB\timage\n`);
  await assert.rejects(loadHrBench(file, join(dir, 's')), /hr_bench_8k\.tsv:1: \(header\): expected HR-Bench's columns index, question, answer, A, B, image \(missing answer\)/);
});

/** VisualProbe records as Mini-o3's docs/mini_o3_demo.md gives them: images relative to the folder above the split folders. */
function probe(docId: string | number, split: string | undefined, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { images: [`VisualProbe_${split ?? 'Easy'}/data/${docId}.jpg`], doc_id: docId, problem: `<image>\nWhat is the number on the bus ${docId}?`, solution: `${docId}7`, ...(split ? { data_source: `visual_probe_${split.toLowerCase()}` } : {}), ...extra };
}

async function visualProbe(base: string): Promise<void> {
  for (const [split, records] of [['Hard', [probe('h1', 'Hard'), probe(42, 'Hard')]], ['Easy', [probe('e1', undefined)]]] as const) {
    await mkdir(join(base, `VisualProbe_${split}`, 'data'), { recursive: true });
    for (const r of records) await jpeg(join(base, `VisualProbe_${split}`, 'data', `${r.doc_id}.jpg`));
    await writeFile(join(base, `VisualProbe_${split}`, 'val.json'), JSON.stringify(records, null, 2));
  }
}

test('VisualProbe: the split folders convert, the split read from data_source (or the folder), the question without its <image> placeholder', async (t) => {
  const dir = await tempDir(t);
  await visualProbe(join(dir, 'base'));
  const result = await loadVisualProbe(join(dir, 'base'));
  await writeConverted(join(dir, 'out'), result);
  const tasks = await loadTasks(join(dir, 'out', 'tasks.jsonl'));
  assert.deepEqual(tasks.map((r) => [r.id, r.question, r.answer, r.source, r.family, r.kind]), [
    ['visualprobe-easy-e1', 'What is the number on the bus e1?', 'e17', 'visualprobe/easy', 'easy', 'chart'],
    ['visualprobe-hard-h1', 'What is the number on the bus h1?', 'h17', 'visualprobe/hard', 'hard', 'chart'],
    ['visualprobe-hard-42', 'What is the number on the bus 42?', '427', 'visualprobe/hard', 'hard', 'chart'],
  ]);
  assert.deepEqual(await readFile(join(dir, 'out', tasks[2]?.image as string)), await readFile(join(dir, 'base', 'VisualProbe_Hard', 'data', '42.jpg')));
  // A split folder, or its val.json, converts alone.
  assert.equal((await loadVisualProbe(join(dir, 'base', 'VisualProbe_Hard'))).tasks.length, 2);
  assert.equal((await loadVisualProbe(join(dir, 'base', 'VisualProbe_Hard', 'val.json'))).tasks.length, 2);
});

test('VisualProbe refuses another data set\'s data_source, an untold split, two images, no solution and a missing image, naming the file, item and field', async (t) => {
  const dir = await tempDir(t);
  await visualProbe(join(dir, 'base'));
  const file = join(dir, 'base', 'VisualProbe_Hard', 'val.json');
  const write = (r: Record<string, unknown>) => writeFile(file, JSON.stringify([probe('h1', 'Hard'), r]));
  await write(probe('h1', 'Hard', { data_source: 'vstar_bench' }));
  await assert.rejects(loadVisualProbe(file), /VisualProbe_Hard\/val\.json \[item 1\]: data_source: expected visual_probe_easy, visual_probe_medium, visual_probe_hard or visual_probe_train .*, got "vstar_bench"/);
  await write(probe('h1', 'Hard', { images: ['VisualProbe_Hard/data/h1.jpg', 'VisualProbe_Hard/data/42.jpg'] }));
  await assert.rejects(loadVisualProbe(file), /val\.json \[item 1\]: images: expected a list of one image path/);
  await write(probe('h1', 'Hard', { solution: '' }));
  await assert.rejects(loadVisualProbe(file), /val\.json \[item 1\]: solution: expected the answer text, got ""/);
  await write(probe('nowhere', 'Hard'));
  await assert.rejects(loadVisualProbe(file), /val\.json \[item 1\]: images\[0\]: expected an image file at one of .*VisualProbe_Hard\/data\/nowhere\.jpg/);
  const loose = join(dir, 'loose.json');
  await writeFile(loose, JSON.stringify([probe('e1', undefined)]));
  await assert.rejects(loadVisualProbe(loose), /loose\.json \[item 0\]: data_source: expected visual_probe_easy, .* \(or the file in a VisualProbe_Easy\/_Medium\/_Hard\/_train folder\), got nothing/);
});

test('vistool data convert --from vstar, hrbench and visualprobe write records loadTasks accepts', async (t) => {
  const dir = await tempDir(t);
  await vstarBench(join(dir, 'vstar_bench'));
  await visualProbe(join(dir, 'base'));
  const png = await noisyPng(16, 12, 3);
  await writeFile(join(dir, 'hr_bench_8k.tsv'), [HEADER.join('\t'), row({ index: '5', question: 'Q?', answer: 'B', category: 'cross', A: 'x', B: 'y', C: '', D: '', cycle_category: 'AB', image: png.toString('base64') })].join('\n') + '\n');
  const runs: [string, string, number][] = [['vstar', join(dir, 'vstar_bench'), 2], ['hrbench', join(dir, 'hr_bench_8k.tsv'), 1], ['visualprobe', join(dir, 'base'), 3]];
  for (const [format, src, n] of runs) {
    const out: string[] = [];
    const command = createDataConvertCommand({ stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => true } });
    assert.equal(await command.run(['--from', format, src, '--out', join(dir, format)]), 0);
    assert.equal(JSON.parse(out.join('')).tasks, n, format);
    const converted = await loadTasks(join(dir, format, 'tasks.jsonl'));
    assert.equal(converted.length, n, format);
    // The env server never sends these photographs to OCR grounding (tasks/grounding-need.ts).
    for (const task of converted) assert.match(whyNoGrounding(task) ?? '', new RegExp(`a ${format} photograph's tools take boxes`), task.id);
  }
  const [hr] = await loadTasks(join(dir, 'hrbench', 'tasks.jsonl'));
  assert.deepEqual([hr?.id, hr?.answer, hr?.question], ['hrbench-8k-5', 'B', 'Q?\nChoices: A. x  B. y\nAnswer with the letter of the correct choice.']);
  assert.deepEqual(await readFile(join(dir, 'hrbench', hr?.image as string)), png);
  const command = createDataConvertCommand({ stdout: { write: () => true }, stderr: { write: () => true } });
  await assert.rejects(command.run(['--from', 'vstar', join(dir, 'nothing'), '--out', join(dir, 'x')]), /nothing: expected V\*'s benchmark folder/);
});
