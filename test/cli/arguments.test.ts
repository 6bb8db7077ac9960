/**
 * Every command reads its flags through one helper (env/cli/command.ts parseCommandArgs), so every
 * command answers a flag it does not know the same way: exit 2, the flag named, then its usage.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandArgs, UsageError } from '../../env/cli/command.js';
import { COMMANDS, main } from '../../env/cli/main.js';

async function run(argv: string[]): Promise<{ code: number; stderr: string }> {
  const chunks: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await main(argv), stderr: chunks.join('') };
  } finally {
    process.stderr.write = write;
  }
}

test('every command answers an unknown flag with exit 2, the flag named and its usage', async () => {
  assert.ok(COMMANDS.length >= 15, 'the list is the whole CLI');
  for (const command of COMMANDS) {
    const { code, stderr } = await run([...command.path, '--no-such-flag']);
    const name = `vistool ${command.path.join(' ')}`;
    assert.equal(code, 2, `${name}: ${stderr}`);
    assert.match(stderr, /--no-such-flag/, name);
    assert.ok(stderr.includes(command.usage), `${name} prints its usage`);
  }
});

async function runOut(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    const { code, stderr } = await run(argv);
    return { code, stdout: out.join(''), stderr };
  } finally {
    process.stdout.write = write;
  }
}

test('a command group alone lists its commands (exit 0), and an unknown one in it is still refused', async () => {
  const { code, stdout } = await runOut(['data']);
  assert.equal(code, 0);
  for (const word of ['check', 'convert', 'gen', 'show']) assert.match(stdout, new RegExp(`vistool data ${word} `), word);
  const wrong = await runOut(['data', 'nonsense']);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /unknown command 'data nonsense'/);
});

test('a negative number after a value-taking flag is its value, not an ambiguous flag', () => {
  const options = { offset: { type: 'string' as const }, scale: { type: 'string' as const, short: 's' }, json: { type: 'boolean' as const } };
  const parsed = parseCommandArgs({ args: ['--offset', '-3', '-s', '-0.5', '--json', 'file'], options, allowPositionals: true });
  assert.equal(parsed.values.offset, '-3');
  assert.equal(parsed.values.scale, '-0.5');
  assert.equal(parsed.values.json, true);
  assert.deepEqual(parsed.positionals, ['file']);
  // A flag-like word after a value-taking flag is still refused, naming the flag.
  assert.throws(() => parseCommandArgs({ args: ['--offset', '--json'], options }), (err: Error) => err instanceof UsageError && /--offset/.test(err.message));
  // After `--`, nothing is rewritten.
  assert.deepEqual(parseCommandArgs({ args: ['--', '--offset', '-3'], options, allowPositionals: true }).positionals, ['--offset', '-3']);
});

test('commands that read tasks take the folder `data gen --out` wrote, and name a folder without one', async () => {
  const { mkdtemp, mkdir, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = await mkdtemp(join(tmpdir(), 'vistool-taskdir-'));
  try {
    const made = await runOut(['data', 'gen', '--kind', 'table', '--n', '2', '--seed', '3', '--out', join(dir, 'tasks')]);
    assert.equal(made.code, 0, made.stderr);
    const checked = await runOut(['data', 'check', join(dir, 'tasks'), '--json']);
    assert.equal(checked.code, 0, checked.stderr);
    const report = JSON.parse(checked.stdout) as { tasks?: number; ok?: boolean };
    assert.equal(JSON.stringify(report).includes('EISDIR'), false);
    await mkdir(join(dir, 'empty'));
    const empty = await runOut(['data', 'check', join(dir, 'empty')]);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /is a folder without a tasks\.jsonl/);
    const missing = await runOut(['data', 'show', join(dir, 'nowhere'), '--id', 'x', '--out', join(dir, 'x.png')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /does not exist/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
