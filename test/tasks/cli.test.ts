import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { UsageError } from '../../env/cli/command.js';
import { createDataCheckCommand } from '../../env/cli/data-check.js';
import { createDataGenCommand } from '../../env/cli/data-gen.js';
import { createDataShowCommand } from '../../env/cli/data-show.js';
import { loadTasks } from '../../env/tasks/load.js';

function streams(tty = false) {
  const out = { stdout: '', stderr: '' };
  return { out, io: { stdout: { write: (s: string) => (out.stdout += s) }, stderr: { write: (s: string) => (out.stderr += s), isTTY: tty } } };
}

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('data gen writes the set, reports progress every ~10% off a terminal, and ends with a JSON summary', async (t) => {
  const dir = await tempDir(t);
  const { out, io } = streams(false);
  const code = await createDataGenCommand(io).run(['--kind', 'table', '--n', '20', '--seed', '1', '--difficulty', '1', '--image-size', '224x112', '--out', join(dir, 'set')]);
  assert.equal(code, 0);
  const summary = JSON.parse(out.stdout) as { generated: number; repaired: number; dropped: number; tasks_per_second: number };
  assert.equal(summary.generated + summary.dropped, 20);
  assert.ok(summary.tasks_per_second > 0);
  const progress = out.stderr.split('\n').filter((l) => /^data gen: \d+\/20/.test(l));
  assert.equal(progress.length, 10);
  assert.match(out.stderr, /generated \(\d+ repaired\), \d+ dropped in .* tasks\/s/);
  const tasks = await loadTasks(join(dir, 'set', 'tasks.jsonl'));
  assert.equal(tasks.length, summary.generated);
  const meta = await sharp(join(dir, 'set', tasks[0]!.image)).metadata();
  assert.deepEqual([meta.width, meta.height], [224, 112]);
});

test('data gen draws a progress bar on a terminal', async (t) => {
  const dir = await tempDir(t);
  const { out, io } = streams(true);
  await createDataGenCommand(io).run(['--kind', 'vbar', '--n', '3', '--seed', '2', '--difficulty', '1-2', '--out', join(dir, 'set')]);
  assert.match(out.stderr, /\r\[#+\.*\] 1\/3/);
  assert.match(out.stderr, /\r\[#{30}\] 3\/3/);
});

test('data gen refuses bad options with a usage error that says what is allowed', async () => {
  const { io } = streams();
  const gen = createDataGenCommand(io);
  const base = ['--n', '2', '--seed', '1', '--out', '/tmp/never'];
  await assert.rejects(gen.run(base), (e: unknown) => e instanceof UsageError && /--kind is required/.test(e.message));
  await assert.rejects(gen.run(['--kind', 'pie', ...base]), /--kind must be one of table, vbar, hbar, grouped, line, mixed/);
  await assert.rejects(gen.run(['--kind', 'table', '--difficulty', '4-2', ...base]), /--difficulty must be 1..5 or a range like 2-4/);
  await assert.rejects(gen.run(['--kind', 'table', '--image-size', '224', ...base]), /--image-size must be WxH/);
  await assert.rejects(gen.run(['--kind', 'table', '--split', 'dev', ...base]), /--split must be train, val or test/);
  await assert.rejects(gen.run(['--kind', 'table', '--n', '2', '--seed=-1', '--out', 'x']), /--seed must be a whole number/);
  await assert.rejects(gen.run(['--kind', 'table', '--n', '0', '--seed', '1', '--out', 'x']), /--n must be between 1 and/);
});

test('data check exits 0 on a clean set and 1, listing the issues, on a broken one', async (t) => {
  const dir = await tempDir(t);
  await createDataGenCommand(streams().io).run(['--kind', 'hbar', '--n', '3', '--seed', '4', '--difficulty', '2', '--out', join(dir, 'set')]);
  const clean = streams();
  assert.equal(await createDataCheckCommand(clean.io).run([join(dir, 'set', 'tasks.jsonl')]), 0);
  assert.match(clean.out.stdout, /3 checked, 3 ok, 0 failed/);
  const path = join(dir, 'set', 'tasks.jsonl');
  const lines = (await readFile(path, 'utf8')).trim().split('\n');
  const record = JSON.parse(lines[1]!) as { answer: string | string[] };
  record.answer = 'not the answer';
  lines[1] = JSON.stringify(record);
  await writeFile(path, lines.join('\n') + '\n');
  const broken = streams();
  assert.equal(await createDataCheckCommand(broken.io).run([path, '--json']), 1);
  const report = JSON.parse(broken.out.stdout) as { failed: number; failures: { id: string; issues: { check: string }[] }[] };
  assert.equal(report.failed, 1);
  assert.ok(report.failures[0]!.issues.some((i) => i.check === 'answer'));
});

test('data check reports every bad line by number and still checks the good ones', async (t) => {
  const dir = await tempDir(t);
  await createDataGenCommand(streams().io).run(['--kind', 'hbar', '--n', '4', '--seed', '5', '--difficulty', '1', '--out', join(dir, 'set')]);
  const path = join(dir, 'set', 'tasks.jsonl');
  const lines = (await readFile(path, 'utf8')).trim().split('\n');
  // Line 2 truncated mid-record (a killed writer), line 4 with a field of the wrong type; lines 1 and 3 intact.
  lines[1] = lines[1]!.slice(0, 40);
  const record = JSON.parse(lines[3]!) as Record<string, unknown>;
  record.difficulty = 'hard';
  lines[3] = JSON.stringify(record);
  await writeFile(path, lines.join('\n') + '\n');
  const text = streams();
  assert.equal(await createDataCheckCommand(text.io).run([path]), 1);
  assert.match(text.out.stdout, /line 2: FAILED\n {2}\[record\] .*tasks\.jsonl:2: not valid JSON/);
  assert.match(text.out.stdout, /line 4: FAILED\n {2}\[record\] .*tasks\.jsonl:4: difficulty/);
  assert.match(text.out.stdout, /4 checked, 2 ok, 2 failed/);
  const json = streams();
  assert.equal(await createDataCheckCommand(json.io).run([path, '--json']), 1);
  const report = JSON.parse(json.out.stdout) as { checked: number; ok: number; failures: { id: string }[] };
  assert.equal(report.ok, 2);
  assert.deepEqual(report.failures.map((f) => f.id).sort(), ['line 2', 'line 4']);
});

test('data show draws the task larger than its image, with a caption', async (t) => {
  const dir = await tempDir(t);
  await createDataGenCommand(streams().io).run(['--kind', 'table', '--n', '1', '--seed', '4', '--difficulty', '1', '--out', join(dir, 'set')]);
  const [task] = await loadTasks(join(dir, 'set', 'tasks.jsonl'));
  const { out, io } = streams();
  assert.equal(await createDataShowCommand(io).run([join(dir, 'set', 'tasks.jsonl'), '--id', task!.id, '--out', join(dir, 'show.png')]), 0);
  assert.equal(out.stdout.trim(), join(dir, 'show.png'));
  const shown = await sharp(join(dir, 'show.png')).metadata();
  const image = await sharp(join(dir, 'set', task!.image)).metadata();
  assert.ok(shown.width! > image.width! && shown.height! > image.height! + 30);
  await assert.rejects(createDataShowCommand(io).run([join(dir, 'set', 'tasks.jsonl'), '--id', 'nope', '--out', join(dir, 'x.png')]), /no task with id 'nope'.*1 tasks, e\.g\. train-table-000000/);
});
