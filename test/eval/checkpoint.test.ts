/**
 * A real `checkpoint:` eval: a tiny SFT run of the micro Qwen2.5-VL policy by the Python trainer
 * makes a checkpoint, and `vistool eval` serves it with the trainer's `serve-policy` and runs the
 * same per-task harness as for `openai:` models against it.
 * About 20-30 s on an idle 2-core machine (two Python processes that import torch). Skipped, with
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
import { evalResultsFromDocument } from '../../env/runs/evaluations.js';

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

test('checkpoint: a micro policy trained for 3 SFT steps is served by the trainer and evaluated per task with and without tools, with trajectories, and the dashboard reads the result', { skip: missing, timeout: 240_000 }, async () => {
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
  assert.equal(document.per_task, true);
  assert.equal(document.complete, true);
  assert.equal(document.step, 3);
  assert.equal(document.label, 'tiny/step-000003');
  assert.equal(document.policy, `checkpoint:${checkpoint}`);
  assert.deepEqual(document.arms_requested, ['tools', 'no_tools']);
  const metrics = document.evaluations['tiny/step-000003']?.metrics ?? {};
  assert.equal(metrics['eval/n'], 3);
  for (const key of ['eval/acc_tools', 'eval/acc_no_tools', 'eval/tool_call_rate', 'eval/acc_exact_tools', 'eval/acc_exact_no_tools']) {
    const value = metrics[key];
    assert.ok(value !== undefined && value >= 0 && value <= 1, `${key} = ${value}`);
  }
  assert.equal(document.arms.tools?.by_kind.table?.n, 3, 'the per-kind breakdown counts the three table tasks');

  // One result line per task and arm, each an episode the micro policy played (the run config's
  // 2-turn limit and 8-token replies; its garbage text is answered by the engine, not a failure).
  const lines = (await readFile(join(out, 'results.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const taskIds = (await readFile(tasks, 'utf8')).trim().split('\n').slice(0, 3).map((l) => (JSON.parse(l) as { id: string }).id);
  assert.deepEqual(lines.map((l) => `${String(l.task_id)}/${String(l.arm)}`).sort(), taskIds.flatMap((id) => [`${id}/tools`, `${id}/no_tools`]).sort());
  for (const line of lines) {
    assert.equal(line.status, 'ok', JSON.stringify(line));
    assert.ok(typeof line.turns === 'number' && line.turns >= 1 && line.turns <= 2, `turns ${String(line.turns)}`);
    assert.ok(typeof line.requests === 'number' && line.requests >= 1, 'each episode asked the served checkpoint');
  }
  // The trajectories for the viewer: one per task and arm, the arms side by side as groups 0 and 1.
  const rollouts = (await readFile(join(out, 'rollouts', 'step-000000.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { prompt_id: string; group: number; arm: string; turns: { role: string }[] });
  assert.equal(rollouts.length, 6);
  assert.deepEqual(rollouts.map((r) => [r.group, r.arm]), [0, 1, 2].flatMap(() => [[0, 'tools'], [1, 'no_tools']]));
  for (const rollout of rollouts) assert.ok(rollout.turns.some((t) => t.role === 'assistant'), `${rollout.prompt_id}/${rollout.arm} holds the policy's replies`);

  assert.match(stdout.join(''), /tools/);
  assert.ok(!progress.join('').includes('Traceback'), progress.join('').slice(-2000));
  // The dashboard and eval compare read it like any other eval.
  const [shown] = evalResultsFromDocument(document, 'results.json', null);
  assert.deepEqual([shown?.label, shown?.step, shown?.metrics['eval/acc_tools']], ['tiny/step-000003', 3, metrics['eval/acc_tools']]);
  const comparison = await compareEvals([out]);
  assert.deepEqual(comparison.rows.map((r) => [r.arm, r.acc]), [['tools', metrics['eval/acc_tools']], ['no_tools', metrics['eval/acc_no_tools']]]);
});
