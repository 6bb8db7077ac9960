import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expandRunDirectories, viewCommand } from '../../env/cli/view.js';
import { UsageError } from '../../env/cli/command.js';
import { writeRunDirectory } from '../runs/run-directory.js';

test('vistool view prints a loopback URL with a token, serves with it, refuses without it, and stops on SIGTERM', async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-view-cli-'));
  const run = await writeRunDirectory(join(root, 'my-run'), { metricRows: 3 });
  const assets = join(root, 'assets');
  await mkdir(assets);
  await writeFile(join(assets, 'dashboard.js'), '/* bundle */');
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', "require('./env/cli/main.ts').main(process.argv.slice(1)).then((c) => { process.exitCode = c; })", 'view', run, '--assets', assets], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve) => lines.once('line', resolve));
  const listening = JSON.parse(first) as { event: string; url: string; dashboard: string };
  assert.equal(listening.event, 'listening');
  assert.match(listening.dashboard, /^http:\/\/127\.0\.0\.1:\d+\/dashboard\?token=[0-9a-f]{48}$/);
  const page = await fetch(listening.dashboard);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /static\/dashboard\.js/);
  const index = await (await fetch(listening.url)).text();
  assert.match(index, /my-run/);
  assert.equal((await fetch(listening.dashboard.replace(/\?token=.*/, ''))).status, 401);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stopped = new Promise<string>((resolve) => lines.once('line', resolve));
  child.kill('SIGTERM');
  assert.deepEqual(JSON.parse(await stopped), { event: 'stopped' });
  assert.equal(await exited, 0);
});

test('vistool view refuses a missing run directory and a non-loopback host as usage errors', async () => {
  await assert.rejects(viewCommand.run(['/no/such/run']), (err: unknown) => err instanceof UsageError && /not a directory/.test(err.message));
  await assert.rejects(viewCommand.run(['--host', '0.0.0.0']), (err: unknown) => err instanceof UsageError && /not a loopback address/.test(err.message));
  await assert.rejects(viewCommand.run(['--port', '99999']), (err: unknown) => err instanceof UsageError && /--port/.test(err.message));
});

test('vistool view --policy is checked before anything starts: an openai: endpoint on this machine unless allowed, its companions only with it', async () => {
  const refused = async (args: string[], pattern: RegExp) =>
    assert.rejects(viewCommand.run(args), (err: unknown) => err instanceof UsageError && pattern.test(err.message), args.join(' '));
  await refused(['--policy', 'openai:http://10.0.0.5:8000/v1#m'], /10\.0\.0\.5 is not this machine/);
  await refused(['--policy', 'checkpoint:runs/a/checkpoints/step-000010'], /serve-policy --checkpoint/);
  await refused(['--policy', 'openai:http://127.0.0.1:8000/v1'], /names no model/);
  await refused(['--policy', 'openai:http://127.0.0.1:8000/v1#m', '--observation-role', 'assistant'], /user or tool/);
  await refused(['--observation-role', 'user'], /goes with --policy/);
  await refused(['--allow-remote-policy'], /goes with --policy/);
  await refused(['--policy', 'openai:http://127.0.0.1:8000/v1#m', '--bundle', '/tmp/x'], /static bundle/);
  // Allowed explicitly, a remote policy passes the check (and the missing run is the next error).
  await refused(['/no/such/run', '--policy', 'openai:https://api.example.com/v1#m', '--allow-remote-policy'], /not a directory/);
});

test('a folder of runs (the demo\'s runs/demo) stands for the runs directly inside it, in name order', async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-view-folder-'));
  const tools = await writeRunDirectory(join(root, 'demo', 'tools'), { metricRows: 2 });
  const text = await writeRunDirectory(join(root, 'demo', 'text'), { metricRows: 2 });
  await mkdir(join(root, 'demo', 'data', 'train'), { recursive: true }); // not a run: skipped
  assert.deepEqual(expandRunDirectories([join(root, 'demo')]), [text, tools]);
  assert.deepEqual(expandRunDirectories([tools]), [tools]);
  assert.throws(() => expandRunDirectories([join(root, 'demo', 'data')]), (err: unknown) => err instanceof UsageError && /neither a run directory/.test(err.message));
});

test('vistool view FOLDER follows a link to a run inside the folder or the current one, not one leading elsewhere', async () => {
  const { symlink } = await import('node:fs/promises');
  const root = await mkdtemp(join(tmpdir(), 'vistool-view-links-'));
  const sweep = join(root, 'sweep');
  const kept = await writeRunDirectory(join(sweep, 'kept', 'seed-1'), { metricRows: 2 });
  await symlink(kept, join(sweep, 'seed-1'));
  const far = await writeRunDirectory(join(root, 'far', 'seed-2'), { metricRows: 2 });
  await symlink(far, join(sweep, 'seed-2'));
  // seed-1 leads inside the folder given; seed-2 leads outside it and outside the current folder.
  assert.deepEqual(expandRunDirectories([sweep]), [join(sweep, 'seed-1')]);
});
