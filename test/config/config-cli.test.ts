import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createConfigSchemaCommand } from '../../env/cli/config-schema.js';
import { createConfigValidateCommand } from '../../env/cli/config-validate.js';
import { main } from '../../env/cli/main.js';
import { schemaErrors } from '../../env/config/run-config-schema.js';
import Ajv from 'ajv';

const root = join(__dirname, '..', '..');

function capture() {
  const chunks: string[] = [];
  return { write: (text: string) => chunks.push(text), text: () => chunks.join('') };
}

async function files() {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-config-cli-'));
  const bad = join(dir, 'bad.vistool.json');
  await writeFile(bad, '{\n  "name": "bad",\n  "device": "cuda",\n  "rl": {"group_size": 1, "clip_ratio_hgh": 0.3}\n}\n');
  const good = join(dir, 'good.vistool.json');
  await writeFile(good, JSON.stringify({ name: 'good', rl: { group_size: 4 } }));
  const report = join(dir, 'check-env.json');
  await writeFile(report, JSON.stringify({ ok: true, cuda_available: false, cuda_devices: [] }));
  return { dir, bad, good, report };
}

test('validate prints file:line:col per problem and exits 1 when a file has errors', async () => {
  const { bad, good, report } = await files();
  const stdout = capture();
  const stderr = capture();
  const code = await createConfigValidateCommand(stdout, stderr).run([bad, good, '--env-report', report]);
  assert.equal(code, 1);
  assert.deepEqual(stdout.text().trim().split('\n'), [
    `${bad}:3:13: error: device is 'cuda' but the trainer's environment check found no CUDA device on this machine. Use 'auto' (CUDA when there is one) or 'cpu', or run where the GPUs are (Remote-SSH). [device/no-cuda]`,
    `${bad}:4:24: error: rl.group_size is 1: GRPO's advantage compares rollouts of the same prompt, so a group of 1 has no baseline and every advantage is 0. Use 2 or more (8 is common), or turn RL off with rl.enabled: false. [rl/group-too-small]`,
    `${bad}:4:27: error: unknown key 'clip_ratio_hgh' in rl: did you mean 'clip_ratio_high'? Unknown keys are errors. Known keys: enabled, steps, max_seconds, prompts_per_step, group_size, ppo_mini_batch_size, ppo_epochs, lr, temperature, max_new_tokens, advantage, clip_ratio_low, clip_ratio_high, clip_ratio_c, loss_agg_mode, loss_agg_scope, train_turns, loss_scale_factor, kl_coef, kl_estimator, dynamic_sampling, dynamic_sampling_metric, max_num_gen_batches, failed_groups, mask_truncated_turns, micro_batch_size, use_dynamic_bsz, ppo_max_token_len_per_gpu, max_grad_norm, rollout_engine, vllm_gpu_memory_utilization, rollout_is, rollout_is_threshold, betas, fresh_tasks, fold_lora_for_sampling. [schema/unknown-key]`,
  ]);
  assert.equal(stderr.text(), '2 file(s): 3 error(s), 0 warning(s)\n');
});

test('validate exits 0 on a clean file, and --strict fails on warnings', async () => {
  const { dir, good } = await files();
  assert.equal(await createConfigValidateCommand(capture(), capture()).run([good]), 0);
  const warned = join(dir, 'warned.vistool.json');
  await writeFile(warned, JSON.stringify({ env: { max_turns: 2, max_tool_calls: 2 } }));
  assert.equal(await createConfigValidateCommand(capture(), capture()).run([warned]), 0);
  assert.equal(await createConfigValidateCommand(capture(), capture()).run([warned, '--strict']), 1);
});

test('validate --json writes one object per file with located problems', async () => {
  const { bad } = await files();
  const stdout = capture();
  await createConfigValidateCommand(stdout, capture()).run([bad, '--json']);
  const parsed = JSON.parse(stdout.text()) as { file: string; problems: { code: string; start: { line: number; column: number } }[] };
  assert.equal(parsed.file, bad);
  assert.deepEqual(parsed.problems.map((p) => [p.code, p.start.line, p.start.column]), [['rl/group-too-small', 4, 24], ['schema/unknown-key', 4, 27]]);
});

test('a file that cannot be read is a problem line, not a crash', async () => {
  const stdout = capture();
  assert.equal(await createConfigValidateCommand(stdout, capture()).run(['/nonexistent/x.vistool.json']), 1);
  assert.match(stdout.text(), /^\/nonexistent\/x\.vistool\.json:1:1: error: cannot read the file \(ENOENT\)/);
});

test('the CLI dispatches config validate and reports usage errors with exit 2', async () => {
  const { good } = await files();
  assert.equal(await main(['config', 'validate', good]), 0);
  assert.equal(await main(['config', 'validate']), 2);
  assert.equal(await main(['config', 'validate', good, '--bogus']), 2);
});

test('config schema prints the run-config schema self-contained: no $ref, no $id, and it validates as the source does', async () => {
  const stdout = capture();
  assert.equal(await createConfigSchemaCommand(stdout).run([]), 0);
  const printed = JSON.parse(stdout.text()) as Record<string, unknown>;
  const source = JSON.parse(await readFile(join(root, 'schemas', 'run-config.schema.json'), 'utf8')) as { properties: Record<string, unknown> };
  assert.deepEqual(Object.keys(printed.properties as object), Object.keys(source.properties));
  const refs: string[] = [];
  const walk = (node: unknown, path: string) => {
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' || (key === '$id' && path === '')) refs.push(`${path}/${key}`);
      walk(value, `${path}/${key}`);
    }
  };
  walk(printed, '');
  assert.deepEqual(refs, []);
  const validate = new Ajv({ allErrors: true, strict: false }).compile(printed);
  const samples: unknown[] = [
    JSON.parse(await readFile(join(root, 'examples', 'micro-cpu.vistool.json'), 'utf8')),
    JSON.parse(await readFile(join(root, 'examples', 'dapo-qwen2.5-vl-3b-4gpu.vistool.json'), 'utf8')),
    { rewards: { judge: { enabled: 'yes', bogus: 1 }, weights: { accuracy: 'high' } } },
    { rl: { group_size: 0, advantage: 'x' }, extra: true },
  ];
  for (const sample of samples) {
    validate(sample);
    const fromPrinted = (validate.errors ?? []).map((e) => `${e.instancePath} ${e.keyword}`).sort();
    const fromSource = schemaErrors(sample).map((e) => `${e.instancePath} ${e.keyword}`).sort();
    assert.deepEqual(fromPrinted, fromSource, JSON.stringify(sample));
  }
});
