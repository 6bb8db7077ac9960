/**
 * Annotations: one writer appends whole lines to annotations.jsonl, an edit or a removal is a new
 * line, the newest line of an id wins; every line written passes the schema (checked here with a
 * separate ajv compile of schemas/annotation.schema.json), and a bad save is refused with why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { appendFile, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import { ANNOTATIONS_FILE, AnnotationError, deleteAnnotation, readAnnotations, saveAnnotation } from '../../env/runs/annotations.js';
import { HOSTILE_TEXT } from './run-directory.js';

const validate = new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(join(__dirname, '..', '..', 'schemas', 'annotation.schema.json'), 'utf8')) as object);
const target = { kind: 'step' as const, step: 12, line: 3, prompt_id: 'fixture-table' };

const lines = async (dir: string) => (await readFile(join(dir, ANNOTATIONS_FILE), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

test('a saved annotation is one schema-valid line; an edit appends another under the same id, and the newest wins', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-annotations-'));
  const first = await saveAnnotation(dir, { target, tags: [' copies label', 'good call', 'good call', ''], comment: HOSTILE_TEXT }, 100);
  assert.deepEqual(first.tags, ['copies label', 'good call'], 'tags trimmed, repeats and empty ones dropped');
  assert.match(first.id, /^[0-9a-f]{24}$/);
  await saveAnnotation(dir, { id: first.id, target, tags: ['fixed later'], comment: 'edited' }, 200);
  await saveAnnotation(dir, { target: { kind: 'eval', step: 14, key: 'eval-after_rl', line: 0, prompt_id: 'test-table-000001' }, tags: [], comment: 'a held-out one' }, 300);
  const written = await lines(dir);
  assert.equal(written.length, 3);
  for (const line of written) assert.ok(validate(line), JSON.stringify(validate.errors));
  const { annotations, problems } = await readAnnotations(dir);
  assert.deepEqual(problems, []);
  assert.deepEqual(annotations.map((a) => [a.id === first.id, a.tags, a.comment, a.time]), [[true, ['fixed later'], 'edited', 200], [false, [], 'a held-out one', 300]]);
});

test('a removal is appended and leaves the annotation out; removing one that is not there says so', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-annotations-'));
  const a = await saveAnnotation(dir, { target, tags: ['x'], comment: '' });
  await deleteAnnotation(dir, a.id);
  assert.deepEqual((await readAnnotations(dir)).annotations, []);
  assert.equal((await lines(dir)).length, 2, 'the history stays');
  await assert.rejects(deleteAnnotation(dir, a.id), AnnotationError);
});

test('bad saves are refused with what is wrong, and nothing is written', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-annotations-'));
  await assert.rejects(saveAnnotation(dir, { target, tags: ['<script>'], comment: '' }), /not saved: \/tags\/0 must match pattern/);
  await assert.rejects(saveAnnotation(dir, { target, tags: [], comment: '   ' }), /give a tag or a comment/);
  await assert.rejects(saveAnnotation(dir, { target, tags: Array.from({ length: 17 }, (_, i) => `t${i}`), comment: '' }), /must NOT have more than 16 items/);
  await assert.rejects(saveAnnotation(dir, { target: { ...target, line: -1 }, tags: ['ok'], comment: '' }), /line must be >= 0/);
  await assert.rejects(saveAnnotation(dir, { id: '../../etc', target, tags: ['ok'], comment: '' }), /\/id must match pattern/);
  assert.deepEqual(await readAnnotations(dir), { annotations: [], problems: [] });
});

test('a torn last line (a killed writer) and a line that is not an annotation are reported, the rest read', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-annotations-'));
  await saveAnnotation(dir, { target, tags: ['kept'], comment: '' });
  await appendFile(join(dir, ANNOTATIONS_FILE), '{"id": "zz", "time": 1}\n{"id": "0123456789abcdef0123", "ti');
  const { annotations, problems } = await readAnnotations(dir);
  assert.deepEqual(annotations.map((a) => a.tags), [['kept']]);
  assert.equal(problems.length, 2);
  assert.match(problems[0] ?? '', /line 2 is not an annotation/);
  assert.match(problems[1] ?? '', /line 3 is not JSON/);
});
