/**
 * Start Run for a config that asks for veRL (`"engine": "verl"`): the command line the extension
 * shows and runs, and the run.sh it runs managed like the trainer (output, Stop, run.json).
 *
 * veRL's trainer needs a GPU (vLLM), so in the managed-process tests a small Node script stands in
 * for the veRL python that run.sh starts; run.sh itself, the env server it starts and the recipe
 * are the real ones (`vistool config export --to verl`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { prepareVerlExport, writeVerlFiles } from '../../env/cli/config-export.js';
import { isProcessAlive } from '../../env/core/process-liveness.js';
import { TrainerProcess } from '../../extension/processes/trainer-process.js';
import { missingParquet, planVerlLaunch, VERL_COMMAND_MARK, verlPython, verlRecipeDirOf } from '../../extension/processes/verl-launch.js';
import { tempDir } from './run-dirs.js';
import { runJson, until } from './process-waits.js';

const root = join(__dirname, '..', '..');
const BUNDLE = join(root, 'dist', 'cli.js');

test('the veRL launch is bash RUN_DIR/verl-recipe/run.sh from the checkout, with RUN_DIR, PYTHON and NODE set, shown as that exact line', () => {
  const plan = planVerlLaunch({
    runDir: '/ws/runs/dapo 3b', repoRoot: '/src/vistool', python: '/src/vistool/.venv-verl/bin/python', node: '/opt/node/bin/node',
    overrides: ['trainer.n_gpus_per_node=8'], baseEnv: { PATH: '/usr/bin', ELECTRON_RUN_AS_NODE: '1' },
  });
  assert.equal(plan.kind, 'verl');
  assert.equal(plan.command, 'bash');
  assert.deepEqual(plan.args, ['/ws/runs/dapo 3b/verl-recipe/run.sh', 'trainer.n_gpus_per_node=8']);
  assert.equal(plan.cwd, '/src/vistool');
  assert.equal(plan.recipeDir, '/ws/runs/dapo 3b/verl-recipe');
  assert.equal(plan.env.RUN_DIR, '/ws/runs/dapo 3b');
  assert.equal(plan.env.PYTHON, '/src/vistool/.venv-verl/bin/python');
  assert.equal(plan.env.NODE, '/opt/node/bin/node');
  assert.equal(plan.env.PATH, '/usr/bin');
  assert.equal(plan.env.ELECTRON_RUN_AS_NODE, undefined);
  assert.equal(plan.eventsFile, '/ws/runs/dapo 3b/logs/verl-stdout.log');
  assert.equal(plan.stderrFile, '/ws/runs/dapo 3b/logs/verl-stderr.log');
  assert.equal(plan.commandLine, "RUN_DIR='/ws/runs/dapo 3b' PYTHON=/src/vistool/.venv-verl/bin/python NODE=/opt/node/bin/node bash '/ws/runs/dapo 3b/verl-recipe/run.sh' trainer.n_gpus_per_node=8");
  assert.ok(plan.commandLine.includes(VERL_COMMAND_MARK) && plan.args[0]?.endsWith(VERL_COMMAND_MARK), 'the liveness mark is in the command line');
  // Without a Node of our own, run.sh keeps the run config's env.node.
  const plain = planVerlLaunch({ runDir: '/r', repoRoot: '/src', python: 'python3', node: null, baseEnv: {} });
  assert.equal(plain.env.NODE, undefined);
  assert.equal(plain.commandLine, 'RUN_DIR=/r PYTHON=python3 bash /r/verl-recipe/run.sh');
});

test("the veRL python is the first folder's .venv-verl, else python3", async () => {
  const without = await tempDir('verl-python-none');
  const withVenv = await tempDir('verl-python');
  await mkdir(join(withVenv, '.venv-verl', 'bin'), { recursive: true });
  await writeFile(join(withVenv, '.venv-verl', 'bin', 'python'), '');
  assert.equal(verlPython([without, withVenv]), join(withVenv, '.venv-verl', 'bin', 'python'));
  assert.equal(verlPython([without]), 'python3');
});

/** A run config asking for veRL, its tasks, and the recipe written where Start Run writes it (parquet files stood in by empty files). */
async function exportedRun(stub: string): Promise<{ runDir: string; plan: ReturnType<typeof planVerlLaunch> }> {
  const work = await tempDir('verl-launch');
  for (const split of ['train', 'test']) {
    const made = spawnSync(process.execPath, [join(root, 'bin', 'vistool.js'), 'data', 'gen', '--kind', 'vbar', '--n', '2', '--seed', '1', '--split', split, '--image-size', '112x112', '--out', join(work, 'data', split)], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
  }
  const config = join(work, 'run.vistool.json');
  await writeFile(config, JSON.stringify({ name: 'verl-x', engine: 'verl', output_dir: 'runs/verl-x', device: 'cuda', data: { train: 'data/train/tasks.jsonl', eval: 'data/test/tasks.jsonl' }, policy: { model: 'Qwen/Qwen2.5-VL-3B-Instruct' }, sft: { enabled: false }, rl: { prompts_per_step: 4, group_size: 2 } }));
  const runDir = join(work, 'runs', 'verl-x');
  const recipeDir = verlRecipeDirOf(runDir);
  const prepared = await prepareVerlExport({ file: config, out: recipeDir, baseDir: work, nGpusPerNode: null, nnodes: 1 });
  await writeVerlFiles(recipeDir, prepared.files);
  assert.deepEqual(missingParquet(recipeDir), ['train.parquet', 'val.parquet']);
  for (const name of ['train.parquet', 'val.parquet']) await writeFile(join(recipeDir, name), '');
  assert.deepEqual(missingParquet(recipeDir), []);
  return { runDir, plan: planVerlLaunch({ runDir, repoRoot: root, python: stub, node: process.execPath, baseEnv: process.env }) };
}

/** Stands in for veRL's python: prints a log line per tick to stdout; SIGINT ends it (as KeyboardInterrupt ends main_ppo), STUB_TICKS ticks end it with 0. */
async function writeStub(dir: string): Promise<string> {
  const stub = join(dir, 'fake-verl-python');
  await writeFile(stub, `#!${process.execPath}
let n = 0;
const limit = Number(process.env.STUB_TICKS ?? 1e9);
process.on('SIGINT', () => { console.log('KeyboardInterrupt'); process.exit(130); });
const timer = setInterval(() => { n += 1; console.log('step:' + n + ' - critic/score/mean:0.5'); if (n >= limit) { clearInterval(timer); process.exit(0); } }, 20);
`, { mode: 0o755 });
  return stub;
}


test("a started veRL run is marked running, its log reaches the channel, and Stop (SIGINT to run.sh's group) ends it stopped with its env server", { skip: !existsSync(BUNDLE) && 'dist/cli.js is missing (npm run build)', timeout: 60_000 }, async () => {
  const stub = await writeStub(await tempDir('verl-stub'));
  const { runDir, plan } = await exportedRun(stub);
  const stdout: string[] = [];
  const run = await TrainerProcess.start(plan, { onStdout: (lines) => stdout.push(...lines) }, 'verl-x');
  assert.ok(isProcessAlive(run.pid, VERL_COMMAND_MARK));
  const marked = await runJson(runDir);
  assert.equal(marked.status, 'running');
  assert.equal(marked.engine, 'verl');
  assert.deepEqual(marked.command, ['bash', join(runDir, 'verl-recipe', 'run.sh')]);
  await until(() => stdout.filter((line) => line.startsWith('step:')).length >= 3, "three of veRL's log lines");
  // run.sh started the real env server before veRL's python.
  const listening = JSON.parse((await readFile(join(runDir, 'logs', 'env-server.out'), 'utf8')).split('\n')[0] ?? '') as { pid: number };
  assert.ok(isProcessAlive(listening.pid));
  const exit = await run.stop(10_000);
  assert.equal(exit.stopOutcome, 'interrupted', 'SIGINT was enough: it reached veRL\'s python, not only bash');
  assert.equal(exit.status, 'stopped');
  assert.equal((await runJson(runDir)).status, 'stopped');
  assert.ok(stdout.includes('KeyboardInterrupt'));
  await until(() => !isProcessAlive(listening.pid), "the env server's exit");
});

test('a veRL run.sh that exits 0 leaves the run finished', { skip: !existsSync(BUNDLE) && 'dist/cli.js is missing (npm run build)', timeout: 60_000 }, async () => {
  const stub = await writeStub(await tempDir('verl-stub'));
  const { runDir, plan } = await exportedRun(stub);
  const run = await TrainerProcess.start({ ...plan, env: { ...plan.env, STUB_TICKS: '2' } }, {}, 'verl-x');
  const exit = await run.whenExited();
  assert.equal(exit.code, 0);
  assert.equal(exit.status, 'finished');
  assert.equal((await runJson(runDir)).status, 'finished');
});
