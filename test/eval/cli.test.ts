import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createEvalCommand } from '../../env/cli/eval.js';
import { UsageError } from '../../env/cli/command.js';
import type { TaskResult } from '../../env/eval/task-result.js';
import { startScriptedChatServer, type ScriptedChatServer } from './scripted-chat-server.js';
import { answeringModel, generateTasks, taskOf, type GeneratedTasks } from './scripted-model.js';

let data: GeneratedTasks;
let server: ScriptedChatServer;

before(async () => {
  data = await generateTasks(10, 23);
  const model = answeringModel(data, 'hermes');
  // Slow enough that a kill lands in the middle of the run.
  server = await startScriptedChatServer((request) => ({ ...model(request), delayMs: 60 }));
});

after(async () => {
  await server.close();
});

interface Child {
  /** Resolves with the exit code (null when killed by a signal) once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>;
  /** Resolves after the n-th progress line "eval: k/total ...". */
  afterResults(n: number): Promise<void>;
  kill(signal: NodeJS.Signals): void;
}

function runCli(args: string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', "require('./env/cli/eval.ts').evalCommand.run(process.argv.slice(1)).then((c) => { process.exitCode = c ?? 0; })", '--', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, VISTOOL_TEST_KEY: 'sk-cli' },
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  let stderr = '';
  let progress = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr += line + '\n';
    if (/^eval: \d+\/\d+ /u.test(line)) progress++;
    for (const w of waiters.filter((w) => progress >= w.n)) w.resolve();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout })));
  return {
    exited,
    // A child that exits before it gets there fails the test instead of hanging it.
    afterResults: (n) =>
      Promise.race([
        new Promise<void>((resolve) => waiters.push({ n, resolve })),
        exited.then(({ code }) => {
          if (progress < n) throw new Error(`the eval exited (${code}) after ${progress} result(s), before ${n}:\n${stderr}`);
        }),
      ]),
    kill: (signal) => child.kill(signal),
  };
}

const resultLines = async (out: string): Promise<TaskResult[]> =>
  (await readFile(join(out, 'results.jsonl'), 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as TaskResult);

test('a killed eval resumes from its results file: no task/arm is run twice and the final results are complete', async () => {
  const out = await mkdtemp(join(tmpdir(), 'vistool-eval-cli-'));
  const args = ['--policy', `openai:${server.url}#scripted`, '--tasks', data.file, '--out', out, '--concurrency', '2', '--api-key-env', 'VISTOOL_TEST_KEY'];

  const first = runCli(args);
  await first.afterResults(3);
  first.kill('SIGKILL');
  assert.equal((await first.exited).signal, 'SIGKILL');
  const doneBefore = new Set((await resultLines(out)).map((r) => `${r.task_id}/${r.arm}`));
  assert.ok(doneBefore.size >= 6 && doneBefore.size < 20, `killed part-way (${doneBefore.size} results)`);
  const runJson = JSON.parse(await readFile(join(out, 'run.json'), 'utf8')) as { status: string };
  assert.equal(runJson.status, 'running', 'a SIGKILLed eval could not mark itself; the rerun does');

  const requestsBefore = server.requests.length;
  const second = runCli(args);
  await second.afterResults(1);
  second.kill('SIGINT');
  const interrupted = await second.exited;
  assert.equal(interrupted.code, 130, 'Ctrl-C stops cleanly with exit 130');
  assert.equal((JSON.parse(await readFile(join(out, 'run.json'), 'utf8')) as { status: string }).status, 'interrupted');

  const third = runCli(args);
  const finished = await third.exited;
  assert.equal(finished.code, 0);

  const results = await resultLines(out);
  const keys = results.map((r) => `${r.task_id}/${r.arm}`);
  assert.equal(new Set(keys).size, keys.length, 'no task/arm has two result lines');
  assert.equal(keys.length, 20, 'every task in both arms');
  const rollouts = (await readFile(join(out, 'rollouts', 'step-000000.jsonl'), 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { prompt_id: string; arm: string });
  assert.deepEqual(rollouts.map((r) => `${r.prompt_id}/${r.arm}`).sort(), [...keys].sort(), 'one trajectory per result');
  const askedAgain = server.requests.slice(requestsBefore).map((r) => `${taskOf(r, data).id}/${r.tools ? 'tools' : 'no_tools'}`).filter((k) => doneBefore.has(k));
  assert.deepEqual(askedAgain, [], 'tasks finished before the kill were not asked again');
  const summary = JSON.parse(await readFile(join(out, 'results.json'), 'utf8')) as { complete: boolean; arms: { tools: { all: { n: number; acc_relaxed: number } } } };
  assert.equal(summary.complete, true);
  assert.equal(summary.arms.tools.all.n, 10);
  assert.equal(summary.arms.tools.all.acc_relaxed, 1);
  assert.match(finished.stdout, /tools\s+all\s+10\s+0\s+100\.0/u);
  assert.match(finished.stdout, /no_tools\s+all\s+10\s+0\s+50\.0/u);
  assert.equal((JSON.parse(await readFile(join(out, 'run.json'), 'utf8')) as { status: string }).status, 'finished');
});

test('a resume with another policy or task file is refused, naming what changed', async () => {
  const out = await mkdtemp(join(tmpdir(), 'vistool-eval-cli-'));
  const stderr: string[] = [];
  const io = { stdout: { write: () => true }, stderr: { write: (t: string) => stderr.push(t) } };
  const command = createEvalCommand(io);
  const base = ['--tasks', data.file, '--out', out, '--limit', '1', '--tools', 'off', '--api-key-env', 'VISTOOL_TEST_KEY'];
  assert.equal(await command.run(['--policy', `openai:${server.url}#scripted`, ...base]), 0);
  await assert.rejects(command.run(['--policy', `openai:${server.url}#other-model`, ...base]), /cannot be resumed with these options \(policy: was .*#scripted", now .*#other-model"\)/u);
});

test('usage errors: an API key in place of a variable name, a bad --tools, a policy without a model', async () => {
  const command = createEvalCommand({ stdout: { write: () => true }, stderr: { write: () => true } });
  const base = ['--tasks', data.file, '--out', '/tmp/unused'];
  await assert.rejects(command.run(['--policy', `openai:${server.url}#m`, ...base, '--api-key-env', 'sk-live-abc123']), (err: unknown) => err instanceof UsageError && /NAME of an environment variable/.test(err.message) && !err.message.includes('abc123'));
  await assert.rejects(command.run(['--policy', `openai:${server.url}#m`, ...base, '--tools', 'maybe']), (err: unknown) => err instanceof UsageError && /--tools must be on, off or both/.test(err.message));
  await assert.rejects(command.run(['--policy', `openai:${server.url}`, ...base]), (err: unknown) => err instanceof UsageError && /names no model/.test(err.message));
  await assert.rejects(command.run(['--policy', 'openai:http://user:secret@host/v1#m', ...base]), (err: unknown) => err instanceof UsageError && /credentials in the URL/.test(err.message));
});

test('--tasks takes the folder data gen wrote as well as its tasks.jsonl; a folder without one is a usage error', async () => {
  const { dirname } = await import('node:path');
  const out = await mkdtemp(join(tmpdir(), 'vistool-eval-dir-'));
  const lines: string[] = [];
  const command = createEvalCommand({ stdout: { write: (t: string) => lines.push(t) }, stderr: { write: () => true } });
  const code = await command.run(['--policy', `openai:${server.url}#m`, '--tasks', dirname(data.file), '--out', out, '--tools', 'on', '--limit', '2', '--api-key-env', 'VISTOOL_TEST_KEY']);
  assert.equal(code, 0);
  assert.equal((await resultLines(out)).length, 2);
  const empty = await mkdtemp(join(tmpdir(), 'vistool-eval-empty-'));
  await assert.rejects(command.run(['--policy', `openai:${server.url}#m`, '--tasks', empty, '--out', join(out, 'x')]), (err: unknown) => err instanceof UsageError && /is a folder without a tasks\.jsonl/.test(err.message));
  await assert.rejects(command.run(['--policy', `openai:${server.url}#m`, '--tasks', join(empty, 'nope'), '--out', join(out, 'y')]), (err: unknown) => err instanceof UsageError && /does not exist/.test(err.message));
});

test('an eval whose results mostly failed exits 1 and says how many; --max-failed-share sets the bar', async () => {
  // A policy endpoint that refuses every request: each task/arm result is a recorded failure.
  const broken = await startScriptedChatServer(() => ({ status: 400, body: JSON.stringify({ error: { message: 'model not loaded' } }) }));
  try {
    const run = async (out: string, extra: string[]) => {
      const progress: string[] = [];
      const command = createEvalCommand({ stdout: { write: () => true }, stderr: { write: (t: string) => progress.push(t) } });
      const code = await command.run(['--policy', `openai:${broken.url}#m`, '--tasks', data.file, '--out', out, '--tools', 'on', '--limit', '3',
        '--api-key-env', 'VISTOOL_TEST_KEY', '--max-retries', '0', '--stop-after-failures', '0', ...extra]);
      return { code, progress: progress.join('') };
    };
    const strict = await run(await mkdtemp(join(tmpdir(), 'vistool-eval-failed-')), []);
    assert.equal(strict.code, 1);
    assert.match(strict.progress, /FAILED: 3 of 3 results failed \(100\.0 %\), more than --max-failed-share 0\.1/);
    const lenient = await run(await mkdtemp(join(tmpdir(), 'vistool-eval-failed-')), ['--max-failed-share', '1']);
    assert.equal(lenient.code, 0);
    assert.match(lenient.progress, /3 of 3 task\/arm result\(s\) failed/);
    await assert.rejects(run(await mkdtemp(join(tmpdir(), 'vistool-eval-failed-')), ['--max-failed-share', '1.5']), (err: unknown) => err instanceof UsageError && /--max-failed-share must be a share from 0 to 1/.test(err.message));
  } finally {
    await broken.close();
  }
});
