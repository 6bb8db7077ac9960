import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeGenerate, generationJobs } from '../../env/config/data-gen-args.js';

const root = join(__dirname, '..', '..');
const python = join(root, '.venv', 'bin', 'python');
const CONFIGS = ['examples/micro-cpu.vistool.json', 'examples/micro-search.vistool.json', 'test/extension/in-editor/workspace/micro-tiny.vistool.json'];

/** The trainer's own arguments for the same config (trainer/vistool_trainer/run/train.py), read through its config loader. */
function trainerArguments(configPath: string): Record<string, string[]> {
  const script = [
    'import json, sys',
    'from pathlib import Path',
    'from vistool_trainer.run.run_config import load_config',
    'from vistool_trainer.run.train import data_gen_arguments',
    'config = load_config(Path(sys.argv[1]))',
    'print(json.dumps({split: data_gen_arguments(config.data.generate, config.seed, split) for split in ("train", "test")}))',
  ].join('\n');
  const result = spawnSync(python, ['-c', script, join(root, configPath)], { encoding: 'utf8', cwd: join(root, 'trainer') });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as Record<string, string[]>;
}

test('Generate Tasks and the veRL export ask `data gen` for what the trainer would, split by split', { skip: existsSync(python) ? false : 'no .venv (make venv): the trainer side of the comparison runs in it' }, () => {
  for (const config of CONFIGS) {
    const plan = generationJobs(readFileSync(join(root, config), 'utf8'), 'data/x');
    const trainer = trainerArguments(config);
    assert.deepEqual(plan.jobs.map((j) => [j.split, j.args]), [['train', trainer.train], ['test', trainer.test]], config);
    assert.deepEqual(plan.jobs.map((j) => j.out), ['data/x/train', 'data/x/eval']);
  }
});

test('the plan names the config and describes its tasks; a broken config says what is wrong', () => {
  const plan = generationJobs(readFileSync(join(root, CONFIGS[0]!), 'utf8'), 'out');
  assert.equal(plan.name, 'micro-cpu');
  assert.equal(plan.description, 'vbar · 5000 train + 300 held-out · difficulty 2 · 224x112 · level · labels A B C D E F');
  // Defaults fill what a config leaves out (schema defaults: table, 400 + 100, difficulty 1, 224x112).
  assert.equal(describeGenerate({ kind: 'line', n_train: 5, n_eval: 2, difficulty: 3, image_size: '320x240', families: ['argmax'] }), 'line · 5 train + 2 held-out · difficulty 3 · 320x240 · argmax');
  assert.equal(generationJobs('{"name": "bare"}', 'o').description, 'table · 400 train + 100 held-out · difficulty 1 · 224x112');
  assert.throws(() => generationJobs('{"name": ', 'o'), /the run config is not valid JSON/);
  assert.throws(() => generationJobs('[1]', 'o'), /a run config is a JSON object/);
});
