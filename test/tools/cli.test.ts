import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { contentHash, decodeImage } from '../../env/core/image.js';
import { UsageError } from '../../env/cli/command.js';
import { main } from '../../env/cli/main.js';
import { createToolsApplyCommand } from '../../env/cli/tools-apply.js';
import { createToolsListCommand, toolListing } from '../../env/cli/tools-list.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import { listTools, runToolCall } from '../../env/tools/registry.js';
import { tableFixture } from '../fixtures/render.js';

function capture(): { write(text: string): void; text(): string } {
  let out = '';
  return { write: (t: string) => void (out += t), text: () => out };
}

async function workspace(): Promise<{ dir: string; image: string; meta: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-tools-cli-'));
  const fixture = await tableFixture();
  const image = join(dir, 'table.png');
  const meta = join(dir, 'table.meta.json');
  await writeFile(image, fixture.png);
  await writeFile(meta, JSON.stringify(fixture.meta));
  return { dir, image, meta, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

test('tools list prints every tool with the first sentence of its description', async () => {
  const out = capture();
  assert.equal(await createToolsListCommand(out).run([]), 0);
  const lines = out.text().trimEnd().split('\n');
  assert.equal(lines.length, 21);
  assert.match(lines[0] ?? '', /^focus_on_columns_with_mask\s+Hides every column you do not list by painting it white, so only the columns you name stay visible\.$/);
  assert.equal(out.text(), toolListing() + '\n');
});

test('tools list --json prints the OpenAI function objects', async () => {
  const out = capture();
  await createToolsListCommand(out).run(['--json']);
  const parsed = JSON.parse(out.text()) as { type: string; function: { name: string } }[];
  assert.deepEqual(parsed.map((t) => t.function.name), listTools().map((t) => t.name));
  assert.ok(parsed.every((t) => t.type === 'function'));
  await assert.rejects(createToolsListCommand(out).run(['--yaml']), UsageError);
});

test('tools apply runs the calls in order, writes the PNG and prints a JSON summary', async () => {
  const ws = await workspace();
  try {
    const out = capture();
    const target = join(ws.dir, 'nested', 'out.png');
    const calls = [
      { name: 'focus_on_columns_with_mask', arguments: { columns: ['Country', 'wins'] } },
      { name: 'focus_on_rows_with_draw', arguments: { rows: ['Hinault'] } },
    ];
    const code = await createToolsApplyCommand(out).run(['--image', ws.image, '--meta', ws.meta, ...calls.flatMap((c) => ['--call', JSON.stringify(c)]), '--out', target]);
    assert.equal(code, 0);
    const summary = JSON.parse(out.text());
    const png = await readFile(target);
    assert.equal(summary.sha256, contentHash(png));
    assert.deepEqual([summary.width, summary.height], [460, 220]);
    assert.deepEqual(summary.calls.map((c: { index: number; name: string }) => [c.index, c.name]), [[1, 'focus_on_columns_with_mask'], [2, 'focus_on_rows_with_draw']]);
    assert.deepEqual(summary.calls[0].matches[1], { requested: 'wins', matched: 'Wins', how: 'case' });
    // The file holds exactly what the registry produces for the same calls.
    const fixture = await tableFixture();
    const meta = resolveMetadata(fixture.meta, 460, 220);
    const first = await runToolCall(fixture.image, calls[0]!, meta);
    assert.ok(first.ok);
    const second = await runToolCall(first.image, calls[1]!, meta);
    assert.ok(second.ok);
    assert.ok((await decodeImage(png)).data.equals(second.image.data));
  } finally {
    await ws.cleanup();
  }
});

test('tools apply accepts a whole task record as --meta, and works without --meta for geometry tools', async () => {
  const ws = await workspace();
  try {
    const fixture = await tableFixture();
    const record = join(ws.dir, 'task.json');
    await writeFile(record, JSON.stringify({ id: 't1', image: 'table.png', meta: fixture.meta }));
    const apply = (meta: string[], call: object) =>
      createToolsApplyCommand(capture()).run(['--image', ws.image, ...meta, '--call', JSON.stringify(call), '--out', join(ws.dir, 'a.png')]);
    assert.equal(await apply(['--meta', record], { name: 'focus_on_rows_with_highlight', arguments: { rows: ['Cavendish'] } }), 0);
    // Rows are keyed by their first cell: 'UK' is a Country value, not a row label.
    await assert.rejects(apply(['--meta', record], { name: 'focus_on_rows_with_highlight', arguments: { rows: ['UK'] } }), /--call #1 \(focus_on_rows_with_highlight\) failed with E4: unknown row 'UK' — rows are: Merckx, Hinault, Cavendish, Anquetil, Maertens/);
    assert.equal(await apply([], { name: 'mark_point', arguments: { x: 5, y: 5 } }), 0);
    await assert.rejects(apply([], { name: 'focus_on_rows_with_draw', arguments: { rows: ['Merckx'] } }), /failed with E4: this image has no labelled rows \(or any other bands\)/);
  } finally {
    await ws.cleanup();
  }
});

test('tools apply exits non-zero naming the failing call and its error class, and writes nothing', async () => {
  const ws = await workspace();
  try {
    const target = join(ws.dir, 'never.png');
    const errors = await stderrOf(() =>
      main(['tools', 'apply', '--image', ws.image, '--meta', ws.meta, '--call', '{"name":"mark_point","arguments":{"x":1,"y":1}}', '--call', '{"name":"focus_on_columns_with_mask","arguments":{}}', '--out', target]),
    );
    assert.equal(errors.code, 1);
    assert.match(errors.text, /--call #2 \(focus_on_columns_with_mask\) failed with E2: focus_on_columns_with_mask needs 'columns'/);
    assert.equal(existsSync(target), false);
    const badJson = await stderrOf(() => main(['tools', 'apply', '--image', ws.image, '--call', '{name: mark_point}', '--out', target]));
    assert.equal(badJson.code, 1);
    assert.match(badJson.text, /--call #1 failed with E1: it is not valid JSON/);
  } finally {
    await ws.cleanup();
  }
});

test('tools apply reports unreadable images and metadata clearly, and missing options as usage errors', async () => {
  const ws = await workspace();
  try {
    const call = ['--call', '{"name":"mark_point","arguments":{"x":1,"y":1}}', '--out', join(ws.dir, 'x.png')];
    const noImage = await stderrOf(() => main(['tools', 'apply', '--image', join(ws.dir, 'missing.png'), ...call]));
    assert.equal(noImage.code, 1);
    assert.match(noImage.text, /cannot read image '.*missing\.png'/);
    await writeFile(join(ws.dir, 'bad.json'), '{"columns_bbox": ');
    const badMeta = await stderrOf(() => main(['tools', 'apply', '--image', ws.image, '--meta', join(ws.dir, 'bad.json'), ...call]));
    assert.equal(badMeta.code, 1);
    assert.match(badMeta.text, /cannot read metadata '.*bad\.json'.*It must be a JSON file/);
    await writeFile(join(ws.dir, 'far.json'), JSON.stringify({ columns_bbox: { A: { x1: 900, y1: 0, x2: 950, y2: 10 } } }));
    const farMeta = await stderrOf(() => main(['tools', 'apply', '--image', ws.image, '--meta', join(ws.dir, 'far.json'), ...call]));
    assert.equal(farMeta.code, 1);
    assert.match(farMeta.text, /does not fit the 460×220 image: column 'A' \(columns_bbox\)/);
    const noCall = await stderrOf(() => main(['tools', 'apply', '--image', ws.image, '--out', join(ws.dir, 'x.png')]));
    assert.equal(noCall.code, 2);
    assert.match(noCall.text, /give at least one --call/);
  } finally {
    await ws.cleanup();
  }
});

/** A bundle built before these commands existed would fail for the wrong reason: use it only when fresh. */
function freshBuild(): boolean {
  if (!existsSync('dist/cli.js')) return false;
  const built = statSync('dist/cli.js').mtimeMs;
  return ['env/cli/main.ts', 'env/cli/tools-list.ts', 'env/tools/registry.ts'].every((source) => statSync(source).mtimeMs <= built);
}

test('the built CLI (dist/cli.js), when present and fresh, lists the tools', { skip: !freshBuild() && 'dist/cli.js is missing or older than the sources (npm run build)' }, () => {
  const result = spawnSync(process.execPath, ['bin/vistool.js', 'tools', 'list'], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /^focus_on_columns_with_mask /m);
});

/** Runs `fn` with stderr captured (the CLI's error channel), returning its exit code and text. */
async function stderrOf(fn: () => Promise<number>): Promise<{ code: number; text: string }> {
  const original = process.stderr.write.bind(process.stderr);
  let text = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await fn(), text };
  } finally {
    process.stderr.write = original;
  }
}
