/**
 * The veRL environment the extension sets up and checks, and how a recipe runs the bridge the
 * .vsix ships: the install plan (CPU and GPU), the check script's report run by a real Python, the
 * export's run.sh putting the bridge and trainer on PYTHONPATH from its own folder, and the data
 * commands run with the veRL interpreter.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { prepareVerlExport, writeVerlFiles } from '../../env/cli/config-export.js';
import { pyprojectDependencies } from '../../extension/python/trainer-setup-plan.js';
import { recipeDataCommand } from '../../extension/python/verl-recipe-data.js';
import { parseVerlCheck, planVerlSetup, VERL_CHECK_SCRIPT, VERL_VERSION } from '../../extension/python/verl-setup-plan.js';
import { tempDir } from './run-dirs.js';

const root = join(__dirname, '..', '..');
const VERL_PYTHON = join(root, '.venv-verl', 'bin', 'python');

async function bridgeDependencies(): Promise<string[]> {
  return pyprojectDependencies(await readFile(join(root, 'verl_bridge', 'pyproject.toml'), 'utf8'));
}

test('without a GPU the veRL venv gets the CPU torch the bridge pins, then every other pinned dependency of the bridge', async () => {
  const dependencies = await bridgeDependencies();
  const steps = planVerlSetup({ basePython: '/usr/bin/python3.11', venvDir: '/g/verl-venv', dependencies, hasNvidiaGpu: false, cpuTorchIndex: 'https://download.pytorch.org/whl/cpu' });
  assert.deepEqual(steps[0], { title: 'Creating the venv /g/verl-venv', command: '/usr/bin/python3.11', args: ['-m', 'venv', '/g/verl-venv'] });
  assert.deepEqual(steps[1]?.args.slice(-3), ['torch==2.13.0', '--index-url', 'https://download.pytorch.org/whl/cpu']);
  const installed = steps[2]?.args.slice(4) ?? [];
  assert.ok(installed.includes(`verl==${VERL_VERSION}`) && installed.includes('TransferQueue==0.1.11'), installed.join(' '));
  assert.deepEqual(installed, dependencies.filter((d) => !d.startsWith('torch')));
  assert.ok(steps.every((s) => s.command === '/usr/bin/python3.11' || s.command === '/g/verl-venv/bin/python'));
});

test('with a GPU it installs veRL with its vLLM extra (its own torch, transformers and torchvision) and the bridge\'s other dependencies', async () => {
  const dependencies = await bridgeDependencies();
  const steps = planVerlSetup({ basePython: 'python3', venvDir: '/g/v', dependencies, hasNvidiaGpu: true, cpuTorchIndex: 'unused' });
  assert.equal(steps.length, 2);
  const installed = steps[1]?.args.slice(4) ?? [];
  assert.equal(installed[0], `verl[vllm]==${VERL_VERSION}`);
  assert.ok(!installed.some((d) => /^(torch|transformers|verl)[=<>]/.test(d)), installed.join(' '));
  assert.ok(installed.includes('TransferQueue==0.1.11'));
});

test('the check report is one JSON line among whatever else the interpreter prints', () => {
  assert.equal(parseVerlCheck('warning: x\nnot json {\n'), null);
  const report = parseVerlCheck('noise\n{"python": "/p", "verl": "0.9.1", "problems": []}\n');
  assert.deepEqual(report, { python: '/p', verl: '0.9.1', problems: [] });
});

test('the check script, run by a Python without veRL, reports the import problem instead of failing', () => {
  const result = spawnSync('python3', ['-c', VERL_CHECK_SCRIPT], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', PYTHONPATH: '' } });
  const report = parseVerlCheck(result.stdout);
  assert.ok(report, result.stderr);
  assert.match(report.problems[0] ?? '', /ModuleNotFoundError: No module named '(verl|transfer_queue|ray)'/);
});

test('with veRL installed the check imports veRL and the bridge from the folder on PYTHONPATH, and finds the vistool_agent loop', { skip: !existsSync(VERL_PYTHON) && 'needs .venv-verl (make verl-env); `make test-verl` runs it', timeout: 120_000 }, () => {
  const result = spawnSync(VERL_PYTHON, ['-c', VERL_CHECK_SCRIPT], { encoding: 'utf8', cwd: root, env: { PATH: process.env.PATH ?? '', PYTHONPATH: `${join(root, 'verl_bridge')}:${join(root, 'trainer')}` } });
  const report = parseVerlCheck(result.stdout);
  assert.ok(report, result.stderr.slice(-2000));
  assert.deepEqual(report.problems, []);
  assert.equal(report.verl, VERL_VERSION);
  assert.equal(report.bridge, join(root, 'verl_bridge', 'vistool_verl', '__init__.py'));
  assert.equal(report.agent_loop, true);
});

test('the exported run.sh puts the bridge and the trainer of its own vistool folder on PYTHONPATH before veRL starts', async () => {
  const dir = await tempDir('verl-pythonpath');
  const config = join(dir, 'micro.vistool.json');
  await writeFile(config, JSON.stringify({ device: 'cpu', engine: 'verl', data: { train: null, eval: null }, rl: { prompts_per_step: 2, group_size: 2 } }));
  const prepared = await prepareVerlExport({ file: config, out: join(dir, 'recipe'), nGpusPerNode: null, nnodes: 1 });
  await writeVerlFiles(join(dir, 'recipe'), prepared.files);
  const runSh = prepared.files['run.sh'];
  const exportLine = runSh.split('\n').findIndex((l) => l.startsWith('export PYTHONPATH='));
  const verlLine = runSh.split('\n').findIndex((l) => l.includes('-m verl.trainer.main_ppo'));
  assert.ok(exportLine > 0 && exportLine < verlLine, 'PYTHONPATH is set before veRL starts');
  // What bash makes of the line, with REPO as run.sh computes it and a PYTHONPATH already set.
  const line = runSh.split('\n')[exportLine] ?? '';
  const shown = spawnSync('bash', ['-c', `REPO=/opt/ext; PYTHONPATH=/mine; ${line}; echo "$PYTHONPATH"`], { encoding: 'utf8' });
  assert.equal(shown.stdout.trim(), '/opt/ext/verl_bridge:/opt/ext/trainer:/mine');
});

test('a recipe\'s data commands run with the veRL interpreter in place of python3; the bundled CLI\'s stay as they are', () => {
  assert.equal(recipeDataCommand('python3 -m vistool_verl data convert --to verl data/t/tasks.jsonl --out r/train.parquet', '/h/My venv/bin/python'),
    "'/h/My venv/bin/python' -m vistool_verl data convert --to verl data/t/tasks.jsonl --out r/train.parquet");
  assert.equal(recipeDataCommand('node bin/vistool.js data gen --kind vbar --out x', '/p'), 'node bin/vistool.js data gen --kind vbar --out x');
});
