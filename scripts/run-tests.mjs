// Runs every TypeScript test file under test/ with node's built-in runner (TypeScript through tsx).
// Usage: node scripts/run-tests.mjs [substring ...]  — only files whose path contains a substring.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) found.push(...collect(full));
    else if (name.endsWith('.test.ts')) found.push(full);
  }
  return found;
}

const filters = process.argv.slice(2);
const files = collect('test')
  .map((f) => relative('.', f))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error(`no test files matched ${filters.join(', ') || 'test/**/*.test.ts'}`);
  process.exit(1);
}
const reporter = process.env.CI ? 'spec' : (process.stdout.isTTY ? 'spec' : 'spec');
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-reporter=${reporter}`, '--test-concurrency=2', ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
