import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunSource } from '../../env/runs/run-source.js';

test('a run whose process was killed with SIGKILL reads as stopped, with the reason, though run.json still says running', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-liveness-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // A real process stands in for the trainer: alive first, then killed the way `kill -9` kills.
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  await writeFile(join(dir, 'run.json'), JSON.stringify({ status: 'running', pid: child.pid, name: 'killed' }));
  const source = new RunSource('r1', dir);
  await source.refresh();
  assert.equal(source.summary().status, 'running');
  assert.deepEqual(source.summary().problems, []);

  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  assert.equal(await source.refresh(), true, 'the death is a change even though no file changed');
  const summary = source.summary();
  assert.equal(summary.status, 'stopped');
  assert.match(summary.problems.join('\n'), new RegExp(`pid ${String(child.pid)}\\) is gone without writing a final status.*--resume`));
  assert.equal(await source.refresh(), false, 'and only once');

  // A finished run keeps its status, whatever became of its pid.
  await writeFile(join(dir, 'run.json'), JSON.stringify({ status: 'finished', pid: child.pid }));
  await source.refresh();
  assert.equal(source.summary().status, 'finished');
  assert.deepEqual(source.summary().problems, []);
});
