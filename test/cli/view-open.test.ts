import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserCommand } from '../../env/cli/open-browser.js';
import { writeRunDirectory, TABLE_GROUP } from '../runs/run-directory.js';

test('the opener: $BROWSER when set, else the platform’s own', () => {
  const url = 'http://127.0.0.1:1/?token=t';
  assert.deepEqual(browserCommand(url, 'linux', { BROWSER: '/usr/bin/firefox' }), { command: '/usr/bin/firefox', args: [url] });
  assert.deepEqual(browserCommand(url, 'linux', {}), { command: 'xdg-open', args: [url] });
  assert.deepEqual(browserCommand(url, 'darwin', { BROWSER: ' ' }), { command: 'open', args: [url] });
  assert.deepEqual(browserCommand(url, 'win32', {}), { command: 'cmd', args: ['/c', 'start', '""', url] });
});

test('vistool view --open hands the index URL, token included, to the browser, and that page serves', { skip: existsSync('dist/webview/dashboard.js') ? false : 'dist/webview is missing (npm run build): vistool view serves the built bundles' }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-view-open-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const run = await writeRunDirectory(join(dir, 'run'), { rolloutSteps: [1], groups: [TABLE_GROUP], metricRows: 2 });
  const opened = join(dir, 'opened.txt');
  // A stand-in browser: it writes down the URL it was asked to open.
  const browser = join(dir, 'browser.sh');
  await writeFile(browser, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
  await chmod(browser, 0o755);
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', "const m = await import('./env/cli/main.ts'); const main = m.main ?? m.default.main; process.exitCode = await main(JSON.parse(process.env.ARGS));"], {
    env: { ...process.env, BROWSER: browser, ARGS: JSON.stringify(['view', run, '--open']) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGTERM'));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const deadline = Date.now() + 30_000;
  while (!existsSync(opened) || (await readFile(opened, 'utf8')) === '') {
    if (Date.now() > deadline || child.exitCode !== null) assert.fail(`the browser was never opened; stderr: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = await readFile(opened, 'utf8');
  const listening = JSON.parse(stdout.split('\n')[0]!) as { url: string };
  assert.equal(url, listening.url, 'the index page, as printed');
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{48}$/);
  const page = await fetch(url);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /run/);
});
