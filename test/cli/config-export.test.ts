import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { createConfigExportCommand, prepareVerlExport } from '../../env/cli/config-export.js';
import { UsageError } from '../../env/cli/command.js';
import { main } from '../../env/cli/main.js';
import { resolvedNode, runConfigSchema, schemaAt, type SchemaNode } from '../../env/config/run-config-schema.js';

const root = join(__dirname, '..', '..');
const DAPO = join(root, 'examples', 'dapo-qwen2.5-vl-3b-4gpu.vistool.json');
const MICRO = join(root, 'examples', 'micro-cpu.vistool.json');
const EXAMPLE_OUT = join(root, 'examples', 'verl', 'dapo-qwen2.5-vl-3b-4gpu');
const VERL_PYTHON = join(root, '.venv-verl', 'bin', 'python');
const BUNDLE = join(root, 'dist', 'cli.js');

// js-yaml is in node_modules (a dependency of the lint tools), without type declarations.
const jsYaml = createRequire(__filename)('js-yaml') as { load(text: string): unknown };

type Tree = Record<string, unknown>;

function capture() {
  const chunks: string[] = [];
  return { write: (text: string) => chunks.push(text), text: () => chunks.join('') };
}

/** The value at a dotted path of a parsed YAML or JSON tree. */
function at(tree: unknown, path: string): unknown {
  let node = tree;
  for (const part of path.split('.')) {
    assert.ok(typeof node === 'object' && node !== null && part in node, `${path}: no '${part}'`);
    node = (node as Tree)[part];
  }
  return node;
}

async function exportTo(config: string, extra: string[] = []) {
  const out = await mkdtemp(join(tmpdir(), 'vistool-export-'));
  const stdout = capture();
  const stderr = capture();
  const code = await createConfigExportCommand({ stdout, stderr }).run(['--to', 'verl', config, '--out', out, ...extra]);
  assert.equal(code, 0, stderr.text());
  const read = (name: string) => readFile(join(out, name), 'utf8');
  return { out, stdout: stdout.text(), stderr: stderr.text(), verlYaml: await read('verl.yaml'), agentLoop: await read('agent_loop.yaml'), runSh: await read('run.sh') };
}

test('exporting the DAPO example gives a verl.yaml whose values are the run config\'s', async () => {
  const source = JSON.parse(await readFile(DAPO, 'utf8')) as Tree;
  const { verlYaml, stdout } = await exportTo(DAPO);
  const body = verlYaml.split('\n').filter((line) => !line.startsWith('#'));
  assert.deepEqual(body.slice(0, 6), ['hydra:', '  searchpath:', '    - pkg://verl/trainer/config', 'defaults:', '  - ppo_trainer', '  - _self_']);
  const yaml = jsYaml.load(verlYaml) as Tree;
  const rl = source.rl as Tree;
  const env = source.env as Tree;
  const expected: Record<string, unknown> = {
    'data.train_batch_size': rl.prompts_per_step,
    'data.image_key': 'images',
    'data.return_raw_chat': true,
    'data.val_max_samples': 500,
    'actor_rollout_ref.model.path': 'Qwen/Qwen2.5-VL-3B-Instruct',
    'actor_rollout_ref.actor.strategy': 'fsdp2',
    'actor_rollout_ref.ref.strategy': 'fsdp2',
    'actor_rollout_ref.actor.optim.lr': rl.lr,
    'actor_rollout_ref.actor.optim.clip_grad': rl.max_grad_norm,
    // The example sets no rl.betas: the schema's default, PyTorch's and veRL's (0.9, 0.999).
    'actor_rollout_ref.actor.optim.betas': [0.9, 0.999],
    'actor_rollout_ref.actor.ppo_mini_batch_size': rl.ppo_mini_batch_size,
    'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': rl.micro_batch_size,
    'actor_rollout_ref.actor.clip_ratio_low': rl.clip_ratio_low,
    'actor_rollout_ref.actor.clip_ratio_high': 0.28,
    'actor_rollout_ref.actor.clip_ratio_c': rl.clip_ratio_c,
    'actor_rollout_ref.actor.loss_agg_mode': rl.loss_agg_mode,
    'actor_rollout_ref.actor.use_kl_loss': false,
    'actor_rollout_ref.actor.kl_loss_coef': rl.kl_coef,
    'actor_rollout_ref.actor.fsdp_config.offload_policy': true,
    'actor_rollout_ref.rollout.name': 'vllm',
    'actor_rollout_ref.rollout.mode': 'async',
    'actor_rollout_ref.rollout.n': rl.group_size,
    'actor_rollout_ref.rollout.temperature': rl.temperature,
    'actor_rollout_ref.rollout.multi_turn.enable': true,
    'actor_rollout_ref.rollout.multi_turn.max_assistant_turns': env.max_turns,
    'actor_rollout_ref.rollout.agent.default_agent_loop': 'vistool_agent',
    'actor_rollout_ref.rollout.agent.agent_loop_config_path': '${oc.env:VISTOOL_VERL_DIR}/agent_loop.yaml',
    'algorithm.adv_estimator': 'grpo',
    'algorithm.use_kl_in_reward': false,
    'algorithm.filter_groups.enable': rl.dynamic_sampling,
    'algorithm.filter_groups.metric': 'acc',
    'actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype': 'bfloat16',
    'actor_rollout_ref.ref.fsdp_config.mixed_precision.param_dtype': 'bfloat16',
    'reward.custom_reward_function.path': '${oc.env:VISTOOL_REPO}/verl_bridge/vistool_verl/reward.py',
    'reward.custom_reward_function.name': 'compute_score',
    'trainer.n_gpus_per_node': 4,
    'trainer.nnodes': 1,
    'trainer.total_training_steps': rl.steps,
    'trainer.project_name': 'vistool',
    'trainer.experiment_name': source.name,
    'trainer.logger': ['console', 'file'],
    'trainer.save_freq': 10,
    'trainer.max_actor_ckpt_to_keep': 3,
  };
  for (const [path, value] of Object.entries(expected)) assert.deepEqual(at(yaml, path), value, path);
  assert.equal(rl.clip_ratio_high, 0.28);
  // veRL 0.9.1's trainer ignores max_num_gen_batches (it warns and generates without a cap): the export leaves it out.
  assert.equal((at(yaml, 'algorithm.filter_groups') as Tree).max_num_gen_batches, undefined);
  assert.match(String(at(yaml, 'data.train_files')), /\/train\.parquet$/);
  assert.match(String(at(yaml, 'data.val_files')), /\/val\.parquet$/);
  // The response budget holds every turn of an episode.
  assert.ok((at(yaml, 'data.max_response_length') as number) >= (env.max_turns as number) * (rl.max_new_tokens as number));
  // A comment names the run-config key of every value that comes from it, and each named key is real.
  const named = [...verlYaml.matchAll(/# vistool: ([\w.$]+)/g)].map((m) => m[1] as string);
  assert.ok(named.length > 40, `only ${named.length} keys are commented`);
  for (const key of named) assert.ok(schemaAt('/' + key.split('.').join('/')), `the comment names ${key}, which is not a run-config key`);
  for (const line of verlYaml.split('\n')) {
    if (/clip_ratio_high|max_assistant_turns|total_training_steps|train_batch_size|"n":/.test(line)) assert.match(line, /# vistool: /, line);
  }
  assert.deepEqual(Object.keys(JSON.parse(stdout) as Tree), ['out', 'files', 'next']);
});

test('agent_loop.yaml is one vistool_agent entry with the episode limits', async () => {
  const { agentLoop } = await exportTo(DAPO);
  assert.deepEqual(jsYaml.load(agentLoop), [
    {
      name: 'vistool_agent',
      _target_: 'vistool_verl.agent_loop.VistoolAgentLoop',
      max_turns: 5,
      max_tool_calls: 4,
      use_tools: true,
      max_new_tokens: 1024,
      train_turns: 'all',
      presentation: { system_prompt: null, view: { latest_images: null, images_first: false } },
    },
  ]);
  // The run's presentation block reaches the loop as it is (the env server picks the arm's system
  // turn by use_tools and applies the view), and the converter gets the same block.
  const micro = await exportTo(MICRO);
  const [entry] = jsYaml.load(micro.agentLoop) as Tree[];
  assert.deepEqual(entry?.presentation, {
    system_prompt: {
      tools: 'Answer the question about the chart. You may call an image tool first.',
      no_tools: 'Answer the question about the chart. Tools are off: answer directly.',
    },
    view: { latest_images: 1, images_first: false },
  });
  assert.equal(entry?.max_turns, 3);
  assert.ok(micro.runSh.includes(`--presentation '${JSON.stringify(entry?.presentation)}'`), 'the converter commands carry the same presentation');
});

test('run.sh is executable, passes bash -n and starts the server with its real flags', async () => {
  const { out, runSh } = await exportTo(DAPO);
  assert.ok((statSync(join(out, 'run.sh')).mode & 0o111) === 0o111, 'run.sh is not executable');
  const syntax = spawnSync('bash', ['-n', join(out, 'run.sh')], { encoding: 'utf8' });
  assert.equal(syntax.status, 0, syntax.stderr);
  assert.match(runSh, /^#!\/usr\/bin\/env bash\n/);
  assert.match(runSh, /^set -euo pipefail$/m);
  assert.match(runSh, /MALLOC_MMAP_THRESHOLD_=65536 "\$NODE" "\$REPO\/bin\/vistool\.js" serve --port 0 --token-file "\$RUN_DIR\/env-token" --images-dir "\$RUN_DIR\/images"/);
  assert.match(runSh, /--root "\$REPO\/data\/refocus-table\/train" --root "\$REPO\/data\/refocus-table\/test" --reward-config "\$RUN_DIR\/logs\/reward-config\.json" --quiet/);
  assert.match(runSh, /^"\$PYTHON" -m verl\.trainer\.main_ppo --config-path "\$DIR" --config-name verl hydra\.run\.dir="\$RUN_DIR\/logs\/hydra" "\$@"$/m);
  assert.match(runSh, /^trap .*kill "\$SERVER_PID".* EXIT$/m);
  assert.match(runSh, /^RUN_DIR="\$\{RUN_DIR:-\$REPO\/runs\/dapo-qwen2\.5-vl-3b\}"/m);
});

test('run.sh starts the env server, exports its address and stops it when the trainer exits', { skip: !existsSync(BUNDLE) && 'dist/cli.js is missing (npm run build)', timeout: 60_000 }, async () => {
  const work = await mkdtemp(join(tmpdir(), 'vistool-export-run-'));
  for (const split of ['train', 'test']) {
    const made = spawnSync(process.execPath, [join(root, 'bin', 'vistool.js'), 'data', 'gen', '--kind', 'vbar', '--n', '2', '--seed', '1', '--split', split, '--image-size', '112x112', '--out', join(work, 'data', split)], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
  }
  const config = join(work, 'run.vistool.json');
  await writeFile(config, JSON.stringify({ name: 'x', output_dir: 'out-run', device: 'cuda', data: { train: 'data/train/tasks.jsonl', eval: 'data/test/tasks.jsonl' }, policy: { model: 'Qwen/Qwen2.5-VL-3B-Instruct' }, sft: { enabled: false }, rl: { prompts_per_step: 4, group_size: 2 }, rewards: { tool: { no_tool_factor: 0.5 } } }));
  const { out, stderr } = await exportTo(config, ['--base-dir', work]);
  assert.match(stderr, /python3 -m vistool_verl data convert --to verl \S+\/data\/train\/tasks\.jsonl --out \S+\/train\.parquet\n/);
  // The val rows are marked as such, so the agent loop files their rollouts apart from the training steps.
  assert.match(stderr, /python3 -m vistool_verl data convert --to verl \S+\/data\/test\/tasks\.jsonl --out \S+\/val\.parquet --split val\n/);
  // Without the parquet files run.sh stops before starting anything, and says what to run.
  const early = spawnSync('bash', [join(out, 'run.sh')], { encoding: 'utf8', env: { ...process.env, PYTHON: 'false' } });
  assert.equal(early.status, 1);
  assert.match(early.stderr, /train\.parquet is missing; see 'Before the first run'/);
  await writeFile(join(out, 'train.parquet'), '');
  await writeFile(join(out, 'val.parquet'), '');
  // A stand-in for veRL's trainer: records its arguments and environment, and asks the server for its health.
  const stub = join(work, 'fake-python');
  await writeFile(stub, `#!${process.execPath}
const { readFileSync, writeFileSync } = require('node:fs');
const token = readFileSync(process.env.VISTOOL_ENV_TOKEN_FILE, 'utf8').trim();
fetch(process.env.VISTOOL_ENV_URL + '/v1/health', { headers: { authorization: 'Bearer ' + token } })
  .then((r) => r.json())
  .then((health) => writeFileSync(process.env.VISTOOL_RUN_DIR + '/stub.json', JSON.stringify({ argv: process.argv.slice(2), health,
    env: Object.fromEntries(['VISTOOL_ENV_URL', 'VISTOOL_ENV_TOKEN_FILE', 'VISTOOL_RUN_DIR', 'VISTOOL_REPO', 'VISTOOL_VERL_DIR', 'VERL_FILE_LOGGER_PATH'].map((k) => [k, process.env[k]])) })));
`, { mode: 0o755 });
  const code = await new Promise<number | null>((resolvePromise) => {
    const child = spawn('bash', [join(out, 'run.sh'), 'trainer.total_training_steps=2'], { env: { ...process.env, PYTHON: stub, RUN_DIR: join(work, 'the-run') }, stdio: 'inherit' });
    child.on('exit', resolvePromise);
  });
  assert.equal(code, 0);
  const seen = JSON.parse(await readFile(join(work, 'the-run', 'stub.json'), 'utf8')) as { argv: string[]; health: Tree; env: Record<string, string> };
  assert.deepEqual(seen.argv, ['-m', 'verl.trainer.main_ppo', '--config-path', out, '--config-name', 'verl', `hydra.run.dir=${join(work, 'the-run', 'logs', 'hydra')}`, 'trainer.total_training_steps=2']);
  assert.equal(seen.health.status, 'ok');
  assert.match(seen.env.VISTOOL_ENV_URL ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(seen.env.VISTOOL_ENV_TOKEN_FILE, join(work, 'the-run', 'env-token'));
  assert.equal(seen.env.VISTOOL_RUN_DIR, join(work, 'the-run'));
  assert.equal(seen.env.VISTOOL_VERL_DIR, out);
  assert.equal(seen.env.VISTOOL_REPO, root);
  // veRL's file logger writes the run's metrics.jsonl, where the dashboard reads it.
  assert.equal(seen.env.VERL_FILE_LOGGER_PATH, join(work, 'the-run', 'metrics.jsonl'));
  assert.deepEqual(JSON.parse(await readFile(join(work, 'the-run', 'logs', 'reward-config.json'), 'utf8')), { tool: { no_tool_factor: 0.5 } });
  // The server is gone once run.sh has exited.
  const listening = JSON.parse((await readFile(join(work, 'the-run', 'logs', 'env-server.out'), 'utf8')).split('\n')[0] ?? '') as { pid: number };
  await new Promise((r) => setTimeout(r, 200));
  assert.throws(() => process.kill(listening.pid, 0), /ESRCH/);
});

test('a bad config is refused with the validator\'s message naming the key', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-export-bad-'));
  const cases: [string, RegExp][] = [
    ['{\n  "name": "bad",\n  "rl": {"clip_ratio_hgh": 0.3}\n}\n', /bad\.vistool\.json:3:10: error: unknown key 'clip_ratio_hgh' in rl: did you mean 'clip_ratio_high'\?.*\[schema\/unknown-key\]/],
    ['{"rl": {"group_size": "eight"}}', /error: .*rl\.group_size.*\[schema\/type\]/],
  ];
  for (const [text, message] of cases) {
    const file = join(dir, 'bad.vistool.json');
    await writeFile(file, text);
    const stderr = capture();
    await assert.rejects(createConfigExportCommand({ stdout: capture(), stderr }).run(['--to', 'verl', file, '--out', join(dir, 'out')]), /has \d+ error\(s\), listed above/);
    assert.match(stderr.text(), message);
    assert.equal(existsSync(join(dir, 'out', 'verl.yaml')), false);
  }
});

test('a config veRL would refuse is refused, naming the key and the fix', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-export-uneven-'));
  const file = join(dir, 'uneven.vistool.json');
  await writeFile(file, JSON.stringify({ device: 'cuda', rl: { prompts_per_step: 3, group_size: 3 } }));
  const stderr = capture();
  await assert.rejects(createConfigExportCommand({ stdout: capture(), stderr }).run(['--to', 'verl', file, '--out', join(dir, 'out')]), /cannot run on veRL as it is/);
  assert.match(stderr.text(), /error: a step's batch \(rl\.prompts_per_step × rl\.group_size = 3 × 3 = 9 rollouts\) does not split over 4 GPU\(s\).*\[verl\/batch-uneven\]/);
  await writeFile(file, JSON.stringify({ rl: { enabled: false } }));
  await assert.rejects(createConfigExportCommand({ stdout: capture(), stderr }).run(['--to', 'verl', file, '--out', join(dir, 'out')]), /cannot run on veRL/);
  assert.match(stderr.text(), /rl\.enabled is false.*\[verl\/rl-off\]/);
  await writeFile(file, JSON.stringify({ rl: { mask_truncated_turns: true } }));
  await assert.rejects(createConfigExportCommand({ stdout: capture(), stderr }).run(['--to', 'verl', file, '--out', join(dir, 'out')]), /cannot run on veRL/);
  assert.match(stderr.text(), /rl\.mask_truncated_turns is true: veRL 0\.9\.1 has no over-turn masking.*\[verl\/no-turn-masking\]/);
});

test('more than one node needs an env server every node reaches: refused without env.url, exported with it', async () => {
  const out = await mkdtemp(join(tmpdir(), 'vistool-export-'));
  const stderr = capture();
  await assert.rejects(createConfigExportCommand({ stdout: capture(), stderr }).run(['--to', 'verl', DAPO, '--out', out, '--nnodes', '2']), /cannot run on veRL as it is/);
  assert.match(stderr.text(), /error: --nnodes 2: veRL runs agent-loop workers on every node[\s\S]*loopback[\s\S]*--allow-remote[\s\S]*env\.url and env\.token_file.*\[verl\/multi-node-loopback\]/);
  const remote = join(out, 'remote.vistool.json');
  const source = JSON.parse(await readFile(DAPO, 'utf8')) as Tree;
  await writeFile(remote, JSON.stringify({ ...source, env: { ...(source.env as Tree), url: 'http://10.0.0.5:8700', token_file: '/shared/env-token' } }));
  const exported = await exportTo(remote, ['--nnodes', '2', '--base-dir', root]);
  assert.equal(at(jsYaml.load(exported.verlYaml), 'trainer.nnodes'), 2);
  assert.match(exported.runSh, /export VISTOOL_ENV_URL=http:\/\/10\.0\.0\.5:8700/);
});

test('missing --out, --to or the config file are usage errors (exit 2)', async () => {
  const command = createConfigExportCommand({ stdout: capture(), stderr: capture() });
  await assert.rejects(command.run(['--to', 'verl', DAPO]), (err: unknown) => err instanceof UsageError && /--out DIR is required/.test(err.message));
  await assert.rejects(command.run([DAPO, '--out', '/tmp/x']), (err: unknown) => err instanceof UsageError && /--to must be one of verl/.test(err.message));
  await assert.rejects(command.run(['--to', 'verl', '--out', '/tmp/x']), UsageError);
  await assert.rejects(command.run(['--to', 'verl', DAPO, '--out', '/tmp/x', '--n-gpus-per-node', '0']), UsageError);
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = (() => true) as typeof process.stderr.write;
  try {
    assert.equal(await main(['config', 'export', '--to', 'verl', DAPO]), 2);
  } finally {
    process.stderr.write = original;
  }
});

test('the committed example is what the export writes today', async () => {
  const prepared = await prepareVerlExport({ file: relative(process.cwd(), DAPO), out: EXAMPLE_OUT, nGpusPerNode: null, nnodes: 1 });
  for (const [name, content] of Object.entries(prepared.files)) {
    assert.equal(await readFile(join(EXAMPLE_OUT, name), 'utf8'), content, `${name} differs: run \`node bin/vistool.js config export --to verl examples/dapo-qwen2.5-vl-3b-4gpu.vistool.json --out examples/verl/dapo-qwen2.5-vl-3b-4gpu\``);
    assert.doesNotMatch(content, new RegExp(root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), `${name} names this checkout`);
  }
  assert.ok((statSync(join(EXAMPLE_OUT, 'run.sh')).mode & 0o111) === 0o111);
});

test('docs/VERL.md maps every run-config key', async () => {
  const doc = await readFile(join(root, 'docs', 'VERL.md'), 'utf8');
  assert.match(doc, /^# vistool on veRL\n/);
  const section = doc.split('## How a vistool run config maps to veRL')[1]?.split('\n## ')[0] ?? '';
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));
  const covered = rows.flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string));
  const keys: string[] = [];
  // Every key that holds a value; a section (data, rl, ...) is covered by its keys' rows.
  const walk = (node: SchemaNode, prefix: string) => {
    for (const [key, child] of Object.entries(resolvedNode(node).properties ?? {})) {
      const properties = resolvedNode(child).properties;
      if (!properties || Object.keys(properties).length === 0) keys.push(prefix + key);
      walk(child, `${prefix}${key}.`);
    }
  };
  walk(runConfigSchema, '');
  assert.ok(keys.length > 100);
  const missing = keys.filter((key) => !covered.some((c) => c === key || (c.endsWith('.*') && key.startsWith(c.slice(0, -1)))));
  assert.deepEqual(missing, []);
});

test('every key verl.yaml sets is one of veRL 0.9.1\'s, and veRL composes and validates the config', { skip: !existsSync(VERL_PYTHON) && 'needs .venv-verl with veRL installed (make verl-env); `make test-verl` runs this file again after installing it', timeout: 180_000 }, async () => {
  const dapo = await exportTo(DAPO);
  const micro = await exportTo(MICRO);
  const script = join(dapo.out, 'check_keys.py');
  await writeFile(script, PYTHON_CHECK);
  for (const out of [dapo.out, micro.out]) {
    const result = spawnSync(VERL_PYTHON, [script, out], { encoding: 'utf8', env: { ...process.env, VISTOOL_MODEL_PATH: '/models/micro', VISTOOL_REPO: root, VISTOOL_RUN_DIR: '/runs/x' }, timeout: 170_000 });
    assert.equal(result.status, 0, `${out}:\n${result.stdout}\n${result.stderr.slice(-3000)}`);
    assert.match(result.stdout, /^OK \d+ keys$/m);
  }
});

/**
 * Composes DIR/verl.yaml with Hydra over veRL's installed config, then checks: every key written
 * is in veRL's reference tree (_generated_ppo_trainer.yaml) or a field of the dataclass that
 * reads it; the composed config holds the written values; veRL's dataclasses accept the actor,
 * rollout and algorithm sections; veRL's own validate_config passes.
 */
const PYTHON_CHECK = String.raw`
import dataclasses, importlib, os, sys
from pathlib import Path
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
import verl

out = Path(sys.argv[1]).resolve()
mine = OmegaConf.to_container(OmegaConf.load(out / "verl.yaml"), resolve=False)
reference = OmegaConf.to_container(OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml"), resolve=False)
# Keys a veRL dataclass has but its YAML tree leaves out.
DATACLASS_ONLY = {
    "actor_rollout_ref.rollout.limit_images": ("verl.workers.config", "RolloutConfig", "limit_images"),
    # An optional dict field of FSDPEngineConfig that the FSDP engine reads (mixed_precision.param_dtype).
    "actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype": ("verl.workers.config", "FSDPEngineConfig", "mixed_precision"),
    "actor_rollout_ref.ref.fsdp_config.mixed_precision.param_dtype": ("verl.workers.config", "FSDPEngineConfig", "mixed_precision"),
}

def leaves(node, prefix=""):
    for key, value in node.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from leaves(value, path + ".")
        else:
            yield path, value

def known(path):
    node = reference
    for part in path.split("."):
        if isinstance(node, dict) and node == {}:
            return True  # an open map such as data.mm_processor_kwargs
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True

problems = []
written = list(leaves({k: v for k, v in mine.items() if k not in ("hydra", "defaults")}))
for path, _ in written:
    if path in DATACLASS_ONLY:
        module, name, field = DATACLASS_ONLY[path]
        if field not in {f.name for f in dataclasses.fields(getattr(importlib.import_module(module), name))}:
            problems.append(f"{path}: not a field of {name}")
    elif not known(path):
        problems.append(f"{path}: not a key of veRL's config")

os.environ["VISTOOL_VERL_DIR"] = str(out)
with initialize_config_dir(config_dir=str(out), version_base=None):
    cfg = compose(config_name="verl")
for path, value in written:
    got = OmegaConf.select(cfg, path)
    if OmegaConf.is_config(got):
        got = OmegaConf.to_container(got)
    if isinstance(value, str) and "\x24{" in value:  # an interpolation (the template cannot hold a dollar-brace)
        if not str(got).startswith("/"):
            problems.append(f"{path}: {value!r} resolved to {got!r}")
    elif got != value:
        problems.append(f"{path}: composed {got!r}, verl.yaml says {value!r}")

from verl.utils.config import omega_conf_to_dataclass, validate_config
for section in ("actor_rollout_ref.actor", "actor_rollout_ref.rollout", "algorithm"):
    try:
        omega_conf_to_dataclass(OmegaConf.select(cfg, section))
    except Exception as error:
        problems.append(f"{section}: veRL's dataclass refuses it: {error}")
try:
    validate_config(cfg, use_reference_policy=bool(cfg.actor_rollout_ref.actor.use_kl_loss), use_critic=False)
except Exception as error:
    problems.append(f"validate_config: {type(error).__name__}: {error}")
print("\n".join(problems) if problems else f"OK {len(written)} keys")
sys.exit(1 if problems else 0)
`;

const VTOOL = join(root, 'examples', 'vtool-r1-v2-qwen2.5-vl-3b-chart.vistool.json');

test('the export writes both image bounds and a prompt budget an image at the bounds fits', async () => {
  // DAPO sets max_pixels 1,003,520 and leaves min_pixels null (Qwen2.5-VL's 3,136): the table's
  // measured 1,626 text tokens + 256 headroom + ⌊1,003,520 / 784⌋ = 1,280 image tokens = 3,162.
  const dapo = jsYaml.load((await exportTo(DAPO)).verlYaml);
  assert.deepEqual(at(dapo, 'data.mm_processor_kwargs'), { min_pixels: 3136, max_pixels: 1003520 });
  assert.equal(at(dapo, 'data.max_prompt_length'), 3162);
  // VTool-R1 v2 leaves both null: the processor's own bounds are written (transformers 5 ignores one
  // without the other), and the prompt holds an image of 16,384 tokens: 1,882 + 16,384 = 18,266.
  const vtool = jsYaml.load((await exportTo(VTOOL)).verlYaml);
  assert.deepEqual(at(vtool, 'data.mm_processor_kwargs'), { min_pixels: 3136, max_pixels: 12845056 });
  assert.equal(at(vtool, 'data.max_prompt_length'), 18266);
  // A budget chosen by hand is kept when it fits, refused with the key and the number when it does not.
  assert.equal(at(jsYaml.load((await exportTo(DAPO, ['--max-prompt-length', '4096'])).verlYaml), 'data.max_prompt_length'), 4096);
  const stderr = capture();
  const out = await mkdtemp(join(tmpdir(), 'vistool-export-'));
  await assert.rejects(createConfigExportCommand({ stdout: capture(), stderr }).run(['--to', 'verl', VTOOL, '--out', out, '--max-prompt-length', '8192']), /cannot run on veRL as it is/);
  assert.match(stderr.text(), /error: data\.max_prompt_length 8192 \(--max-prompt-length\) is too small: the opening prompt can take 18266 tokens, 1882 of text .* and 16384 for an image at max_pixels 12845056 .*Give --max-prompt-length 18266 or more.*\[verl\/prompt-overflow\]/);
  assert.equal(existsSync(join(out, 'verl.yaml')), false);
  await assert.rejects(createConfigExportCommand({ stdout: capture(), stderr: capture() }).run(['--to', 'verl', DAPO, '--out', out, '--max-prompt-length', 'lots']), UsageError);
});

test("dynamic batching whose token limit one sequence at the image bounds passes is refused with the number", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-export-tokens-'));
  const file = join(dir, 'big.vistool.json');
  const vtool = JSON.parse(await readFile(VTOOL, 'utf8')) as Tree;
  // VTool's budgets at Qwen2.5-VL's own max_pixels: 18,266 prompt + (2 × 2,048 + 1 × 128 + 1 × 16,384 = 20,608) response = 38,874.
  await writeFile(file, JSON.stringify({ ...vtool, data: { train: null, eval: null }, rl: { ...(vtool.rl as Tree), use_dynamic_bsz: true } }));
  const stderr = capture();
  await assert.rejects(createConfigExportCommand({ stdout: capture(), stderr }).run(['--to', 'verl', file, '--out', join(dir, 'out'), '--base-dir', root]), /cannot run on veRL/);
  assert.match(stderr.text(), /error: rl\.ppo_max_token_len_per_gpu \(16384\) is less than one sequence at the image bounds: data\.max_prompt_length 18266 \+ data\.max_response_length 20608 = 38874 tokens.*Set rl\.ppo_max_token_len_per_gpu to 38874 or more.*\[verl\/tokens-per-gpu\]/);
});

test('rl.failed_groups goes into the sampler\'s kwargs, and only drop turns on veRL\'s single-prompt refill', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-export-failed-groups-'));
  const dapo = JSON.parse(await readFile(DAPO, 'utf8')) as Tree;
  const exported = async (failedGroups: 'drop' | 'keep' | undefined) => {
    const file = join(dir, `${failedGroups ?? 'default'}.vistool.json`);
    const rl = { ...(dapo.rl as Tree), ...(failedGroups === undefined ? {} : { failed_groups: failedGroups }) };
    await writeFile(file, JSON.stringify({ ...dapo, data: { train: null, eval: null }, rl }));
    const { verlYaml } = await exportTo(file, ['--base-dir', root]);
    return { verlYaml, sampler: at(jsYaml.load(verlYaml), 'trainer.v1.sampler') as Tree };
  };
  const keep = await exported('keep');
  assert.equal(at(keep.sampler, 'sampler_kwargs.failed_groups'), 'keep');
  assert.equal(keep.sampler.sync_refill_failed_groups, false);
  const drop = await exported('drop');
  assert.equal(at(drop.sampler, 'sampler_kwargs.failed_groups'), 'drop');
  assert.equal(drop.sampler.sync_refill_failed_groups, true);
  // Left out, the schema's default: drop.
  assert.deepEqual((await exported(undefined)).sampler, drop.sampler);
  // Both lines name the key they come from.
  for (const text of [keep.verlYaml, drop.verlYaml]) {
    assert.match(text, /^ +failed_groups: (drop|keep) # vistool: rl\.failed_groups$/m);
    assert.match(text, /^ +sync_refill_failed_groups: (true|false) # vistool: rl\.failed_groups /m);
  }
});

test('rl.rollout_is becomes veRL\'s rollout correction with the engine\'s log-probs turned on, and off writes neither', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-export-rollout-is-'));
  const dapo = JSON.parse(await readFile(DAPO, 'utf8')) as Tree;
  const exported = async (rolloutIs: Tree) => {
    const file = join(dir, `${String(rolloutIs.rollout_is ?? 'default')}.vistool.json`);
    await writeFile(file, JSON.stringify({ ...dapo, data: { train: null, eval: null }, rl: { ...(dapo.rl as Tree), rollout_engine: 'vllm', ...rolloutIs } }));
    const { verlYaml } = await exportTo(file, ['--base-dir', root]);
    return { verlYaml, yaml: jsYaml.load(verlYaml) as Tree };
  };
  const token = await exported({ rollout_is: 'sequence', rollout_is_threshold: 3 });
  assert.equal(at(token.yaml, 'algorithm.rollout_correction.rollout_is'), 'sequence');
  assert.equal(at(token.yaml, 'algorithm.rollout_correction.rollout_is_threshold'), 3);
  assert.equal(at(token.yaml, 'actor_rollout_ref.rollout.calculate_log_probs'), true);
  assert.match(token.verlYaml, /^ +rollout_is: sequence # vistool: rl\.rollout_is$/m);
  const off = await exported({});
  assert.equal('rollout_correction' in (at(off.yaml, 'algorithm') as Tree), false);
  assert.equal('calculate_log_probs' in (at(off.yaml, 'actor_rollout_ref.rollout') as Tree), false);
});


test('rl.fresh_tasks, which veRL has no counterpart for, is warned about with how to convert only those tasks; 0 says nothing', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-export-fresh-tasks-'));
  const dapo = JSON.parse(await readFile(DAPO, 'utf8')) as Tree;
  const exported = async (fresh: number) => {
    const file = join(dir, `fresh-${fresh}.vistool.json`);
    await writeFile(file, JSON.stringify({ ...dapo, data: { train: null, eval: null }, rl: { ...(dapo.rl as Tree), fresh_tasks: fresh } }));
    return exportTo(file, ['--base-dir', root]);
  };
  const kept = await exported(100);
  assert.match(kept.stderr, /rl\.fresh_tasks \(100\) is not applied/);
  assert.match(kept.stderr, /tail -n 100 DIR\/tasks\.jsonl/);
  assert.doesNotMatch((await exported(0)).stderr, /fresh_tasks/);
});
