import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseCheckEnvOutput, reportLines, reportSummary, cudaFactsOf } from '../../extension/python/check-env-report.js';
import { activationVariables, firstUsable, venvPython } from '../../extension/python/python-environment.js';
import { CPU_TORCH_INDEX, CUDA_TORCH_INDEX, planTrainerSetup, pyprojectDependencies, stepCommandLine, torchIndexFor } from '../../extension/python/trainer-setup-plan.js';
import { runCommand } from '../../extension/processes/command-runner.js';
import { resolveNode } from '../../extension/processes/node-executable.js';
import { describeTrainerEvent, parseTrainerEvent } from '../../extension/processes/trainer-events.js';
import { tempDir } from './run-dirs.js';

const root = join(__dirname, '..', '..');
const repoPython = join(root, '.venv', 'bin', 'python');

test("the trainer's real check-env report is read, summarised and turned into CUDA facts", { skip: !existsSync(repoPython) && 'no .venv (make venv)' }, async () => {
  const result = await runCommand({ command: repoPython, args: ['-m', 'vistool_trainer', 'check-env', '--json'], env: { ...process.env, PYTHONPATH: join(root, 'trainer') } });
  const report = parseCheckEnvOutput(result.stdout);
  assert.ok(report, `no report in: ${result.stdout.slice(0, 200)} ${result.stderr.slice(-300)}`);
  assert.equal(report.packages.find((p) => p.name === 'torch')?.installed?.startsWith('2.'), true);
  assert.match(reportSummary(report), /^torch 2\.\S+ · transformers \S+ · peft \S+ · (CPU only|\d+ CUDA devices?)$/);
  const lines = reportLines(report, repoPython);
  assert.equal(lines[0]?.startsWith(`Trainer environment: ${repoPython} (Python 3.`), true);
  assert.equal(lines.at(-1), report.ok ? 'ready' : 'not ready: fix the problems above (or run "vistool: Set Up Trainer Environment")');
  assert.deepEqual(cudaFactsOf(report), { cudaDevices: report.cuda_available ? report.cuda_devices.length : 0, bf16: report.cuda_devices.length ? report.cuda_devices.every((d) => d.bf16) : null });
});

test('a missing package is reported with the command that installs it', () => {
  const report = parseCheckEnvOutput(
    'noise\n' + JSON.stringify({ ok: false, python: '3.11.2', platform: 'Linux x86_64, 2 CPUs', packages: [{ name: 'torch', installed: null, pinned: '2.13.0', ok: false, note: 'missing: pip install torch==2.13.0' }], optional: [], cuda_available: true, cuda_devices: [{ index: 0, name: 'H100', memory_gib: 80, bf16: true }], node: null, env_server_bundle: null, problems: ['package torch is not installed; fix: pip install torch==2.13.0'] }),
  );
  assert.ok(report);
  const lines = reportLines(report, '/venv/bin/python');
  assert.ok(lines.includes('  torch         MISSING — missing: pip install torch==2.13.0'));
  assert.ok(lines.includes('  cuda:0 H100, 80 GiB, bf16 yes'));
  assert.ok(lines.includes('  problem: package torch is not installed; fix: pip install torch==2.13.0'));
  assert.deepEqual(cudaFactsOf(report), { cudaDevices: 1, bf16: true });
  assert.equal(parseCheckEnvOutput('Traceback ...\nModuleNotFoundError: No module named vistool_trainer'), null);
});

test('the first existing interpreter wins, and a venv or conda interpreter runs with its environment activated', async () => {
  const dir = await tempDir('python');
  const venv = join(dir, 'venv');
  await mkdir(join(venv, 'bin'), { recursive: true });
  await writeFile(join(venv, 'pyvenv.cfg'), 'home = /usr/bin\n');
  await writeFile(venvPython(venv), '#!/bin/sh\n');
  await chmod(venvPython(venv), 0o755);
  const conda = join(dir, 'conda');
  await mkdir(join(conda, 'bin'), { recursive: true });
  await mkdir(join(conda, 'conda-meta'));
  const chosen = firstUsable([
    { path: join(dir, 'missing', 'bin', 'python'), source: 'setting' },
    { path: venvPython(venv), source: 'workspace-venv' },
    { path: '/usr/bin/env', source: 'managed-venv' },
  ]);
  assert.deepEqual(chosen, { path: venvPython(venv), source: 'workspace-venv' });
  assert.deepEqual(activationVariables(venvPython(venv), { PATH: '/usr/bin' }), { VIRTUAL_ENV: venv, PATH: `${join(venv, 'bin')}:/usr/bin` });
  assert.deepEqual(activationVariables(join(conda, 'bin', 'python'), { PATH: '/usr/bin' }), { CONDA_PREFIX: conda, PATH: `${join(conda, 'bin')}:/usr/bin` });
  assert.deepEqual(activationVariables('/usr/bin/python3', { PATH: '/usr/bin' }), {});
});

test("set-up installs torch from the CUDA or CPU index first, then the trainer's other pinned dependencies", async () => {
  const dependencies = pyprojectDependencies(await readFile(join(root, 'trainer', 'pyproject.toml'), 'utf8'));
  assert.ok(dependencies.some((d) => /^torch==/.test(d)), 'the real pyproject pins torch');
  assert.ok(dependencies.some((d) => /^transformers==/.test(d)));
  assert.equal(torchIndexFor(true, ''), CUDA_TORCH_INDEX);
  assert.equal(torchIndexFor(false, ''), CPU_TORCH_INDEX);
  assert.equal(torchIndexFor(true, 'https://mirror/whl'), 'https://mirror/whl');
  const steps = planTrainerSetup({ basePython: '/usr/bin/python3.11', venvDir: '/data/venv', dependencies, torchVersion: '2.13.0', torchIndex: CPU_TORCH_INDEX });
  assert.deepEqual(steps.map(stepCommandLine).slice(0, 2), ['/usr/bin/python3.11 -m venv /data/venv', `/data/venv/bin/python -m pip install --disable-pip-version-check torch==2.13.0 --index-url ${CPU_TORCH_INDEX}`]);
  const last = steps[2];
  assert.ok(last && !last.args.some((a) => a.startsWith('torch')), 'torch is not installed twice');
  assert.ok(last.args.includes(dependencies.find((d) => d.startsWith('transformers'))!));
  assert.match(stepCommandLine(last), /'tokenizers>=0\.23\.1,<0\.24'/, 'shell-quoted where needed');
  assert.throws(() => pyprojectDependencies('[project]\nname = "x"\n'), /no \[project\] dependencies/);
});

test('node is the setting, else node on PATH, else the host executable run as node', () => {
  assert.deepEqual(resolveNode('/opt/node/bin/node', { PATH: '' }), { command: '/opt/node/bin/node', env: {}, onPath: true });
  assert.equal(resolveNode('', { PATH: '/usr/bin:/bin' }).command.endsWith('/node'), true);
  assert.deepEqual(resolveNode('', { PATH: '/nonexistent' }, '/opt/code/code', false), { command: '/opt/code/code', env: { ELECTRON_RUN_AS_NODE: '1' }, onPath: false });
});

test('a command streams its lines and a cancel stops it', async () => {
  const lines: string[] = [];
  const done = await runCommand({ command: process.execPath, args: ['-e', 'console.log("a"); console.error("b"); process.stdout.write("c")'] }, { onStdoutLine: (l) => lines.push(`out:${l}`), onStderrLine: (l) => lines.push(`err:${l}`) });
  assert.equal(done.code, 0);
  assert.deepEqual(lines.sort(), ['err:b', 'out:a', 'out:c']);
  const abort = new AbortController();
  const pending = runCommand({ command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] }, { signal: abort.signal });
  setTimeout(() => abort.abort(), 100);
  const cancelled = await pending;
  assert.equal(cancelled.cancelled, true);
  assert.equal(cancelled.signal, 'SIGTERM');
  await assert.rejects(runCommand({ command: '/nonexistent/tool', args: [] }), /could not run \/nonexistent\/tool/);
});

test("trainer events are read from their JSON lines and said in one line for the run's log", () => {
  assert.equal(parseTrainerEvent('not json'), null);
  assert.equal(parseTrainerEvent('{"no": "event"}'), null);
  const step = parseTrainerEvent('{"event": "step", "step": 7, "stage": "rl", "reward/mean": 0.61234, "tool/call_rate": 0.5, "timing/step_s": 0.25}');
  assert.ok(step);
  assert.equal(describeTrainerEvent(step), 'step 7 (rl): reward/mean 0.612, tool/call_rate 0.500, timing/step_s 0.250');
  assert.equal(describeTrainerEvent({ event: 'failed', error: 'RuntimeError: boom' }), 'failed: RuntimeError: boom');
  assert.equal(describeTrainerEvent({ event: 'progress', stage: 'sft', what: 'gold conversations', done: 640, total: 4000 }), 'sft: gold conversations 640/4000');
  assert.equal(describeTrainerEvent({ event: 'eval', label: 'after_rl', 'eval/acc_tools': 0.5, step: 3 }), 'eval after_rl: acc_tools 0.500');
  assert.equal(describeTrainerEvent({ event: 'started', name: 'micro', pid: 12, run_dir: '/r', resume: true }), 'started micro (pid 12), resuming in /r');
  assert.equal(describeTrainerEvent({ event: 'env', url: 'http://127.0.0.1:4100', pid: 13, log: '/r/logs/env-server.log' }), 'env server http://127.0.0.1:4100 (pid 13, log /r/logs/env-server.log)');
});
