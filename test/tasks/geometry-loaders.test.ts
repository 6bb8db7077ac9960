import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { createDataConvertCommand } from '../../env/cli/data-convert.js';
import { loadTasks } from '../../env/tasks/load.js';
import { loadGeometry3K } from '../../env/tasks/loaders/geometry3k.js';
import { loadGeoQA } from '../../env/tasks/loaders/geoqa.js';
import { EnvServer } from '../../env/server/server.js';
import { createScorer } from '../../env/server/scorer.js';

type Ctx = { after: (fn: () => Promise<void>) => void };

async function tempDir(t: Ctx): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-geo-loaders-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function diagram(path: string): Promise<void> {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="90"><rect width="120" height="90" fill="white"/><polyline points="10,80 60,10 110,80 10,80" fill="none" stroke="black" stroke-width="2"/></svg>';
  await sharp(Buffer.from(svg)).png().toFile(path);
}

/** Two Geometry3K problems in the release's layout: <split>/<id>/data.json + img_diagram.png (fields as Inter-GPS publishes them). */
async function geometry3k(dir: string): Promise<void> {
  const problems = [
    { split: 'train', id: 11, text: 'In \\odot X, A B = 30, C D = 30, and m \\widehat C Z = 40. Find m \\widehat A B.', choices: ['30', '40', '60', '80'], answer: 'D', goal: ['Angle'] },
    { split: 'test', id: 2401, text: 'Find x.', choices: [3, 4.5, 6, 9], answer: 'b', goal: ['Length'] },
  ];
  for (const p of problems) {
    const folder = join(dir, p.split, String(p.id));
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'data.json'), JSON.stringify({
      problem_text: p.text, choices: p.choices, answer: p.answer, detailed_solution: ' ', problem_type_graph: ['Circle'], problem_type_goal: p.goal,
      source: 'textbook2_chapter10.pdf page 21', comment: '', id: p.id, annot_id: 'x', is_standard: false, compact_choices: p.choices,
      precise_value: [30, 40, 60, 80], rough_value: [30, 40, 60, 80], compact_text: p.text, annotat_text: p.text, unit: '', img_width: 120, img_height: 90, data_type: p.split,
    }, null, 2));
    await diagram(join(folder, 'img_diagram.png'));
  }
}

test('Geometry3K: the release folder converts to lettered multiple-choice geometry tasks without metadata', async (t) => {
  const dir = await tempDir(t);
  await geometry3k(dir);
  const result = await loadGeometry3K(dir);
  assert.deepEqual(result.tasks.map((c) => [c.record.id, c.record.answer, c.record.kind, c.record.family]), [
    ['geometry3k-train-11', 'D', 'geometry', 'Angle'],
    ['geometry3k-test-2401', 'B', 'geometry', 'Length'],
  ]);
  assert.equal(result.tasks[1]?.record.question, 'Find x.\nChoices: A. 3  B. 4.5  C. 6  D. 9\nAnswer with the letter of the correct choice.');
  assert.deepEqual(result.tasks[0]?.record.meta, { unit: 'pixels', source: 'dataset' });
  // One split folder, or one problem folder, works too.
  assert.equal((await loadGeometry3K(join(dir, 'test'))).tasks.length, 1);
  assert.equal((await loadGeometry3K(join(dir, 'train', '11'))).tasks[0]?.record.id, 'geometry3k-train-11');
});

test('Geometry3K refuses an answer that is no choice\'s letter and a problem without its diagram, naming the file and field', async (t) => {
  const dir = await tempDir(t);
  await geometry3k(dir);
  const file = join(dir, 'train', '11', 'data.json');
  const data = JSON.parse(await readFile(file, 'utf8'));
  await writeFile(file, JSON.stringify({ ...data, answer: 'E' }));
  await assert.rejects(loadGeometry3K(dir), /train\/11\/data\.json: answer: expected the letter of one of the 4 choices \(A, B, C, D\), got "E"/);
  await writeFile(file, JSON.stringify(data));
  await rm(join(dir, 'test', '2401', 'img_diagram.png'));
  await assert.rejects(loadGeometry3K(dir), /test\/2401\/data\.json: img_diagram\.png: expected the diagram beside data\.json/);
});

/** GeoQA records with the fields its reader uses (id, subject, choices, label from 0, formal_point, comment, ...). */
function geoqaRecord(id: number, label: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, subject: '如图，AB是⊙O的直径，∠ABC=40°，则∠BAC的度数是()', choices: ['40°', '50°', '60°', '80°'], label, comment: '解：...', formal_point: ['圆周角', '直角三角形'],
    manual_program: ['g_minus', 'C_3', 'N_0'], numbers: [40], choice_nums: [40, 50, 60, 80], token_list: ['如图'], ...extra };
}

test('GeoQA: a JSONL export and a folder of per-problem files convert, the label index becoming the choice letter', async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, 'image'));
  for (const id of [7, 8, 9]) await diagram(join(dir, 'image', `${id}.png`));
  await writeFile(join(dir, 'test.jsonl'), [geoqaRecord(7, 1), geoqaRecord(8, 3)].map((r) => JSON.stringify(r)).join('\n'));
  const exported = await loadGeoQA(join(dir, 'test.jsonl'));
  assert.deepEqual(exported.tasks.map((c) => [c.record.id, c.record.answer, c.record.kind, c.record.source]), [['geoqa-7', 'B', 'geometry', 'geoqa'], ['geoqa-8', 'D', 'geometry', 'geoqa']]);
  assert.equal(exported.tasks[0]?.record.family, '圆周角, 直角三角形');
  assert.match(exported.tasks[0]?.record.question ?? '', /^如图，AB是⊙O的直径.*\nChoices: A\. 40° {2}B\. 50° {2}C\. 60° {2}D\. 80°\n/);
  await mkdir(join(dir, 'json'));
  await writeFile(join(dir, 'json', '9.json'), JSON.stringify(geoqaRecord(9, 0)));
  const raw = await loadGeoQA(join(dir, 'json'));
  assert.deepEqual(raw.tasks.map((c) => [c.record.id, c.record.answer]), [['geoqa-9', 'A']]);
  assert.equal(raw.tasks[0]?.sourceImage, join(dir, 'image', '9.png'));
});

test('GeoQA refuses pickles, a label outside the choices, the undocumented "lable", and a missing image', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'train.pk'), 'not read');
  await assert.rejects(loadGeoQA(join(dir, 'train.pk')), /pickles are not read \(unpickling runs code\)/);
  await diagram(join(dir, '5.png'));
  await writeFile(join(dir, 'bad.json'), JSON.stringify([geoqaRecord(5, 4)]));
  await assert.rejects(loadGeoQA(join(dir, 'bad.json')), /bad\.json \[item 0\]: label: expected the index of the correct choice, 0 to 3, got 4/);
  const { label: _label, ...withoutLabel } = geoqaRecord(5, 1);
  await writeFile(join(dir, 'lable.json'), JSON.stringify([{ ...withoutLabel, lable: 2 }]));
  await assert.rejects(loadGeoQA(join(dir, 'lable.json')), /label: expected "label" .* this record has "lable", whose base \(0 or 1\) GeoQA does not document/);
  await writeFile(join(dir, 'noimage.json'), JSON.stringify([geoqaRecord(6, 1)]));
  await assert.rejects(loadGeoQA(join(dir, 'noimage.json')), /noimage\.json \[item 0\]: image: expected an image file at one of .*6\.png/);
});

test('data convert --from geometry3k writes checked records that the env server opens with the diagram tools and scores by letter', async (t) => {
  const dir = await tempDir(t);
  await geometry3k(join(dir, 'src'));
  const out: string[] = [];
  const command = createDataConvertCommand({ stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => true } });
  assert.equal(await command.run(['--from', 'geometry3k', join(dir, 'src'), '--out', join(dir, 'out')]), 0);
  assert.deepEqual(JSON.parse(out.join('')), { out: join(dir, 'out'), tasks: 2, images: 2, warnings: 0, skipped: 0 });
  const tasks = await loadTasks(join(dir, 'out', 'tasks.jsonl'));
  const server = new EnvServer({ token: 'token-geometry3k-000', root: join(dir, 'out'), imagesDir: join(dir, 'run'), scorer: createScorer(undefined), log: () => {} });
  const url = await server.start();
  t.after(() => server.stop());
  const post = async (path: string, body: unknown) => (await fetch(url + path, { method: 'POST', headers: { authorization: 'Bearer token-geometry3k-000' }, body: JSON.stringify(body) })).json() as Promise<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const started = await post('/v1/episodes', { task: tasks[0] });
  assert.equal(started.kind, 'geometry');
  assert.deepEqual(started.tool_names, ['draw_line', 'draw_segment', 'draw_circle', 'mark_point', 'zoom_in']);
  // No labelled points here: a label is an E4, coordinates work.
  const byLabel = await post(`/v1/episodes/${started.episode_id}/step`, { call: { name: 'draw_line', arguments: { through: ['A', 'B'] } } });
  assert.match(byLabel.observation.messages[0].content[0].text, /ERROR \[E4\]: through\[0\]: this image has no labelled points/);
  const byXY = await post(`/v1/episodes/${started.episode_id}/step`, { call: { name: 'draw_line', arguments: { through: [[10, 80], [110, 80]] } } });
  assert.equal(byXY.info.calls[0].ok, true);
  await post(`/v1/episodes/${started.episode_id}/step`, { text: '<answer>D</answer>' });
  const score = await post(`/v1/episodes/${started.episode_id}/score`, {});
  assert.equal(score.correct, true);
});

/** The letter a GeoQA label names, written here from the label's meaning (index from 0 into the choices), not taken from the loader. */
const letterOfLabel = (label: number): string => ['A', 'B', 'C', 'D'][label] as string;

test('data convert --from geoqa writes geometry records without points that the env server plays with tools off and scores by the label\'s letter', async (t) => {
  const dir = await tempDir(t);
  const src = join(dir, 'src');
  await mkdir(join(src, 'image'), { recursive: true });
  const labels = { 7: 2, 8: 0 };
  for (const id of Object.keys(labels)) await diagram(join(src, 'image', `${id}.png`));
  await writeFile(join(src, 'test.jsonl'), Object.entries(labels).map(([id, label]) => JSON.stringify(geoqaRecord(Number(id), label))).join('\n') + '\n');
  const out: string[] = [];
  const command = createDataConvertCommand({ stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => true } });
  assert.equal(await command.run(['--from', 'geoqa', join(src, 'test.jsonl'), '--out', join(dir, 'out')]), 0);
  assert.deepEqual(JSON.parse(out.join('')), { out: join(dir, 'out'), tasks: 2, images: 2, warnings: 0, skipped: 0 });
  const tasks = await loadTasks(join(dir, 'out', 'tasks.jsonl'));
  assert.deepEqual(tasks.map((r) => [r.id, r.answer, r.kind]), [['geoqa-7', letterOfLabel(2), 'geometry'], ['geoqa-8', letterOfLabel(0), 'geometry']]);
  // GeoQA carries no point coordinates: the records must not claim any.
  for (const r of tasks) assert.equal(r.meta?.points, undefined, `${r.id} has meta.points`);
  const server = new EnvServer({ token: 'token-geoqa-000000', root: join(dir, 'out'), imagesDir: join(dir, 'run'), scorer: createScorer(undefined), log: () => {} });
  const url = await server.start();
  t.after(() => server.stop());
  const post = async (path: string, body: unknown) => (await fetch(url + path, { method: 'POST', headers: { authorization: 'Bearer token-geoqa-000000' }, body: JSON.stringify(body) })).json() as Promise<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const play = async (task: unknown, letter: string) => {
    const started = await post('/v1/episodes', { task, options: { tools: false } });
    assert.equal(started.kind, 'geometry');
    assert.deepEqual(started.tool_names, []);
    await post(`/v1/episodes/${started.episode_id}/step`, { text: `<answer>${letter}</answer>` });
    return post(`/v1/episodes/${started.episode_id}/score`, {});
  };
  const right = await play(tasks[0], letterOfLabel(2));
  assert.equal(right.correct, true);
  assert.equal(right.components.accuracy, 1);
  const wrong = await play(tasks[0], letterOfLabel(1));
  assert.equal(wrong.correct, false);
  assert.equal(wrong.components.accuracy, 0);
  assert.ok(right.reward > wrong.reward, `a right letter earns more (${right.reward}) than a wrong one (${wrong.reward})`);
  // The second record's label 0 is A: answering A is right there.
  assert.equal((await play(tasks[1], letterOfLabel(0))).correct, true);
});

test('vistool data convert --from geoqa refuses a label outside the choices, naming the file, line and field, and writes nothing', async (t) => {
  const dir = await tempDir(t);
  await diagram(join(dir, '7.png'));
  await diagram(join(dir, '8.png'));
  // The second record's label 4 is past the last of its four choices (0 to 3).
  await writeFile(join(dir, 'test.jsonl'), [geoqaRecord(7, 1), geoqaRecord(8, 4)].map((r) => JSON.stringify(r)).join('\n') + '\n');
  const refusal = /test\.jsonl:2: label: expected the index of the correct choice, 0 to 3, got 4/;
  const command = createDataConvertCommand({ stdout: { write: () => true }, stderr: { write: () => true } });
  await assert.rejects(command.run(['--from', 'geoqa', join(dir, 'test.jsonl'), '--out', join(dir, 'out')]), refusal);
  // The installed entry point (the bundle `npm run build` writes): exit 1 and the same message on stderr.
  const cli = spawnSync(process.execPath, [join(__dirname, '..', '..', 'bin', 'vistool.js'), 'data', 'convert', '--from', 'geoqa', join(dir, 'test.jsonl'), '--out', join(dir, 'out')], { encoding: 'utf8' });
  assert.equal(cli.status, 1, cli.stderr);
  assert.match(cli.stderr, /^vistool data convert: .*test\.jsonl:2: label: expected the index of the correct choice, 0 to 3, got 4\n$/);
  await assert.rejects(stat(join(dir, 'out')), { code: 'ENOENT' });
});
