import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createEvalCompareCommand } from '../../env/cli/eval-compare.js';
import { UsageError } from '../../env/cli/command.js';
import { OpenAIChatPolicy } from '../../env/eval/chat-policy.js';
import type { Comparison } from '../../env/eval/compare.js';
import { runChatEval } from '../../env/eval/run-eval.js';
import { startScriptedChatServer, type ScriptedChatServer } from './scripted-chat-server.js';
import { answeringModel, generateTasks, goldText, taskOf, type GeneratedTasks } from './scripted-model.js';

let data: GeneratedTasks;
let server: ScriptedChatServer;

before(async () => {
  data = await generateTasks(6, 31);
  const good = answeringModel(data, 'hermes');
  // Two "models" behind one server: 'good' calls a tool and answers right; 'direct' never calls a
  // tool and answers right only on the first three tasks of the file.
  server = await startScriptedChatServer((request) => {
    if (request.body.model === 'good') return good(request);
    const task = taskOf(request, data);
    return { text: `<answer>${data.tasks.indexOf(task) < 3 ? goldText(task) : 'nobody'}</answer>` };
  });
});

after(async () => {
  await server.close();
});

async function evaluate(model: string, limit: number, tasksFile: string = data.file): Promise<string> {
  const out = await mkdtemp(join(tmpdir(), `vistool-eval-${model}-`));
  await runChatEval({
    policy: new OpenAIChatPolicy({ baseUrl: server.url, model, apiKeyEnv: 'NONE', temperature: 0, maxTokens: 64, timeoutMs: 5000, maxRetries: 0, backoffInitialMs: 1, backoffMaxMs: 1, retryAfterMaxMs: 1 }),
    policyName: `openai:${server.url}#${model}`,
    label: model,
    tasksFile,
    arms: ['tools', 'no_tools'],
    limit,
    concurrency: 2,
    maxTurns: 3,
    temperature: 0,
    maxTokens: 64,
    out,
    rewardConfig: {},
    retryFailed: false,
    progress: () => {},
  });
  return out;
}

function capture() {
  const stdout: string[] = [];
  return { stdout, command: createEvalCompareCommand({ stdout: { write: (t: string) => stdout.push(t) }, stderr: { write: () => true } }) };
}

test('eval compare lines up evals per arm with the difference to the first, per-kind accuracy and the gain from tools', async () => {
  const good = await evaluate('good', 6);
  const direct = await evaluate('direct', 6);
  const { stdout, command } = capture();
  assert.equal(await command.run([good, direct, '--json']), 0);
  const comparison = JSON.parse(stdout.join('')) as Comparison;
  const row = (label: string, arm: string) => comparison.rows.find((r) => r.label === label && r.arm === arm);
  assert.equal(row('good', 'tools')?.acc, 1);
  assert.equal(row('good', 'tools')?.tool_call_rate, 1);
  assert.equal(row('direct', 'tools')?.acc, 0.5);
  assert.equal(row('direct', 'tools')?.tool_call_rate, 0);
  assert.equal(row('direct', 'tools')?.delta_acc, -0.5);
  assert.equal(row('good', 'no_tools')?.acc, 0.5, 'the answering model is right without tools on even positions');
  assert.deepEqual(comparison.tool_gain.map((g) => [g.label, g.gain]), [['good', 0.5], ['direct', 0]]);
  const kinds = new Set(data.tasks.map((t) => t.kind));
  assert.deepEqual(Object.keys(row('good', 'tools')?.by_kind ?? {}).sort(), [...kinds].sort());
  assert.deepEqual(comparison.warnings, []);

  const table = capture();
  await table.command.run([good, direct]);
  const text = table.stdout.join('');
  assert.match(text, /^eval\s+arm\s+n\s+failed\s+acc%\s+Δacc/mu);
  assert.match(text, /^direct\s+tools\s+6\s+0\s+50\.0\s+-50\.0/mu);
  assert.match(text, /^good\s+\+50\.0 points$/mu);
});

test('evals over different tasks are flagged, and --common compares them on the tasks both completed', async () => {
  const all = await evaluate('good', 6);
  const some = await evaluate('direct', 2);
  const { stdout, command } = capture();
  await command.run([all, some, '--json']);
  const loose = JSON.parse(stdout.join('')) as Comparison;
  assert.match(loose.warnings.join('\n'), /saw different tasks/);
  assert.deepEqual(loose.rows.filter((r) => r.arm === 'tools').map((r) => r.n), [6, 2]);

  const strict = capture();
  await strict.command.run([all, some, '--json', '--common']);
  const common = JSON.parse(strict.stdout.join('')) as Comparison;
  assert.equal(common.common, true);
  assert.deepEqual(common.rows.filter((r) => r.arm === 'tools').map((r) => r.n), [2, 2]);
  assert.deepEqual(common.rows.filter((r) => r.arm === 'tools').map((r) => r.acc), [1, 1], 'the direct model is right on the first tasks');
});

test('one tasks file reached by two paths is the same tasks: no warning, since its bytes (sha256) decide', async () => {
  const elsewhere = await mkdtemp(join(tmpdir(), 'vistool-tasks-link-'));
  await symlink(dirname(data.file), join(elsewhere, 'tasks'));
  const direct = await evaluate('good', 6);
  const linked = await evaluate('direct', 6, join(elsewhere, 'tasks', 'tasks.jsonl'));
  const { stdout, command } = capture();
  await command.run([direct, linked, '--json']);
  const comparison = JSON.parse(stdout.join('')) as Comparison;
  assert.deepEqual(comparison.warnings, []);
  // Other bytes are another tasks file, even with the same tasks in it: still flagged.
  const copy = join(dirname(data.file), 'tasks-with-a-blank-line.jsonl');
  await writeFile(copy, (await readFile(data.file, 'utf8')) + '\n');
  const different = await evaluate('good', 6, copy);
  const again = capture();
  await again.command.run([direct, different, '--json']);
  assert.match((JSON.parse(again.stdout.join('')) as Comparison).warnings.join('\n'), /saw different tasks/);
});

test('eval compare refuses a folder that is not an eval, saying what it expected', async () => {
  const notEval = await mkdtemp(join(tmpdir(), 'vistool-not-eval-'));
  await writeFile(join(notEval, 'results.json'), JSON.stringify({ evaluations: {} }));
  const { command } = capture();
  await assert.rejects(command.run([notEval]), (err: unknown) => err instanceof UsageError && /not a vistool eval results document/.test(err.message));
  await assert.rejects(command.run([join(notEval, 'missing')]), (err: unknown) => err instanceof UsageError && /is '.*' an eval output folder/.test(err.message));
});
