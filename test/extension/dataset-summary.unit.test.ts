import assert from 'node:assert/strict';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { datasetDescription, DatasetSummaries, summarizeTasks } from '../../extension/datasets/dataset-summary.js';
import { tempDir } from './run-dirs.js';

const task = (id: string, kind: string, source = 'synthetic') => JSON.stringify({ id, image: `images/${id}.png`, question: `Q ${id}?`, answer: kind === 'line' ? ['a', 'b'] : '7', kind, difficulty: 1, meta: {}, source });

test('a task file is summarised by count, kinds and sources, with its first task as the sample', () => {
  const text = [task('t1', 'table'), task('t2', 'vbar'), task('t3', 'table', 'chartqa'), '', 'not json', '[1, 2]'].join('\n');
  const summary = summarizeTasks('/data/train/tasks.jsonl', text);
  assert.equal(summary.tasks, 3);
  assert.deepEqual(summary.kinds, { table: 2, vbar: 1 });
  assert.deepEqual(summary.sources, { synthetic: 2, chartqa: 1 });
  assert.equal(summary.badLines, 2);
  assert.deepEqual(summary.sample, { id: 't1', image: '/data/train/images/t1.png', question: 'Q t1?', answer: '7' });
  assert.equal(datasetDescription(summary), '3 tasks · table 2, vbar 1 · 2 unreadable line(s)');
});

test('summaries are re-read only when the file changed', async () => {
  const dir = await tempDir('datasets');
  const file = join(dir, 'tasks.jsonl');
  await writeFile(file, task('a', 'line') + '\n');
  const summaries = new DatasetSummaries();
  const first = await summaries.summarize(file);
  assert.equal(first?.tasks, 1);
  assert.equal(first?.sample?.answer, 'a, b');
  assert.equal(await summaries.summarize(file), first, 'an unchanged file gives the cached summary');
  await appendFile(file, task('b', 'hbar') + '\n');
  assert.equal((await summaries.summarize(file))?.tasks, 2);
  assert.equal(await summaries.summarize(join(dir, 'missing.jsonl')), null);
});
