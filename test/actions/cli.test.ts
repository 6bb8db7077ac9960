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

test('actions parse gives the env\'s verdict on every call: the same class and message an episode step gives', async () => {
  const { Episode } = await import('../../env/episodes/episode.js');
  const { ImageStore } = await import('../../env/episodes/image-store.js');
  const { resolveMetadata } = await import('../../env/tools/metadata.js');
  const { tableFixture } = await import('../fixtures/render.js');
  const fixture = await tableFixture();
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  const task = { id: 't', image: 'table.png', question: 'q?', answer: '34', kind: 'table' as const, difficulty: 1, meta: fixture.meta, source: 'test' };
  const store = new ImageStore(mkdtempSync(join(tmpdir(), 'vistool-verdicts-')));
  const messages = [
    '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Rider"], "colour": "red"}}</tool_call>',
    '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": "Rider"}}</tool_call>',
    '<tool_call>{"name": "zoom_in", "arguments": {"bbox": [0, 0, 10]}}</tool_call>',
    '{"actions": [{"name": "zoom_in", "arguments": {"bbox": [1, 2, 30, 40], "factor": 100}}]}',
  ];
  for (const text of messages) {
    const out = capture();
    await createActionsParseCommand(Readable.from([Buffer.from(text)]), out).run([]);
    const parsed = JSON.parse(out.text()) as { errors: { class: string; message: string }[] };
    const { episode } = await Episode.start(task, fixture.image, meta, store);
    const step = await episode.step({ text });
    const envErrors = step.info.errors.map((e: { class: string; message: string }) => [e.class, e.message]);
    assert.ok(envErrors.length > 0, `the env accepts ${text}`);
    // What differs without an image: an unknown name is answered with every tool, not this image's,
    // and the examples of arguments come from the tool, not from the image's own labels.
    const comparable = (message: string) => message.replace(/ (The tools are|Valid tools for this image are): .*/u, '').replace(/, e\.g\. .*?(; got|$)/u, '$1');
    assert.deepEqual(parsed.errors.map((e) => [e.class, comparable(e.message)]), envErrors.map(([c, m]: string[]) => [c, comparable(m!)]), text);
  }
});
