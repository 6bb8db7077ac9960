import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../env/cli/main.js';

test('vistool lists eval and eval compare, and `eval compare` is dispatched before `eval`', async () => {
  const writes: string[] = [];
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => (writes.push(String(chunk)), true)) as typeof process.stdout.write;
  try {
    assert.equal(await main(['--help']), 0);
    assert.equal(await main(['eval', 'compare', '--help']), 0);
  } finally {
    process.stdout.write = original;
  }
  assert.match(writes[0] ?? '', /vistool eval\s+Evaluate a policy/u);
  assert.match(writes[0] ?? '', /vistool eval compare\s+Line up eval results/u);
  assert.match(writes[1] ?? '', /vistool eval compare DIR \[DIR \.\.\.\]/u);
});
