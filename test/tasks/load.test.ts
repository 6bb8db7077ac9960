import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTasks, TaskFileError } from '../../env/tasks/load.js';

const good = { id: 't1', image: 'images/t1.png', question: 'Which?', answer: 'A', kind: 'vbar', difficulty: 1, meta: { unit: 'pixels', x_values_bbox: { A: { x1: 0, y1: 0, x2: 10, y2: 10 } } }, source: 'synthetic' };

async function file(t: { after: (fn: () => Promise<void>) => void }, lines: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-load-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'tasks.jsonl');
  await writeFile(path, lines.join('\n') + '\n');
  return path;
}

test('every good record is loaded, list answers included', async (t) => {
  const path = await file(t, [JSON.stringify(good), '', JSON.stringify({ ...good, id: 't2', answer: ['A', 'B'] })]);
  const tasks = await loadTasks(path);
  assert.deepEqual(tasks.map((x) => x.id), ['t1', 't2']);
  assert.deepEqual(tasks[1]!.answer, ['A', 'B']);
});

test('a bad file is an error naming the file, the line, the field and what was expected — no record is dropped silently', async (t) => {
  const { question: _q, ...noQuestion } = good;
  const path = await file(t, [
    JSON.stringify(good),
    JSON.stringify({ ...noQuestion, id: 't2' }),
    JSON.stringify({ ...good, id: 't3', difficulty: 'hard' }),
    '{"id": "t4", oops',
    JSON.stringify({ ...good, id: 't5', extra: 1 }),
    JSON.stringify({ ...good, id: 't6', kind: 'pie' }),
    JSON.stringify({ ...good, id: 't7', meta: { x_values_bbox: { A: { x1: 0, y1: 0, x2: 10 } } } }),
    JSON.stringify(good),
  ]);
  await assert.rejects(loadTasks(path), (err: unknown) => {
    assert.ok(err instanceof TaskFileError);
    const text = err.message;
    assert.match(text, new RegExp(`${path}:2: missing field 'question'`));
    assert.match(text, new RegExp(`${path}:3: difficulty: expected integer`));
    assert.match(text, new RegExp(`${path}:4: not valid JSON`));
    assert.match(text, new RegExp(`${path}:5: \\(record\\): unexpected field 'extra'`));
    assert.match(text, new RegExp(`${path}:6: kind: expected one of \\["table","vbar","hbar","grouped","line","chart","geometry","search"\\]`));
    assert.match(text, new RegExp(`${path}:7: meta.x_values_bbox.A: missing field 'y2'`));
    assert.match(text, new RegExp(`${path}:8: id: 't1' was already used on line 1`));
    return true;
  });
});

test('a missing file says which file could not be read', async () => {
  await assert.rejects(loadTasks('/nonexistent/tasks.jsonl'), /cannot read task file \/nonexistent\/tasks.jsonl/);
});
