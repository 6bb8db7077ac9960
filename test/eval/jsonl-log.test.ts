import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonlAppender, readJsonl, repairTornTail } from '../../env/eval/jsonl-log.js';

test('appends from concurrent callers land as whole lines, each call\'s values consecutive, in call order', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'vistool-jsonl-')), 'log.jsonl');
  const log = new JsonlAppender(path);
  await Promise.all(Array.from({ length: 50 }, (_, i) => log.append({ i, part: 'a', pad: 'x'.repeat(i * 100) }, { i, part: 'b' })));
  await log.close();
  const values = (await readJsonl(path)) as { i: number; part: string }[];
  assert.equal(values.length, 100);
  values.forEach((v, k) => assert.deepEqual([v.i, v.part], [Math.floor(k / 2), k % 2 === 0 ? 'a' : 'b']));
});

test('a torn last line left by a killed writer is ignored by the reader and cut off before the next append', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'vistool-jsonl-')), 'log.jsonl');
  await writeFile(path, '{"a":1}\n{"a":2}\n{"a":');
  assert.deepEqual(await readJsonl(path), [{ a: 1 }, { a: 2 }]);
  assert.equal(await repairTornTail(path), 5);
  const log = new JsonlAppender(path);
  await log.append({ a: 3 });
  await log.close();
  assert.equal(await readFile(path, 'utf8'), '{"a":1}\n{"a":2}\n{"a":3}\n');
  assert.equal(await repairTornTail(path), 0, 'a whole file is left alone');
  assert.equal(await repairTornTail(join(path, '..', 'missing.jsonl')), 0);
});

test('a corrupt line in the middle is an error naming the file and line, never skipped', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'vistool-jsonl-')), 'log.jsonl');
  await writeFile(path, '{"a":1}\n');
  await appendFile(path, 'oops\n{"a":2}\n');
  await assert.rejects(readJsonl(path), /log\.jsonl:2 is not JSON .*remove that line/);
});
