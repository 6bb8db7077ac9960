/**
 * The rollout record and the metrics line have one definition each, a JSON Schema in schemas/.
 * protocol/ holds TypeScript types generated from them, and the trainer's tests validate what it
 * writes against the same files. Here: the checked-in types are what the schemas give, the
 * engine's real episodes (played and scored) validate, and the validator does reject a record
 * that breaks the contract, so a passing check means something.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Ajv from 'ajv';
import { parseAction } from '../../env/actions/parse.js';
import { GENERATED_TYPES, generatedSource } from '../../scripts/generate-record-types.js';
import { FLAT_GROUP, HOSTILE_GROUP, TABLE_GROUP, writeRunDirectory } from '../runs/run-directory.js';

const REPO = resolve(__dirname, '..', '..');
const schema = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(REPO, 'schemas', name), 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: true });
const validateRecord = ajv.compile(schema('rollout-record.schema.json'));
const validateMetricsLine = ajv.compile(schema('metrics-line.schema.json'));

function problems(validate: typeof validateRecord, value: unknown): string {
  return validate(value) ? '' : ajv.errorsText(validate.errors);
}

test('the checked-in record types are what the schemas generate (npm run gen:types)', async () => {
  for (const { schema: schemaPath, output } of GENERATED_TYPES) {
    const checkedIn = await readFile(join(REPO, output), 'utf8');
    assert.equal(checkedIn, await generatedSource(schemaPath), `${output} is stale: run npm run gen:types`);
  }
});

test("the engine's played and scored episodes, as a run writes them, are valid rollout records", async () => {
  const dir = await writeRunDirectory(await mkdtemp(join(tmpdir(), 'vistool-schema-')), {
    rolloutSteps: [1],
    groups: [TABLE_GROUP, FLAT_GROUP, HOSTILE_GROUP],
    tokenViews: true,
    metricRows: 3,
  });
  const lines = (await readFile(join(dir, 'rollouts', (await readdir(join(dir, 'rollouts')))[0]!), 'utf8')).trim().split('\n');
  const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(records.length, TABLE_GROUP.length + FLAT_GROUP.length + HOSTILE_GROUP.length);
  // The groups hold tool calls, failed calls and parse errors, so every branch of the schema is read.
  const turns = records.flatMap((r) => r['turns'] as Array<Record<string, unknown>>);
  assert.ok(turns.some((t) => t['role'] === 'tool'));
  assert.ok(turns.some((t) => t['role'] === 'assistant' && (t['errors'] as unknown[]).length > 0));
  assert.ok(turns.some((t) => t['role'] === 'assistant' && (t['calls'] as Array<{ ok: boolean }>).some((c) => c.ok)));
  for (const record of records) assert.equal(problems(validateRecord, record), '', `record ${String(record['prompt_id'])}`);

  const metrics = (await readFile(join(dir, 'metrics.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as unknown);
  assert.equal(metrics.length, 3);
  for (const line of metrics) assert.equal(problems(validateMetricsLine, line), '');
});

test('a turn whose parse error says where it was (offset, line) is a valid record', async () => {
  const dir = await writeRunDirectory(await mkdtemp(join(tmpdir(), 'vistool-schema-')), { rolloutSteps: [1], groups: [TABLE_GROUP] });
  const record = JSON.parse((await readFile(join(dir, 'rollouts', 'step-000001.jsonl'), 'utf8')).split('\n')[0]!) as Record<string, unknown>;
  const turns = record['turns'] as Array<Record<string, unknown>>;
  const text = 'Let me look.\n<tool_call>{"name": "zoom_in"';
  const parsed = parseAction(text);
  assert.ok(parsed.errors.some((e) => e.offset !== undefined && e.line === 2), JSON.stringify(parsed.errors));
  turns[turns.findIndex((t) => t['role'] === 'assistant')] = { role: 'assistant', text, calls: [], errors: parsed.errors, answer: null };
  assert.equal(problems(validateRecord, record), '');
});

test('the schemas reject records that break the contract', async () => {
  const dir = await writeRunDirectory(await mkdtemp(join(tmpdir(), 'vistool-schema-')), { rolloutSteps: [1], groups: [TABLE_GROUP] });
  const good = JSON.parse((await readFile(join(dir, 'rollouts', 'step-000001.jsonl'), 'utf8')).split('\n')[0]!) as Record<string, unknown>;
  assert.equal(problems(validateRecord, good), '');
  const assistantIndex = (good['turns'] as Array<{ role: string }>).findIndex((t) => t.role === 'assistant');
  const broken: Array<[string, (r: Record<string, unknown>) => void, RegExp]> = [
    ['an unknown field', (r) => { r['advantages'] = 0.5; }, /additional properties/],
    ['a missing field', (r) => { delete r['turns']; }, /turns/],
    ['an error class outside E1–E6', (r) => {
      (r['turns'] as Array<Record<string, unknown>>)[assistantIndex]!['errors'] = [{ class: 'E7', message: 'x' }];
    }, /allowed values|must match/],
    ['a turn of no known role', (r) => { (r['turns'] as Array<Record<string, unknown>>)[0]!['role'] = 'system'; }, /oneOf|allowed values|equal to constant/],
    ['a negative step', (r) => { r['step'] = -1; }, /must be >= 0/],
  ];
  for (const [what, mutate, message] of broken) {
    const copy = structuredClone(good);
    mutate(copy);
    assert.match(problems(validateRecord, copy), message, what);
  }
  assert.match(problems(validateMetricsLine, { step: 1, time: 2, 'reward/mean': 'high' }), /must be number,null/);
  assert.match(problems(validateMetricsLine, { step: 1, 'reward/mean': 0.5 }), /time/);
  assert.match(problems(validateMetricsLine, { step: 1, time: 2, stage: 'warmup' }), /allowed values/);
});

test('the task kinds a rollout record names are the task record schema’s', () => {
  const taskSchema = JSON.parse(readFileSync(join(REPO, 'env', 'tasks', 'task-record.schema.json'), 'utf8')) as { properties: { kind: { enum: string[] } } };
  const recordSchema = schema('rollout-record.schema.json') as { definitions: { TaskKind: { enum: string[] } } };
  assert.deepEqual(recordSchema.definitions.TaskKind.enum, taskSchema.properties.kind.enum);
});
