import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createActionsParseCommand } from '../../env/cli/actions-parse.js';
import { UsageError } from '../../env/cli/command.js';

function capture(): { write(text: string): void; text(): string } {
  const chunks: string[] = [];
  return { write: (t: string) => void chunks.push(t), text: () => chunks.join('') };
}

const MESSAGE = 'THOUGHT 0: focus.\n```python\nx = focus_on_columns_with_mask(image_1, ["Country"], columns_bbox)\n```\n<tool_call>{"name": "zoom_in"}</tool_call>';

test('actions parse reads stdin and prints calls, answer and errors as JSON, exit 0 even with errors', async () => {
  const out = capture();
  const code = await createActionsParseCommand(Readable.from([Buffer.from(MESSAGE)]), out).run([]);
  assert.equal(code, 0);
  const printed = JSON.parse(out.text());
  assert.deepEqual(printed.calls, [{ name: 'focus_on_columns_with_mask', arguments: { columns: ['Country'] } }]);
  assert.equal(printed.answer, null);
  assert.equal(printed.errors.length, 1);
  assert.equal(printed.errors[0].class, 'E2');
  assert.equal(printed.errors[0].line, 5);
  assert.deepEqual(printed.formats, ['hermes', 'refocus']);
});

test('actions parse --file reads the message from a file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vistool-actions-'));
  const file = join(dir, 'message.txt');
  writeFileSync(file, 'FINAL ANSWER: Alice||Bob. TERMINATE');
  const out = capture();
  const code = await createActionsParseCommand(Readable.from([]), out).run(['--file', file]);
  assert.equal(code, 0);
  assert.deepEqual(JSON.parse(out.text()).answer, ['Alice', 'Bob']);
});

test('actions parse --image-var names a variable bound in an earlier turn', async () => {
  const out = capture();
  const text = '```python\nfocus_on_rows_with_draw(masked, ["4"], rows_bbox)\n```';
  await createActionsParseCommand(Readable.from([text]), out).run(['--image-var', 'masked']);
  assert.deepEqual(JSON.parse(out.text()).calls, [{ name: 'focus_on_rows_with_draw', arguments: { rows: ['4'] } }]);
});

test('actions parse refuses unknown options and stray words as usage errors', async () => {
  const command = createActionsParseCommand(Readable.from([]), capture());
  await assert.rejects(command.run(['--bogus']), UsageError);
  await assert.rejects(command.run(['message.txt']), UsageError);
});

test('actions parse on a terminal with no --file is a usage error instead of waiting forever', async () => {
  const stdin = Object.assign(Readable.from([]), { isTTY: true });
  await assert.rejects(createActionsParseCommand(stdin, capture()).run([]), /pipe one on stdin or give --file/);
});

test('actions parse names the file it cannot read', async () => {
  await assert.rejects(createActionsParseCommand(Readable.from([]), capture()).run(['--file', '/nonexistent/m.txt']), /cannot read the message file \/nonexistent\/m\.txt/);
});

test('vistool actions parse works end to end through main: stdin in, JSON out, exit 0; a bad option exits 2', () => {
  // The package is CommonJS, so from an ES module the exports arrive under `default`.
  const script = "const cli = await import('./env/cli/main.ts'); process.exitCode = await (cli.main ?? cli.default.main)(process.argv.slice(1));";
  const run = (args: string[], input: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, 'actions', 'parse', ...args], { input, encoding: 'utf8' });
  const ok = run([], '<answer>7</answer>');
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).answer, '7');
  const bad = run(['--nope'], '');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /vistool actions parse/);
});
