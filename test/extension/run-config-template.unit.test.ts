import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { diskPathKind } from '../../env/config/environment-facts.js';
import { validateRunConfigText } from '../../env/config/validate-run-config.js';
import { buildRunConfig, isHeldOutSplit, type DeviceChoice, type ModelChoice, type Preset, runConfigText, safeRunName, type TasksChoice } from '../../extension/config/run-config-template.js';
import { tempDir } from './run-dirs.js';

test('every New Run Config combination passes the config checks without errors or warnings', async () => {
  const base = await tempDir('template');
  await mkdir(join(base, 'data', 'train'), { recursive: true });
  await mkdir(join(base, 'data', 'test'), { recursive: true });
  await writeFile(join(base, 'data', 'train', 'tasks.jsonl'), '');
  await writeFile(join(base, 'data', 'test', 'tasks.jsonl'), '');
  const models: ModelChoice[] = [{ kind: 'micro' }, { kind: 'qwen3b' }, { kind: 'custom', model: 'org/model' }];
  const tasks: TasksChoice[] = [
    { kind: 'generate', taskKind: 'vbar' },
    { kind: 'generate', taskKind: 'geometry' },
    { kind: 'generate', taskKind: 'search' },
    { kind: 'file', train: 'data/train/tasks.jsonl', eval: 'data/test/tasks.jsonl', taskKind: 'table' },
    { kind: 'file', train: 'data/train/tasks.jsonl', eval: null, taskKind: 'chart' },
  ];
  const presets: Preset[] = ['grpo', 'dapo', 'sft+dapo'];
  const devices: DeviceChoice[] = ['auto', 'cpu', 'cuda'];
  let checked = 0;
  for (const model of models)
    for (const task of tasks)
      for (const preset of presets)
        for (const device of devices) {
          const text = runConfigText({ name: 'r', model, tasks: task, preset, device });
          const { problems } = validateRunConfigText(text, { baseDir: base, facts: { cudaDevices: null, bf16: null, envVars: new Set(), pathKind: diskPathKind, huggingFaceCache: null } });
          assert.deepEqual(problems.filter((p) => p.severity !== 'info').map((p) => p.message), [], JSON.stringify({ model, task, preset, device }));
          checked++;
        }
  assert.equal(checked, 135);
});

test('the presets differ where GRPO and DAPO differ', () => {
  const choices = { name: 'r', model: { kind: 'micro' } as ModelChoice, tasks: { kind: 'generate', taskKind: 'table' } as TasksChoice, device: 'cpu' as DeviceChoice };
  const rlOf = (preset: Preset) => buildRunConfig({ ...choices, preset }).rl as Record<string, unknown>;
  assert.deepEqual([rlOf('grpo').clip_ratio_high, rlOf('grpo').dynamic_sampling, rlOf('grpo').loss_agg_mode], [0.2, false, 'seq-mean-token-mean']);
  assert.deepEqual([rlOf('dapo').clip_ratio_high, rlOf('dapo').dynamic_sampling, rlOf('dapo').kl_coef], [0.28, true, 0]);
  assert.equal((buildRunConfig({ ...choices, preset: 'dapo' }).sft as Record<string, unknown>).enabled, false);
  assert.equal((buildRunConfig({ ...choices, preset: 'sft+dapo' }).sft as Record<string, unknown>).enabled, true);
  assert.equal(buildRunConfig({ ...choices, preset: 'dapo', name: 'my-run' }).output_dir, 'runs/my-run');
});

test('run names become safe file names', () => {
  assert.equal(safeRunName(' micro sft+dapo / v2 '), 'micro-sft-dapo-v2');
  assert.equal(safeRunName('***'), 'run');
});

test('budgets are steps: no combination writes a wall-clock cap (rl.max_seconds, sft.max_seconds)', () => {
  for (const model of [{ kind: 'micro' }, { kind: 'qwen3b' }] as ModelChoice[])
    for (const preset of ['grpo', 'dapo', 'sft+dapo'] as Preset[]) {
      const config = buildRunConfig({ name: 'r', model, tasks: { kind: 'generate', taskKind: 'vbar' }, preset, device: 'cpu' });
      for (const section of ['rl', 'sft'] as const) {
        const values = config[section] as Record<string, unknown>;
        assert.ok(!('max_seconds' in values) || values.max_seconds === null, `${model.kind} ${preset}: ${section}.max_seconds ${String(values.max_seconds)}`);
      }
      assert.ok(((config.rl as Record<string, unknown>).steps as number) > 0);
    }
});

test('a held-out split is never offered as training data: eval/, test/, val/ folders, or tasks the generator made for a test split', () => {
  for (const name of ['eval', 'test', 'val', 'validation', 'heldout', 'Test']) assert.equal(isHeldOutSplit(name), true, name);
  for (const name of ['train', 'data', 'tasks', 'charts']) assert.equal(isHeldOutSplit(name), false, name);
  // runs/demo/data/eval's tasks say split "test" (trainer/tests: generator.split); a folder of any name holding them is held out.
  assert.equal(isHeldOutSplit('heldout-seed2', { test: 300 }), true);
  assert.equal(isHeldOutSplit('mine', { train: 400 }), false);
  assert.equal(isHeldOutSplit('mixed', { train: 390, test: 10 }), false);
});
