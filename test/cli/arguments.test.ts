/**
 * Every command reads its flags through one helper (env/cli/command.ts parseCommandArgs), so every
 * command answers a flag it does not know the same way: exit 2, the flag named, then its usage.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
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
