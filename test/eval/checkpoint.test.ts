/**
 * A real `checkpoint:` eval: a tiny SFT run of the micro Qwen2.5-VL policy by the Python trainer
 * makes a checkpoint, and `vistool eval` evaluates it through the trainer's own `eval` command.
 * About 20 s on an idle 2-core machine (two Python processes that import torch). Skipped, with
 * the reason, where the trainer's virtual environment or the CLI bundle is missing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEvalCommand } from '../../env/cli/eval.js';
import { compareEvals } from '../../env/eval/compare.js';
import { defaultPython, repositoryRoot } from '../../env/eval/checkpoint-eval.js';
import type { ResultsDocument } from '../../env/eval/results-document.js';
import { generateDataset } from '../../env/tasks/dataset.js';
import { evalResultsFromDocument } from '../../env/view/evaluations.js';

const python = defaultPython();
const missing = !existsSync(python)
  ? `no trainer interpreter at ${python} (make the .venv or set VISTOOL_PYTHON)`
  : !existsSync(join(repositoryRoot(), 'dist', 'cli.js'))
    ? 'dist/cli.js is missing (npm run build): the trainer starts the env server from it'
    : false;

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: repositoryRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('close', (code) => resolve({ code, output }));
  });
}

test('checkpoint: a micro policy trained for 3 SFT steps is evaluated by the trainer with and without tools, and the dashboard reads the result', { skip: missing, timeout: 240_000 }, async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-eval-ckpt-'));
  const data = join(root, 'data');
  await generateDataset(data, { kind: 'table', n: 8, seed: 5, split: 'train', difficulty: [1, 1], imageSize: [224, 112], concurrency: 2 });
  const tasks = join(data, 'tasks.jsonl');
  const runDir = join(root, 'tiny');
  const config = join(root, 'config.json');
  await writeFile(
    config,
    JSON.stringify({
      name: 'tiny',
      seed: 1,
      output_dir: runDir,
      device: 'cpu',
      threads: 1,
      data: { train: tasks, eval: tasks },
      policy: { model: 'micro', system_prompt: '', micro: { vocab_size: 400 } },
      env: { tools: true, max_turns: 2, max_tool_calls: 1 },
      sft: { steps: 3, batch_size: 4 },
      rl: { enabled: false },
      eval: { n: 2, before_and_after: false, max_new_tokens: 8 },
      checkpoint: { every_steps: 3, keep: 1 },
    }),
  );
  const trained = await run(python, ['-m', 'vistool_trainer', 'train', '--config', config]);
  assert.equal(trained.code, 0, trained.output.slice(-2000));
  const checkpoint = join(runDir, 'checkpoints', 'step-000003');
  assert.ok(existsSync(checkpoint), 'the training run wrote its checkpoint');

  const out = join(root, 'eval');
  const stdout: string[] = [];
  const progress: string[] = [];
  const command = createEvalCommand({ stdout: { write: (t: string) => stdout.push(t) }, stderr: { write: (t: string) => progress.push(t) } });
  const code = await command.run(['--policy', `checkpoint:${checkpoint}`, '--tasks', tasks, '--limit', '3', '--out', out]);
  assert.equal(code, 0, progress.join('').slice(-2000));

  const document = JSON.parse(await readFile(join(out, 'results.json'), 'utf8')) as ResultsDocument;
  assert.equal(document.per_task, false);
  assert.equal(document.step, 3);
  assert.equal(document.label, 'tiny/step-000003');
  const metrics = document.evaluations['tiny/step-000003']?.metrics ?? {};
  assert.equal(metrics['eval/n'], 3);
  for (const key of ['eval/acc_tools', 'eval/acc_no_tools', 'eval/tool_call_rate']) {
    const value = metrics[key];
    assert.ok(value !== undefined && value >= 0 && value <= 1, `${key} = ${value}`);
  }
  const derived = JSON.parse(await readFile(join(out, 'trainer-config.json'), 'utf8')) as { data: { eval: string }; eval: { n: number }; output_dir: string };
  assert.deepEqual([derived.data.eval, derived.eval.n, derived.output_dir], [tasks, 3, join(out, 'trainer')]);
  assert.match(stdout.join(''), /eval\/acc_tools/);
  // The dashboard and eval compare read it like any other eval.
  const [shown] = evalResultsFromDocument(document, 'results.json', null);
  assert.deepEqual([shown?.label, shown?.step, shown?.metrics['eval/acc_tools']], ['tiny/step-000003', 3, metrics['eval/acc_tools']]);
  const comparison = await compareEvals([out]);
  assert.deepEqual(comparison.rows.map((r) => [r.arm, r.acc]), [['tools', metrics['eval/acc_tools']], ['no_tools', metrics['eval/acc_no_tools']]]);
});
