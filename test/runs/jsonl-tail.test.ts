import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonlTail } from '../../env/runs/jsonl-tail.js';
import { MetricsStore } from '../../env/runs/metrics-store.js';

async function tempFile(name: string, content: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'vistool-tail-')), name);
  await writeFile(path, content);
  return path;
}

test('each read returns only the complete lines appended since the last, with byte offsets', async () => {
  const path = await tempFile('m.jsonl', '{"a":1}\n{"a":2}\n');
  const tail = new JsonlTail(path);
  const first = await tail.read();
  assert.deepEqual(first.lines.map((l) => [l.line, l.offset, l.length, l.text]), [[0, 0, 7, '{"a":1}'], [1, 8, 7, '{"a":2}']]);
  await appendFile(path, '{"a":3}\n');
  const second = await tail.read();
  assert.deepEqual(second.lines.map((l) => [l.line, l.offset, l.text]), [[2, 16, '{"a":3}']]);
  assert.equal((await tail.read()).lines.length, 0);
});

test('a torn last line (a writer mid-append) is held back until its newline arrives', async () => {
  const path = await tempFile('m.jsonl', '{"a":1}\n{"a":');
  const tail = new JsonlTail(path);
  assert.deepEqual((await tail.read()).lines.map((l) => l.text), ['{"a":1}']);
  await appendFile(path, '2}\n');
  assert.deepEqual((await tail.read()).lines.map((l) => [l.line, l.text]), [[1, '{"a":2}']]);
});

test('multi-byte characters split across reads come back whole', async () => {
  const path = await tempFile('m.jsonl', '');
  const tail = new JsonlTail(path);
  const line = JSON.stringify({ q: 'Zürich — 東京 🚴' });
  const bytes = Buffer.from(line + '\n');
  await appendFile(path, bytes.subarray(0, 12));
  assert.equal((await tail.read()).lines.length, 0);
  await appendFile(path, bytes.subarray(12));
  assert.deepEqual((await tail.read()).lines.map((l) => l.text), [line]);
});

test('ASCII and UTF-8 lines in one read keep their text and byte offsets (the ASCII path decodes a chunk once)', async () => {
  const lines = ['{"a":1}', JSON.stringify({ q: 'Zürich — 東京 🚴' }), '{"b":"plain"}', JSON.stringify({ q: 'naïve' })];
  const path = await tempFile('m.jsonl', lines.join('\n') + '\n');
  const ascii = await tempFile('a.jsonl', '{"a":1}\n{"b":"plain"}\n{"c":[1,2]}\n');
  const offsets = (texts: string[]) => texts.map((_, i) => texts.slice(0, i).reduce((sum, t) => sum + Buffer.byteLength(t) + 1, 0));
  const mixed = (await new JsonlTail(path).read()).lines;
  assert.deepEqual(mixed.map((l) => [l.text, l.offset, l.length]), lines.map((t, i) => [t, offsets(lines)[i], Buffer.byteLength(t)]));
  const plain = ['{"a":1}', '{"b":"plain"}', '{"c":[1,2]}'];
  assert.deepEqual((await new JsonlTail(ascii).read()).lines.map((l) => [l.text, l.offset, l.length]), plain.map((t, i) => [t, offsets(plain)[i], t.length]));
  // Bytes 0x80–0xFF that are not valid UTF-8 read as U+FFFD, as before, not as Latin-1 letters.
  const invalid = join(await mkdtemp(join(tmpdir(), 'vistool-tail-')), 'bad.jsonl');
  await writeFile(invalid, Buffer.from([0x7b, 0x22, 0x71, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d, 0x0a]));
  assert.deepEqual((await new JsonlTail(invalid).read()).lines.map((l) => l.text), ['{"q":"\ufffd"}']);
});

test('a file replaced by a rewrite (resume) is read again from the start and reported as reset', async () => {
  const path = await tempFile('m.jsonl', '{"a":1}\n{"a":2}\n{"a":3}\n');
  const tail = new JsonlTail(path);
  await tail.read();
  const replacement = path + '.tmp';
  await writeFile(replacement, '{"a":1}\n');
  await rename(replacement, path);
  const after = await tail.read();
  assert.equal(after.reset, true);
  assert.deepEqual(after.lines.map((l) => l.text), ['{"a":1}']);
});

test('metrics rows become columns; eval lines become evaluations; bad lines are counted, not fatal', async () => {
  const lines = [
    { step: 1, time: 100, 'reward/mean': 0.5, stage: 'rl' },
    { step: 0, stage: 'eval', label: 'before', 'eval/acc_tools': 0.4 },
    'not json',
    { step: 2, timestamp: '1970-01-01T00:01:50Z', 'reward/mean': 0.6, 'acc/mean': 0.3, note: 'text is ignored' },
  ].map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
  const store = new MetricsStore(await tempFile('metrics.jsonl', lines));
  assert.equal(await store.refresh(), true);
  assert.equal(store.rowCount, 2);
  assert.deepEqual(store.names, ['acc/mean', 'reward/mean']);
  assert.deepEqual(store.slice(0), { steps: [1, 2], times: [100, 110], stages: ['rl', null], columns: { 'reward/mean': [0.5, 0.6], 'acc/mean': [null, 0.3] } });
  assert.deepEqual(store.slice(1).steps, [2]);
  assert.deepEqual(store.evaluations, [{ label: 'before', step: 0, source: 'metrics.jsonl', metrics: { 'eval/acc_tools': 0.4 } }]);
  assert.match(store.problems[0] ?? '', /1 line\(s\) are not JSON objects.*line 3/);
  assert.equal(await store.refresh(), false);
});

test('a bounded read returns the complete lines within the bound and says more is left; the next read goes on from there', async () => {
  const lines = Array.from({ length: 10 }, (_, i) => `{"i":${i}}`); // 7 bytes and a newline each
  const path = await tempFile('m.jsonl', lines.join('\n') + '\n');
  const tail = new JsonlTail(path);
  const first = await tail.read(20);
  // Reading stops once 20 bytes are taken; the line the bound cut through is read whole next time.
  assert.deepEqual(first.lines.map((l) => l.text), lines.slice(0, 2));
  assert.equal(first.more, true);
  const rest = await tail.read();
  assert.deepEqual(rest.lines.map((l) => [l.line, l.offset, l.text]), lines.slice(2).map((text, i) => [i + 2, (i + 2) * 8, text]));
  assert.equal(rest.more, false);
  // A line longer than the bound still comes, alone: a bounded read always makes progress.
  await appendFile(path, `{"long":"${'x'.repeat(100)}"}\n{"i":10}\n`);
  assert.deepEqual((await tail.read(4)).lines.map((l) => l.line), [10]);
});

test('the metrics store reads about maxBytes per refresh and says how far it got until it reaches the end', async () => {
  const lines = Array.from({ length: 100 }, (_, i) => JSON.stringify({ step: i + 1, 'reward/mean': i / 100 }));
  const path = await tempFile('metrics.jsonl', lines.join('\n') + '\n');
  const bytes = Buffer.byteLength(lines.join('\n') + '\n');
  const store = new MetricsStore(path);
  assert.equal(await store.refresh(500), true);
  const partial = store.rowCount;
  assert.ok(partial > 0 && partial < 100, `${partial} rows after one slice`);
  assert.deepEqual(store.loading, { bytesRead: Buffer.byteLength(lines.slice(0, partial).join('\n') + '\n'), bytesTotal: bytes });
  assert.equal(await store.refresh(), true);
  assert.equal(store.rowCount, 100);
  assert.equal(store.loading, null);
  assert.deepEqual(store.slice(98), { steps: [99, 100], times: [null, null], stages: [null, null], columns: { 'reward/mean': [0.98, 0.99] } });
  assert.deepEqual(Array.from(store.column('reward/mean') ?? []), lines.map((_, i) => i / 100));
});
