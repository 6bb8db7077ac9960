/**
 * One severity, one message for a config's problems in the editor and on the command line (issue
 * 44, 2.9). The extension reports every problem `vistool config validate` prints but JSON syntax
 * (editorProblems), and the schema VS Code's JSON support gets (`config schema --for-editor`,
 * dist/run-config.schema.json) validates nothing, so nothing is said twice in other words: before,
 * an unknown key was VS Code's warning "Property advantag is not allowed." in the editor and an
 * error with exit 1 on the command line.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Ajv from 'ajv';
import { createConfigSchemaCommand } from '../../env/cli/config-schema.js';
import { createConfigValidateCommand } from '../../env/cli/config-validate.js';
import { editorSchema } from '../../env/config/editor-schema.js';
import { localFacts } from '../../env/config/environment-facts.js';
import { selfContainedSchema } from '../../env/config/run-config-schema.js';
import { editorProblems, formatProblem, validateRunConfigText } from '../../env/config/validate-run-config.js';

const BAD = '{\n  "name": "bad",\n  "rl": {\n    "group_size": 1,\n    "lr": "fast",\n    "advantag": "grpo"\n  },\n  "name": "twice"\n}\n';

function capture() {
  const chunks: string[] = [];
  return { write: (text: string) => chunks.push(text), text: () => chunks.join('') };
}

test('the editor reports exactly what the CLI prints, with its severity, message and code, but JSON syntax', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-editor-schema-'));
  const file = join(dir, 'bad.vistool.json');
  await writeFile(file, BAD);
  const stdout = capture();
  const code = await createConfigValidateCommand(stdout, capture()).run([file, '--base-dir', dir]);
  assert.equal(code, 1);
  const facts = localFacts({ cudaDevices: null, bf16: null }, process.env, process.env.HOME ?? '', [dir]);
  const all = validateRunConfigText(BAD, { baseDir: dir, facts }).problems;
  const shown = editorProblems(all);
  const cliLines = stdout.text().trim().split('\n');
  // The CLI also prints the duplicate key, a JSON syntax matter VS Code's JSON support reports in the editor.
  assert.deepEqual(all.filter((p) => !shown.includes(p)).map((p) => p.code), ['syntax/duplicate-key']);
  assert.deepEqual(shown.map((p) => formatProblem(file, p)), cliLines.filter((line) => !line.endsWith('[syntax/duplicate-key]')));
  const unknown = shown.find((p) => p.code === 'schema/unknown-key');
  assert.equal(unknown?.severity, 'error');
  assert.match(unknown?.message ?? '', /^unknown key 'advantag' in rl: did you mean 'advantage'\? Unknown keys are errors\./);
  assert.ok(shown.some((p) => p.code === 'schema/type' && p.severity === 'error'));
});

test('the schema VS Code gets accepts any config: no validating keyword is left, so its JSON support reports nothing of its own', () => {
  const schema = editorSchema(selfContainedSchema()) as Record<string, unknown>;
  const validate = new Ajv({ strict: false }).compile(schema);
  assert.equal(validate(JSON.parse(BAD.replace('"name": "twice"\n', '"extra": {"x": 1}\n'))), true);
  assert.equal(validate({ rl: { group_size: -3, advantage: 'nope' }, device: 7 }), true);
  // The descriptive part stays: every key, description and default, and enums as suggested values.
  const rl = (schema.properties as Record<string, Record<string, Record<string, Record<string, unknown>>>>).rl;
  assert.ok(rl?.properties?.advantage?.description);
  assert.ok(Array.isArray(rl?.properties?.advantage?.examples));
  assert.equal(rl?.properties?.advantage?.enum, undefined);
  const text = JSON.stringify(schema);
  for (const keyword of ['"additionalProperties":false', '"minimum":', '"enum":', '"required":']) assert.ok(!text.includes(keyword), keyword);
  // Keys named like keywords are keys, and stay (rewards.weights.format).
  assert.match(text, /"format":\{"description"/);
  // The full schema still validates: `config schema` without --for-editor prints it as before.
  assert.equal(new Ajv({ strict: false }).compile(selfContainedSchema())({ rl: { group_size: -3 } }), false);
});

test('config schema --for-editor prints that schema; anything else after it is a usage error', async () => {
  const stdout = capture();
  assert.equal(await createConfigSchemaCommand(stdout).run(['--for-editor']), 0);
  assert.deepEqual(JSON.parse(stdout.text()), editorSchema(selfContainedSchema()));
  await assert.rejects(createConfigSchemaCommand(capture()).run(['--for-editor', 'x']), /unexpected argument 'x'/);
});
