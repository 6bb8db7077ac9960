import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTask, renderTask, type RenderedTask } from '../../env/tasks/generate.js';
import { checkTask } from '../../env/tasks/check.js';
import { loadTasks } from '../../env/tasks/load.js';
import sharp from 'sharp';
import { loadCharXiv, numberInstruction, subplotPrefix } from '../../env/tasks/loaders/charxiv.js';
import { loadChartQA } from '../../env/tasks/loaders/chartqa.js';
import { loadTableVqaBench, subsetOf } from '../../env/tasks/loaders/tablevqa-bench.js';
import { scoreAnswer } from '../../env/rewards/answer.js';
import { writeConverted } from '../../env/tasks/loaders/common.js';
import { loadOpenThinkIMG } from '../../env/tasks/loaders/openthinkimg.js';
import { loadReFocus } from '../../env/tasks/loaders/refocus.js';
import { loadVerl } from '../../env/tasks/loaders/verl.js';
import { loadVTool, withoutHeaderRow } from '../../env/tasks/loaders/vtool.js';
import { resolveMetadata, type BBox } from '../../env/tools/metadata.js';
import { decodeImage, type RgbImage } from '../../env/core/image.js';
import { runToolCall } from '../../env/tools/registry.js';
import { createDataConvertCommand } from '../../env/cli/data-convert.js';

type Ctx = { after: (fn: () => Promise<void>) => void };

async function tempDir(t: Ctx): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-loaders-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function chart(kind: 'vbar' | 'hbar' | 'table', index = 0): Promise<RenderedTask> {
  return renderTask(buildTask({ seed: 8, split: 'test', index, attempt: 0, kind, difficulty: 2, imageSize: null }));
}

/** The rendered tick labels' ink boxes, as a ChartQA annotation lists them ({x, y, w, h}). */
function tickBoxes(task: RenderedTask, prefix: string): { values: string[]; bboxes: { x: number; y: number; w: number; h: number }[] } {
  const values: string[] = [];
  const bboxes: { x: number; y: number; w: number; h: number }[] = [];
  task.labelMap.marks.forEach((m, i) => {
    if (!m.name.startsWith(prefix)) return;
    const e = task.labelMap.extents[i]!;
    values.push(m.name.slice(prefix.length + 2, -1));
    bboxes.push({ x: e.x1, y: e.y1, w: e.x2 - e.x1, h: e.y2 - e.y1 });
  });
  return { values, bboxes };
}

function plotAsChartQA(b: BBox) {
  return { x: b.x1, y: b.y1, w: b.x2 - b.x1, h: b.y2 - b.y1 };
}

test('ChartQA: bands are built from the annotation’s tick labels the way ReFocus does, close to the exact ones', async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, 'png'));
  await mkdir(join(dir, 'annotations'));
  const vbar = await chart('vbar', 1);
  const hbar = await chart('hbar', 2);
  await writeFile(join(dir, 'png', 'v1.png'), vbar.png);
  await writeFile(join(dir, 'png', 'h1.png'), hbar.png);
  await writeFile(join(dir, 'png', 'p1.png'), vbar.png);
  const vTicks = tickBoxes(vbar, 'x tick label');
  const hTicks = tickBoxes(hbar, 'y tick label');
  await writeFile(join(dir, 'annotations', 'v1.json'), JSON.stringify({ type: 'v_bar', general_figure_info: { figure_info: { bbox: plotAsChartQA(vbar.record.meta.plot_bbox as BBox) }, x_axis: { major_labels: vTicks }, y_axis: { major_labels: { values: ['0', '100'], bboxes: [{ x: 1, y: 200, w: 8, h: 10 }, { x: 1, y: 40, w: 20, h: 10 }] } } } }));
  // ReFocus reads an h_bar's categories from x_axis ("x and y are reversed").
  await writeFile(join(dir, 'annotations', 'h1.json'), JSON.stringify({ type: 'h_bar', general_figure_info: { figure_info: { bbox: plotAsChartQA(hbar.record.meta.plot_bbox as BBox) }, x_axis: { major_labels: hTicks } } }));
  await writeFile(join(dir, 'annotations', 'p1.json'), JSON.stringify({ type: 'pie', general_figure_info: { figure_info: { bbox: { x: 0, y: 0, w: 100, h: 100 } } } }));
  await writeFile(join(dir, 'test_augmented.json'), JSON.stringify([
    { imgname: 'v1.png', query: vbar.record.question, label: vbar.record.answer },
    { imgname: 'h1.png', query: hbar.record.question, label: '12' },
    { imgname: 'p1.png', query: 'What share is blue?', label: '40' },
  ]));
  const result = await loadChartQA(dir);
  assert.deepEqual(result.tasks.map((x) => x.record.kind), ['vbar', 'hbar', 'chart']);
  const [v, h, p] = result.tasks.map((x) => x.record);
  assert.equal(v!.source, 'chartqa');
  assert.equal(v!.meta.unit, 'pixels');
  const exact = vbar.record.meta.x_values_bbox as Record<string, BBox>;
  const built = v!.meta.x_values_bbox as Record<string, BBox>;
  assert.deepEqual(Object.keys(built), Object.keys(exact));
  for (const [label, box] of Object.entries(built)) {
    const e = exact[label]!;
    assert.ok(Math.abs(box.x1 - e.x1) <= 2 && Math.abs(box.x2 - e.x2) <= 2, `${label}: ${JSON.stringify(box)} vs exact ${JSON.stringify(e)}`);
    assert.equal(box.y1, e.y1);
    assert.ok(box.y2 <= e.y2 && box.y2 >= e.y2 - 4, `${label}: bottom ${box.y2} vs ${e.y2}`);
  }
  const hb = h!.meta.y_values_bbox as Record<string, BBox>;
  assert.deepEqual(Object.keys(hb).sort(), Object.keys(hbar.record.meta.y_values_bbox as object).sort());
  for (const box of Object.values(hb)) assert.deepEqual([box.x1, box.x2], [5, hbar.image.width - 5]);
  assert.deepEqual(p!.meta, { unit: 'pixels', source: 'dataset', figure_bbox: { x1: 0, y1: 0, x2: 100, y2: 100 } });
  // The converted set loads, and its metadata works with the tools.
  const out = join(dir, 'out');
  const summary = await writeConverted(out, result);
  assert.equal(summary.images, 3);
  const tasks = await loadTasks(join(out, 'tasks.jsonl'));
  assert.equal(tasks.length, 3);
  for (const task of tasks) assert.deepEqual((await checkTask(task, { taskDir: out })).issues, [], task.id);
});

test('ChartQA errors name the file, the item and the field', async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, 'png'));
  await writeFile(join(dir, 'q.json'), JSON.stringify([{ imgname: 'missing.png', query: 'Q?', label: '1' }, { query: 'no image name' }]));
  await assert.rejects(loadChartQA(join(dir, 'q.json')), /q\.json \[item 0\]: imgname: expected an image at .*missing\.png/);
  await writeFile(join(dir, 'q.json'), JSON.stringify([{ query: 'no image name', label: '1' }]));
  await assert.rejects(loadChartQA(join(dir, 'q.json')), /q\.json \[item 0\]: imgname: expected a non-empty string, got nothing/);
});

test('ReFocus vcot: normalised boxes are kept normalised and resolve to the same pixels', async (t) => {
  const dir = await tempDir(t);
  const vbar = await chart('vbar', 3);
  await mkdir(join(dir, 'data', 'png'), { recursive: true });
  await writeFile(join(dir, 'data', 'png', 'c.png'), vbar.png);
  const { width, height } = vbar.image;
  const norm = (b: BBox) => ({ x1: b.x1 / width, y1: b.y1 / height, x2: b.x2 / width, y2: b.y2 / height });
  const x = Object.fromEntries(Object.entries(vbar.record.meta.x_values_bbox as Record<string, BBox>).map(([k, b]) => [k, norm(b)]));
  const line = { id: 'test-1', query: vbar.record.question, answer: 'A|||B', source: 'v_bar', x_values_bbox: x, y_values_bbox: {}, figure_bbox: norm(vbar.record.meta.figure_bbox as BBox), conversations: [{ images: ['data/png/c.png'], user: 'q', assistant: 'a' }], focus_areas: [] };
  await writeFile(join(dir, 'train.jsonl'), JSON.stringify(line) + '\n' + JSON.stringify({ ...line, source: 'pie' }) + '\n');
  await assert.rejects(loadReFocus(join(dir, 'train.jsonl')), /train\.jsonl:2: source: expected "h_bar" or "v_bar", got "pie"/);
  await writeFile(join(dir, 'train.jsonl'), JSON.stringify(line) + '\n');
  const result = await loadReFocus(join(dir, 'train.jsonl'));
  const record = result.tasks[0]!.record;
  assert.equal(record.kind, 'vbar');
  assert.deepEqual(record.answer, ['A', 'B']);
  assert.equal(record.meta.unit, 'normalized');
  const resolved = resolveMetadata(record.meta, width, height);
  assert.deepEqual(resolved.x_values_bbox, vbar.record.meta.x_values_bbox);
  // An image path relative to somewhere else needs --images-root, and the error says so.
  await writeFile(join(dir, 'other.jsonl'), JSON.stringify({ ...line, conversations: [{ images: ['png/c.png'] }] }) + '\n');
  await assert.rejects(loadReFocus(join(dir, 'other.jsonl')), /other\.jsonl:1: conversations\[0\]\.images\[0\]: expected an image file at .*png\/c\.png \(set --images-root/);
  const rooted = await loadReFocus(join(dir, 'other.jsonl'), join(dir, 'data'));
  assert.equal(rooted.tasks.length, 1);
});

test('VTool-R1 rows: table metadata (row_starters) and chart metadata with the {"x1": "none"} placeholder', async (t) => {
  const dir = await tempDir(t);
  const table = await chart('table', 4);
  const vbar = await chart('vbar', 5);
  await writeFile(join(dir, 't.png'), table.png);
  await writeFile(join(dir, 'v.png'), vbar.png);
  const rows = [
    { figure_id: 'nu-1', figure_path: 't.png', query: table.record.question, answer: table.record.answer, metadata: JSON.stringify({ type: 'table', figure_bbox: table.record.meta.figure_bbox, columns_bbox: table.record.meta.columns_bbox, row_starters: table.record.meta.rows_bbox }) },
    { figure_id: 'nu-1', figure_path: 'v.png', query: 'Second question on one figure?', answer: '3', metadata: { type: 'v_bar', figure_bbox: vbar.record.meta.figure_bbox, x_values_bbox: vbar.record.meta.x_values_bbox, y_values_bbox: { x1: 'none' } } },
  ];
  await writeFile(join(dir, 'rows.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
  const result = await loadVTool(join(dir, 'rows.jsonl'));
  const [tr, vr] = result.tasks.map((x) => x.record);
  assert.equal(tr!.kind, 'table');
  assert.deepEqual(tr!.meta.rows_bbox, table.record.meta.rows_bbox);
  assert.deepEqual(tr!.meta.columns_bbox, table.record.meta.columns_bbox);
  assert.equal(vr!.kind, 'vbar');
  assert.equal(vr!.meta.y_values_bbox, undefined);
  const out = join(dir, 'out');
  await writeConverted(out, result);
  const loaded = await loadTasks(join(out, 'tasks.jsonl'));
  assert.deepEqual(loaded.map((x) => x.id), ['vtool-nu-1', 'vtool-nu-1-2'], 'repeated source ids are numbered');
  await writeFile(join(dir, 'bad.jsonl'), JSON.stringify({ ...rows[0], metadata: '{not json' }) + '\n');
  await assert.rejects(loadVTool(join(dir, 'bad.jsonl')), /bad\.jsonl:1: metadata: expected a JSON string holding an object/);
});

test('VTool-R1 rows in the parquet shape (datasets structs: nulls for other rows\' labels, the placeholder key beside real bands) keep every band', async (t) => {
  const dir = await tempDir(t);
  const hbar = await chart('hbar', 5);
  await writeFile(join(dir, 'h.png'), hbar.png);
  const bands = hbar.record.meta.y_values_bbox as Record<string, BBox>;
  // As pandas.read_parquet(...).to_json(orient="records") writes a struct column: the union of all rows' keys.
  const structured = { x1: null, ...bands, 'Label of another row': null, 'And another': null };
  const row = { figure_id: 'pq-1', figure_path: 'h.png', query: hbar.record.question, answer: '3',
    metadata: { type: 'h_bar', figure_bbox: hbar.record.meta.figure_bbox, x_values_bbox: { x1: 'none', y1: null, x2: null, y2: null }, y_values_bbox: structured } };
  await writeFile(join(dir, 'rows.jsonl'), JSON.stringify(row) + '\n');
  const result = await loadVTool(join(dir, 'rows.jsonl'));
  assert.deepEqual(result.warnings, []);
  const record = result.tasks[0]!.record;
  assert.deepEqual(record.meta.y_values_bbox, bands);
  assert.equal(Object.keys(record.meta.y_values_bbox as object).length, Object.keys(bands).length);
  assert.equal(record.meta.x_values_bbox, undefined);
  // The converted task runs a band tool on its bands: the tools see what the record kept.
  const label = Object.keys(bands)[0]!;
  const image = await decodeImage(hbar.png);
  const outcome = await runToolCall(image, { name: 'focus_on_y_values_with_mask', arguments: { y_values: [label] } }, resolveMetadata(record.meta, image.width, image.height));
  assert.equal(outcome.ok, true, JSON.stringify(outcome));
});

test('OpenThinkIMG and veRL rows convert, answers unwrapped, images by path or inline bytes', async (t) => {
  const dir = await tempDir(t);
  const vbar = await chart('vbar', 6);
  await writeFile(join(dir, 'c.png'), vbar.png);
  await writeFile(join(dir, 'otk.json'), JSON.stringify([{ image_path: 'c.png', question: 'How many bars?', solution: '<answer> 3 </answer>' }, { image_path: 'c.png', question: 'Max?', label: 'Oslo' }]));
  const otk = await loadOpenThinkIMG(join(dir, 'otk.json'));
  assert.deepEqual(otk.tasks.map((x) => [x.record.answer, x.record.kind, x.record.source]), [['3', 'chart', 'openthinkimg'], ['Oslo', 'chart', 'openthinkimg']]);
  await writeFile(join(dir, 'otk-bad.json'), JSON.stringify([{ image_path: 'c.png', question: 'Q?' }]));
  await assert.rejects(loadOpenThinkIMG(join(dir, 'otk-bad.json')), /otk-bad\.json \[item 0\]: solution: expected the answer in "solution" or "label"/);
  const verlRows = [
    { data_source: 'chartqa', prompt: [{ role: 'system', content: 'sys' }, { role: 'user', content: '<image>What is the largest value?' }], images: [{ image: 'c.png' }], reward_model: { style: 'rule', ground_truth: '42' }, extra_info: { index: 7, metadata: JSON.stringify({ type: 'v_bar', figure_bbox: vbar.record.meta.figure_bbox, x_values_bbox: vbar.record.meta.x_values_bbox }) } },
    { data_source: 'geo', prompt: [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: 'Inline?' }] }], images: [{ bytes: vbar.png.toString('base64') }], reward_model: { ground_truth: 'yes' }, extra_info: {} },
  ];
  await writeFile(join(dir, 'verl.jsonl'), verlRows.map((r) => JSON.stringify(r)).join('\n'));
  const scratch = join(dir, 'scratch');
  const verl = await loadVerl(join(dir, 'verl.jsonl'), undefined, scratch);
  const [a, b] = verl.tasks;
  assert.equal(a!.record.question, 'What is the largest value?');
  assert.equal(a!.record.id, 'verl-7');
  assert.equal(a!.record.kind, 'vbar');
  assert.deepEqual(a!.record.meta.x_values_bbox, vbar.record.meta.x_values_bbox);
  assert.equal(b!.record.question, 'Inline?');
  assert.equal(b!.record.source, 'geo');
  assert.ok(b!.sourceImage.startsWith(scratch));
  await writeFile(join(dir, 'verl-bad.jsonl'), JSON.stringify({ ...verlRows[0], reward_model: {} }));
  await assert.rejects(loadVerl(join(dir, 'verl-bad.jsonl'), undefined, scratch), /verl-bad\.jsonl:1: reward_model\.ground_truth: expected a non-empty answer, got nothing/);
});

test('vistool data convert writes DIR/tasks.jsonl and DIR/images and reports counts', async (t) => {
  const dir = await tempDir(t);
  const vbar = await chart('vbar', 7);
  await writeFile(join(dir, 'c.png'), vbar.png);
  await writeFile(join(dir, 'otk.jsonl'), JSON.stringify({ image_path: 'c.png', question: 'Q?', label: '1' }) + '\n');
  let stdout = '';
  let stderr = '';
  const command = createDataConvertCommand({ stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
  const code = await command.run(['--from', 'openthinkimg', join(dir, 'otk.jsonl'), '--out', join(dir, 'out')]);
  assert.equal(code, 0);
  assert.deepEqual(JSON.parse(stdout), { out: join(dir, 'out'), tasks: 1, images: 1, warnings: 0, skipped: 0 });
  assert.match(stderr, /1 tasks, 1 images/);
  assert.equal((await loadTasks(join(dir, 'out', 'tasks.jsonl')))[0]!.image, 'images/c.png');
  await assert.rejects(command.run(['--from', 'parquet', 'x', '--out', 'y']), /--from must be one of chartqa, charxiv, tablevqa-bench, refocus, vtool, openthinkimg, verl/);
});

/** A CharXiv checkout's src/constants.py in its layout (backslash continuations, triple quotes); the texts are stand-ins. */
const CHARXIV_CONSTANTS = `# -*- coding: utf-8 -*-
REASONING_RESP_INST = {
    1: \\
    """{}
    * Answer with text written in the chart.
    """,
    3: \\
    """{}
    * Answer with a number written in the chart.
    """,

    4: \\
    """{}
    {}
    """
}

DESCRIPTIVE_RESP_INST = {
    1: \\
    """{}what is its title?
    * Answer 'Not Applicable' when it has none.
    """,
    18: '''How many subplots are there? (''' 'count them all)',  # adjacent literals join
}
`;

test('CharXiv reasoning and descriptive records: questions templated from its constants.py, figures by id from images/ beside data/, then a tool and a score', async (t) => {
  const dir = await tempDir(t);
  const figure = await chart('vbar', 3);
  await mkdir(join(dir, 'data'));
  await mkdir(join(dir, 'images'));
  await writeFile(join(dir, 'images', '17.jpg'), await sharp(figure.png).jpeg().toBuffer());
  // The repository's layout: an object keyed by figure id.
  await writeFile(join(dir, 'data', 'reasoning_val.json'), JSON.stringify({
    17: { figure_id: 17, query: 'How many data points have a score of less than 50?', answer: '3', inst_category: 4, qa_source: 2 },
  }));
  await writeFile(join(dir, 'data', 'descriptive_val.json'), JSON.stringify({ 17: { figure_id: 17, subplot_loc: [2, 1], qids: [1, 18], answers: ['Not Applicable', '4'] } }));

  // Without CharXiv's constants.py: reasoning questions are bare (and a warning says the scores are not comparable); descriptive is refused.
  const bare = await loadCharXiv(join(dir, 'data', 'reasoning_val.json'));
  assert.deepEqual(bare.tasks.map((x) => x.record.question), ['How many data points have a score of less than 50?']);
  assert.match(bare.warnings.map((w) => w.reason).join('\n'), /src\/constants\.py was not found .* not comparable/);
  await assert.rejects(loadCharXiv(join(dir, 'data', 'descriptive_val.json')), /descriptive_val\.json \[item 0\]: qids: expected CharXiv's question templates: .* pass --templates path\/to\/constants\.py/);

  await mkdir(join(dir, 'src'));
  await writeFile(join(dir, 'src', 'constants.py'), CHARXIV_CONSTANTS);
  const reasoning = await loadCharXiv(join(dir, 'data', 'reasoning_val.json'));
  const { record, sourceImage } = reasoning.tasks[0]!;
  assert.deepEqual([record.id, record.kind, record.family, record.answer, record.source], ['charxiv-17', 'chart', 'number-in-general', '3', 'charxiv']);
  // Category 4 takes the question and the decimal-places instruction, as CharXiv's format() does.
  assert.equal(record.question, 'How many data points have a score of less than 50?\n    * Your final answer must be an exact integer.\n    ');
  assert.equal(numberInstruction('0.25'), '* Your final answer must be a number with 2 decimal places.');
  assert.equal(sourceImage, join(dir, 'images', '17.jpg'));
  await endToEnd(dir, reasoning, '3', '4');

  const descriptive = await loadCharXiv(join(dir, 'data', 'descriptive_val.json'));
  assert.deepEqual(descriptive.tasks.map((x) => [x.record.id, x.record.family, x.record.answer, x.record.source]), [
    ['charxiv-17-d0', 'descriptive-1', 'Not Applicable', 'charxiv/descriptive'],
    ['charxiv-17-d1', 'descriptive-18', '4', 'charxiv/descriptive'],
  ]);
  assert.equal(descriptive.tasks[0]!.record.question, "For the subplot at row 2 and column 1, what is its title?\n    * Answer 'Not Applicable' when it has none.\n    ");
  assert.equal(descriptive.tasks[1]!.record.question, 'How many subplots are there? (count them all)', 'layout templates take no subplot prefix');
  assert.equal(subplotPrefix([0], { file: 'f' }), 'For the current plot, ');
  assert.equal(subplotPrefix('the top panel', { file: 'f' }), 'For the top panel, ');
  await endToEnd(dir, { ...descriptive, tasks: descriptive.tasks.slice(0, 1) }, 'not applicable', 'Accuracy by epoch');

  await writeFile(join(dir, 'data', 'descriptive_test.json'), JSON.stringify({ 17: { figure_id: 17, subplot_loc: [1, 1], qids: [7], answers: ['x'] } }));
  await assert.rejects(loadCharXiv(join(dir, 'data', 'descriptive_test.json')), /qids\[0\]: expected a template id of constants\.py \(1, 18\), got 7/);
  await writeFile(join(dir, 'data', 'reasoning_test.json'), JSON.stringify({ 9: { figure_id: 9, query: 'Q?', answer: '1', inst_category: 3 } }));
  await assert.rejects(loadCharXiv(join(dir, 'data', 'reasoning_test.json')), /figure_id: expected an image at .*images\/9\.jpg \(set --images-root/);
});

test('TableVQA-Bench splits: WTQ lists, TabFact labels and FinTabNet values read as each split means them', async (t) => {
  const dir = await tempDir(t);
  const table = await chart('table', 2);
  await writeFile(join(dir, 't.png'), table.png);
  const line = (record: object) => JSON.stringify(record) + '\n';
  await writeFile(join(dir, 'vwtq.jsonl'), line({ qa_id: 'nu-3583', question: 'which two representatives were not democrats?', gt: 'Joe Straus|Lyle Larson', image: 't.png', text_html_table: '<table></table>' }));
  await writeFile(join(dir, 'vtabfact.jsonl'), line({ qa_id: 'tf-1', question: 'the team won 5 games', gt: 1, image: { path: 't.png' } }) + line({ qa_id: 'tf-2', question: 'x', gt: 0, image: 't.png' }));
  await writeFile(join(dir, 'fintabnetqa.json'), JSON.stringify([{ qa_id: 7, question: 'What was the revenue in 2019?', gt: '$1,250 million', image: 't.png' }]));
  const wtq = await loadTableVqaBench(join(dir, 'vwtq.jsonl'));
  assert.deepEqual(wtq.tasks.map((x) => [x.record.id, x.record.answer, x.record.kind, x.record.source]), [['tablevqa-vwtq-nu-3583', ['Joe Straus', 'Lyle Larson'], 'table', 'tablevqa-bench/vwtq']]);
  await endToEnd(dir, wtq, 'Lyle Larson || Joe Straus', 'Joe Straus');
  const fact = await loadTableVqaBench(join(dir, 'vtabfact.jsonl'));
  assert.deepEqual(fact.tasks.map((x) => x.record.answer), ['true', 'false']);
  const fin = await loadTableVqaBench(join(dir, 'fintabnetqa.json'));
  assert.deepEqual(fin.tasks.map((x) => x.record.answer), ['$1,250 million']);
  assert.equal(subsetOf('out/vwtq_syn.jsonl'), 'vwtq_syn');
  // Errors name the file, the line and the field.
  await writeFile(join(dir, 'vtabfact-bad.jsonl'), line({ qa_id: 'tf-3', question: 'x', gt: 'maybe', image: 't.png' }));
  await assert.rejects(loadTableVqaBench(join(dir, 'vtabfact-bad.jsonl')), /vtabfact-bad\.jsonl:1: gt: expected a TabFact label, 1 \(true\) or 0 \(false\), got "maybe"/);
  await writeFile(join(dir, 'vwtq-bytes.jsonl'), line({ qa_id: 'a', question: 'q', gt: '1', image: { bytes: 'iVBOR' } }));
  await assert.rejects(loadTableVqaBench(join(dir, 'vwtq-bytes.jsonl')), /image: expected the path of the exported image .* save each image to a file when exporting/);
  await writeFile(join(dir, 'tables.jsonl'), line({ qa_id: 'a', question: 'q', gt: '1', image: 't.png' }));
  await assert.rejects(loadTableVqaBench(join(dir, 'tables.jsonl')), /\(split\): expected the split in the file name \(vwtq, vwtq_syn, vtabfact, fintabnetqa\) or a "subset" field/);
});

/** Written out as task records, read back, the image edited by a tool, and answers scored against the gold. */
async function endToEnd(dir: string, loaded: Awaited<ReturnType<typeof loadCharXiv>>, right: string, wrong: string): Promise<void> {
  const out = join(dir, `out-${loaded.tasks[0]!.record.id}`);
  await writeConverted(out, loaded);
  const [task] = await loadTasks(join(out, 'tasks.jsonl'));
  assert.ok(task);
  const image = await decodeImage(join(out, task.image));
  const zoomed = await runToolCall(image, { name: 'zoom_in', arguments: { bbox: [0, 0, Math.floor(image.width / 2), Math.floor(image.height / 2)], factor: 2 } }, resolveMetadata(task.meta, image.width, image.height));
  assert.ok(zoomed.ok, JSON.stringify(zoomed));
  assert.equal(zoomed.image.width, Math.floor(image.width / 2) * 2);
  assert.equal(scoreAnswer(right, task.answer).correct, true);
  assert.equal(scoreAnswer(wrong, task.answer).correct, false);
}

test('VTool-R1 tables whose row_starters begin with the header row keep the header out of the rows, so a rows mask leaves it', async (t) => {
  const dir = await tempDir(t);
  const table = await chart('table', 4);
  await writeFile(join(dir, 't.png'), table.png);
  const columns = table.record.meta.columns_bbox!;
  const rows = table.record.meta.rows_bbox!;
  const [firstColumn] = Object.keys(columns);
  const top = Math.min(...Object.values(columns).map((b) => b.y1));
  const firstRowTop = Math.min(...Object.values(rows).map((b) => b.y1));
  const tableLeft = Math.min(...Object.values(columns).map((b) => b.x1));
  const tableRight = Math.max(...Object.values(columns).map((b) => b.x2));
  // VTool-R1's header-first form: the header row, keyed by its first cell, then the data rows.
  const headerFirst = { [firstColumn!]: { x1: tableLeft, y1: top, x2: tableRight, y2: firstRowTop }, ...rows };
  await writeFile(join(dir, 'rows.jsonl'), JSON.stringify({ figure_id: 'h-1', figure_path: 't.png', query: 'Q?', answer: '1', metadata: { type: 'table', figure_bbox: table.record.meta.figure_bbox, columns_bbox: columns, row_starters: headerFirst } }) + '\n');
  const result = await loadVTool(join(dir, 'rows.jsonl'));
  const record = result.tasks[0]!.record;
  assert.deepEqual(record.meta.rows_bbox, rows);
  assert.match(result.warnings.map((w) => w.reason).join('\n'), new RegExp(`row_starters begins with the header row \\('${firstColumn}'\\)`));
  // A rows mask on one data row: the header's pixels are untouched.
  const image = await decodeImage(join(dir, 't.png'));
  const [oneRow] = Object.keys(rows);
  const masked = await runToolCall(image, { name: 'focus_on_rows_with_mask', arguments: { rows: [oneRow] } }, resolveMetadata(record.meta, image.width, image.height));
  assert.ok(masked.ok);
  let changedInHeader = 0;
  for (let y = top; y < firstRowTop; y++) {
    for (let x = tableLeft; x < tableRight; x++) {
      const i = (y * image.width + x) * 3;
      if (image.data[i] !== masked.image.data[i] || image.data[i + 1] !== masked.image.data[i + 1] || image.data[i + 2] !== masked.image.data[i + 2]) changedInHeader++;
    }
  }
  assert.equal(changedInHeader, 0);
  // Row starters without the header keep every row.
  assert.deepEqual(withoutHeaderRow(rows, columns), { bands: rows, header: null });
});

/** The share of a band's inset rectangle (ReFocus: int(n·W + 2) to int(n·W − 2), inclusive) that is pure white. */
function whiteShare(image: RgbImage, b: BBox): number {
  let white = 0;
  let all = 0;
  for (let y = b.y1 + 2; y <= b.y2 - 2; y++) {
    for (let x = b.x1 + 2; x <= b.x2 - 2; x++) {
      const i = (y * image.width + x) * 3;
      all++;
      if (image.data[i] === 255 && image.data[i + 1] === 255 && image.data[i + 2] === 255) white++;
    }
  }
  return white / all;
}

test('ReFocus evaluation sets with boxes (ChartQA bars, TableVQA, CharXiv subfigures): each shape loads, a tool runs on its bands, the answer scores', async (t) => {
  const dir = await tempDir(t);
  const vbar = await chart('vbar', 6);
  const table = await chart('table', 5);
  const sub = await chart('hbar', 7);
  // ReFocus's layout: data/*.json at its repository root, figure paths relative to that root.
  await mkdir(join(dir, 'data', 'figures'), { recursive: true });
  await writeFile(join(dir, 'data', 'figures', 'v.png'), vbar.png);
  await writeFile(join(dir, 'data', 'figures', 't.png'), table.png);
  await writeFile(join(dir, 'data', 'figures', 's.png'), sub.png);
  const normalise = (b: BBox, w: number, h: number) => ({ x1: b.x1 / w, y1: b.y1 / h, x2: b.x2 / w, y2: b.y2 / h });

  // ChartQA bars: x values and their boxes as parallel lists, normalised.
  const xBands = vbar.record.meta.x_values_bbox as Record<string, BBox>;
  const xValues = Object.keys(xBands);
  await writeFile(join(dir, 'data', 'chartQA_v_bar_wbb.json'), JSON.stringify({
    'two_col_1234': { query: vbar.record.question, answer: vbar.record.answer, figure_path: 'data/figures/v.png', x_values: xValues, y_values: null, x_bboxes: xValues.map((v) => normalise(xBands[v]!, vbar.image.width, vbar.image.height)), y_bboxes: null },
  }));
  const charts = await loadReFocus(join(dir, 'data', 'chartQA_v_bar_wbb.json'));
  const chartRecord = charts.tasks[0]!.record;
  assert.deepEqual([chartRecord.id, chartRecord.kind, chartRecord.source, chartRecord.meta.unit], ['refocus-chartqa-two_col_1234', 'vbar', 'refocus/chartqa', 'normalized']);
  assert.equal(charts.tasks[0]!.sourceImage, join(dir, 'data', 'figures', 'v.png'));
  const vImage = await decodeImage(charts.tasks[0]!.sourceImage);
  const vMeta = resolveMetadata(chartRecord.meta, vImage.width, vImage.height);
  // Expected pixels by ReFocus's own rule: the normalised box times the size, truncated.
  for (const v of xValues) {
    const n = normalise(xBands[v]!, vbar.image.width, vbar.image.height);
    assert.deepEqual(vMeta.x_values_bbox![v], { x1: Math.trunc(n.x1 * vImage.width), y1: Math.trunc(n.y1 * vImage.height), x2: Math.trunc(n.x2 * vImage.width), y2: Math.trunc(n.y2 * vImage.height) });
  }
  const [keep, drop] = xValues;
  const masked = await runToolCall(vImage, { name: 'focus_on_x_values_with_mask', arguments: { x_values: [keep] } }, vMeta);
  assert.ok(masked.ok, JSON.stringify(masked));
  assert.equal(whiteShare(masked.image, vMeta.x_values_bbox![drop!]!), 1, 'a band not focused on is whitened');
  assert.ok(whiteShare(masked.image, vMeta.x_values_bbox![keep!]!) < 1, 'the focused band keeps its bar');
  await endToEnd(dir, charts, String(vbar.record.answer), 'not the answer');

  // TableVQA: column headers and row starters with parallel box lists; the first row starter is the header row.
  const columns = table.record.meta.columns_bbox!;
  const rows = table.record.meta.rows_bbox!;
  const headers = Object.keys(columns);
  const tableTop = Math.min(...Object.values(columns).map((b) => b.y1));
  const firstRowTop = Math.min(...Object.values(rows).map((b) => b.y1));
  const left = Math.min(...Object.values(columns).map((b) => b.x1));
  const right = Math.max(...Object.values(columns).map((b) => b.x2));
  const headerRow: BBox = { x1: left, y1: tableTop, x2: right, y2: firstRowTop };
  const starters = [headers[0]!, ...Object.keys(rows)];
  const rowBoxes = [headerRow, ...Object.values(rows)];
  const tw = table.image.width;
  const th = table.image.height;
  const tableRecord = { query: table.record.question, answer: table.record.answer, figure_path: 'data/figures/t.png', column_headers: headers, columns_bbox: headers.map((h) => normalise(columns[h]!, tw, th)), row_starters: starters, rows_bbox: rowBoxes.map((b) => normalise(b, tw, th)) };
  await writeFile(join(dir, 'data', 'tablevqa_wbb.json'), JSON.stringify({ 'nu-42': tableRecord }));
  const tables = await loadReFocus(join(dir, 'data', 'tablevqa_wbb.json'));
  const tRecord = tables.tasks[0]!.record;
  assert.deepEqual([tRecord.id, tRecord.kind, tRecord.source], ['refocus-tablevqa-nu-42', 'table', 'refocus/tablevqa']);
  assert.deepEqual(Object.keys(tRecord.meta.rows_bbox!), Object.keys(rows), 'the header row is no row band');
  assert.deepEqual(Object.keys(tRecord.meta.columns_bbox!), headers);
  const tImage = await decodeImage(tables.tasks[0]!.sourceImage);
  const tMeta = resolveMetadata(tRecord.meta, tImage.width, tImage.height);
  const [oneRow] = Object.keys(rows);
  const rowMasked = await runToolCall(tImage, { name: 'focus_on_rows_with_mask', arguments: { rows: [oneRow] } }, tMeta);
  assert.ok(rowMasked.ok, JSON.stringify(rowMasked));
  let headerChanged = 0;
  for (let y = tableTop; y < firstRowTop; y++) {
    for (let x = left; x < right; x++) {
      const i = (y * tImage.width + x) * 3;
      if (tImage.data[i] !== rowMasked.image.data[i] || tImage.data[i + 1] !== rowMasked.image.data[i + 1] || tImage.data[i + 2] !== rowMasked.image.data[i + 2]) headerChanged++;
    }
  }
  assert.equal(headerChanged, 0, 'a rows mask leaves the header row as ReFocus does');
  await endToEnd(dir, tables, Array.isArray(table.record.answer) ? table.record.answer.join(' || ') : String(table.record.answer), 'not the answer');

  // CharXiv subfigures: the question in `prompt`, no boxes.
  await writeFile(join(dir, 'data', 'charxiv-subfigures.json'), JSON.stringify({ 88: { prompt: 'Which subplot has the highest peak?', answer: 'the left one', figure_path: 'data/figures/s.png' } }));
  const subfigures = await loadReFocus(join(dir, 'data', 'charxiv-subfigures.json'));
  const sRecord = subfigures.tasks[0]!.record;
  assert.deepEqual([sRecord.id, sRecord.kind, sRecord.source, sRecord.question, sRecord.meta], ['refocus-charxiv-88', 'chart', 'refocus/charxiv', 'Which subplot has the highest peak?', {}]);
  assert.match(subfigures.warnings.map((w) => w.reason).join('\n'), /1 CharXiv subfigure records carry no boxes .* OCR grounding finds bands/);
  await endToEnd(dir, subfigures, 'the left one', 'the right one');

  // Refusals name the file, the item and the field.
  await writeFile(join(dir, 'data', 'short_wbb.json'), JSON.stringify({ a: { ...tableRecord, columns_bbox: tableRecord.columns_bbox.slice(1) } }));
  await assert.rejects(loadReFocus(join(dir, 'data', 'short_wbb.json')), new RegExp(`short_wbb\\.json \\[item 0\\]: columns_bbox: expected ${headers.length} boxes, one per column_headers entry, got "${headers.length - 1} boxes"`));
  await writeFile(join(dir, 'data', 'both_wbb.json'), JSON.stringify({ a: { query: 'q', answer: '1', figure_path: 'data/figures/v.png', x_values: ['a'], x_bboxes: [{ x1: 0, y1: 0, x2: 0.5, y2: 1 }], y_values: ['b'], y_bboxes: [{ x1: 0, y1: 0, x2: 1, y2: 0.5 }] } }));
  await assert.rejects(loadReFocus(join(dir, 'data', 'both_wbb.json')), /both_wbb\.json \[item 0\]: x_values: expected x values .* or a file named \*h_bar\* \/ \*v_bar\*, got "both"/);
  await writeFile(join(dir, 'data', 'odd.json'), JSON.stringify({ a: { question: 'q', label: '1' } }));
  await assert.rejects(loadReFocus(join(dir, 'data', 'odd.json')), /odd\.json \[item 0\]: \(record\): expected a ReFocus record/);
  await writeFile(join(dir, 'data', 'moved_wbb.json'), JSON.stringify({ a: { ...tableRecord, figure_path: 'elsewhere/t.png' } }));
  await assert.rejects(loadReFocus(join(dir, 'data', 'moved_wbb.json')), /figure_path: expected an image file at one of .*elsewhere\/t\.png.* \(set --images-root/);
});
