import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../env/cli/command.js';
import { createDataGenCommand } from '../../env/cli/data-gen.js';
import { createGroundingDetectCommand } from '../../env/cli/grounding-detect.js';
import { createGroundingEvalCommand } from '../../env/cli/grounding-eval.js';
import { createToolsApplyCommand } from '../../env/cli/tools-apply.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import { tableFixture, TABLE_COLUMNS, verticalBarsFixture, BAR_LABELS } from '../fixtures/render.js';

function streams() {
  const out = { stdout: '', stderr: '' };
  return { out, io: { stdout: { write: (s: string) => (out.stdout += s) }, stderr: { write: (s: string) => (out.stderr += s) } } };
}

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-grounding-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('grounding detect prints OCR metadata for a table that tools apply accepts as --meta', async (t) => {
  const dir = await tempDir(t);
  const fixture = await tableFixture();
  const image = join(dir, 'table.png');
  await writeFile(image, fixture.png);
  const { out, io } = streams();
  const code = await createGroundingDetectCommand(io).run(['--image', image, '--verbose']);
  assert.equal(code, 0, out.stderr);
  const meta = JSON.parse(out.stdout);
  assert.equal(meta.source, 'ocr');
  assert.deepEqual(Object.keys(meta.columns_bbox), TABLE_COLUMNS);
  assert.doesNotThrow(() => resolveMetadata(meta, fixture.image.width, fixture.image.height));
  assert.match(out.stderr, /grounding: table with 10 labels on cpu in \d+ ms/);

  const metaFile = join(dir, 'meta.json');
  await writeFile(metaFile, out.stdout);
  const applied = streams();
  const call = JSON.stringify({ name: 'focus_on_columns_with_mask', arguments: { columns: ['Rider', 'Wins'] } });
  assert.equal(await createToolsApplyCommand(applied.io.stdout).run(['--image', image, '--meta', metaFile, '--call', call, '--out', join(dir, 'out.png')]), 0);
  assert.match(applied.out.stdout, /focus_on_columns_with_mask/);
});

test('grounding detect --kind vbar finds the x tick labels of a bar chart', async (t) => {
  const dir = await tempDir(t);
  const image = join(dir, 'bars.png');
  await writeFile(image, (await verticalBarsFixture()).png);
  const { out, io } = streams();
  assert.equal(await createGroundingDetectCommand(io).run(['--image', image, '--kind', 'vbar']), 0, out.stderr);
  assert.deepEqual(Object.keys(JSON.parse(out.stdout).x_values_bbox), BAR_LABELS);
});

test('grounding detect exits 1 with a reason when the asked layout is not there', async (t) => {
  const dir = await tempDir(t);
  const image = join(dir, 'table.png');
  await writeFile(image, (await tableFixture()).png);
  const { out, io } = streams();
  assert.equal(await createGroundingDetectCommand(io).run(['--image', image, '--kind', 'hbar']), 1);
  assert.deepEqual(JSON.parse(out.stdout), { unit: 'pixels', source: 'ocr' });
  assert.match(out.stderr, /no hbar layout found .* Try --kind auto/);
});

test('grounding detect refuses a missing image, a bad kind and a file that is not an image', async (t) => {
  const dir = await tempDir(t);
  const { io } = streams();
  const detect = createGroundingDetectCommand(io);
  await assert.rejects(detect.run([]), (e: unknown) => e instanceof UsageError && /--image is required/.test(e.message));
  await assert.rejects(detect.run(['--image', 'x.png', '--kind', 'pie']), /--kind must be one of auto, table, vbar, hbar; got 'pie'/);
  await assert.rejects(detect.run(['--image', join(dir, 'none.png')]), /cannot read image/);
  const text = join(dir, 'notes.png');
  await writeFile(text, 'not an image');
  await assert.rejects(detect.run(['--image', text]), /is not an image sharp can decode/);
});

test('grounding eval scores a generated set per kind and prints the summary as JSON', async (t) => {
  const dir = await tempDir(t);
  const gen = streams();
  assert.equal(await createDataGenCommand(gen.io).run(['--kind', 'hbar', '--n', '2', '--seed', '3', '--difficulty', '1', '--out', join(dir, 'set')]), 0);
  const { out, io } = streams();
  assert.equal(await createGroundingEvalCommand(io).run([join(dir, 'set'), '--failures']), 0);
  const result = JSON.parse(out.stdout) as { device: string; summary: Record<string, { images: number; labels: number; textExact: number; goodIou: number; msPerImage: number }> };
  assert.equal(result.device, 'cpu');
  assert.equal(result.summary.hbar?.images, 2);
  assert.ok((result.summary.hbar?.labels ?? 0) >= 6);
  assert.equal(result.summary.hbar?.textExact, 1, out.stderr);
  assert.equal(result.summary.hbar?.goodIou, 1, out.stderr);
  assert.ok((result.summary.all?.msPerImage ?? 0) > 0);
  assert.match(out.stderr, /kind\s+images\s+labels\s+recall\s+text exact\s+mean IoU\s+IoU≥0.8\s+kind found\s+extra\s+ms\/image\nhbar\s+2\s+\d+\s+100.0%\s+100.0%/);
});

test('grounding eval refuses a folder without tasks and a set without groundable kinds', async (t) => {
  const dir = await tempDir(t);
  const { io } = streams();
  const evaluate = createGroundingEvalCommand(io);
  await assert.rejects(evaluate.run([dir]), /is a folder without a tasks\.jsonl; .*make one with `vistool data gen/);
  await assert.rejects(evaluate.run([]), /give exactly one TASKS_DIR/);
  const gen = streams();
  await createDataGenCommand(gen.io).run(['--kind', 'line', '--n', '1', '--seed', '3', '--difficulty', '1', '--out', join(dir, 'lines')]);
  await assert.rejects(evaluate.run([join(dir, 'lines')]), /holds no table, vbar or hbar tasks/);
});
