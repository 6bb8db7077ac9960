/**
 * `vistool eval` opens every episode with the presentation of the policy's run config, so a policy
 * is evaluated on the episodes it was trained on: the system turn of each arm, the view that hides
 * earlier images, the turn and call limits and the reply budget (env/eval/eval-settings.ts). An
 * `openai:` policy names its run config with --run-config; flags override single settings; a rerun
 * with another presentation is refused. The policy is a scripted OpenAI-compatible server (the one
 * stand-in for a hosted model); it knows a task by its question, since the view can hide the image.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEvalCommand } from '../../env/cli/eval.js';
import { UsageError } from '../../env/cli/command.js';
import type { ResultsDocument } from '../../env/eval/results-document.js';
import { sha256 } from '../../env/eval/run-record.js';
import { startScriptedChatServer, type ScriptedChatServer } from './scripted-chat-server.js';
import { generateTasks, goldText, hermesCall, type GeneratedTasks } from './scripted-model.js';

const ARMS = { tools: 'Tools on: you may call one.', no_tools: 'Tools off: answer directly.' };
let data: GeneratedTasks;
let server: ScriptedChatServer;
let runConfig: string;

before(async () => {
  data = await generateTasks(3, 41);
  server = await startScriptedChatServer((request) => {
    const task = data.tasks.find((t) => t.question === request.question);
    if (!task) throw new Error(`no task asks ${request.question}`);
    const system = request.body.messages[0]?.content;
    return request.turn === 0 && system === ARMS.tools ? { text: hermesCall(task) } : { text: `<answer>${goldText(task)}</answer>` };
  });
  runConfig = join(await mkdtemp(join(tmpdir(), 'vistool-eval-presentation-')), 'run.vistool.json');
  await writeFile(runConfig, JSON.stringify({
    policy: { model: 'micro', system_prompt: ARMS, view: { latest_images: 1 } },
    env: { max_turns: 3, max_tool_calls: 2 },
    eval: { max_new_tokens: 40 },
  }));
});

after(async () => {
  await server.close();
});

async function evalCli(args: string[]): Promise<{ code: number | undefined; progress: string }> {
  const progress: string[] = [];
  const command = createEvalCommand({ stdout: { write: () => true }, stderr: { write: (t: string) => progress.push(t) } });
  const code = await command.run(['--policy', `openai:${server.url}#scripted`, '--tasks', data.file, '--api-key-env', 'NONE', ...args]);
  return { code: code ?? undefined, progress: progress.join('') };
}

test("--run-config: each arm reads the run's system turn, later turns the view, and replies get its budget", async () => {
  const out = await mkdtemp(join(tmpdir(), 'vistool-eval-out-'));
  server.requests.length = 0;
  const { code, progress } = await evalCli(['--out', out, '--run-config', runConfig]);
  assert.equal(code, 0, progress);
  assert.match(progress, /the presentation of .*run\.vistool\.json/);
  const requests = server.requests;
  assert.ok(requests.length >= 9, 'three tasks: two turns with tools, one without');
  for (const request of requests) {
    assert.equal(request.body.max_tokens, 40, "the run config's eval.max_new_tokens");
    assert.ok([ARMS.tools, ARMS.no_tools].includes(request.body.messages[0]?.content as string));
  }
  const second = requests.filter((r) => r.turn === 1);
  assert.equal(second.length, 3);
  for (const request of second) {
    const user = request.body.messages[1]?.content as { type: string; text?: string }[];
    assert.deepEqual(user.map((p) => p.text ?? p.type), ['(earlier image)', `Question: ${request.question}`]);
    assert.equal(request.images.length, 1, 'only the edited image is sent');
  }
  for (const request of requests.filter((r) => r.turn === 0)) assert.equal(request.images.length, 1, 'the task image');

  const document = JSON.parse(await readFile(join(out, 'results.json'), 'utf8')) as ResultsDocument;
  assert.deepEqual(document.presentation, { system_prompt: ARMS, view: { latest_images: 1, images_first: false } });
  assert.equal(document.tasks_sha256, sha256(await readFile(data.file)));
  assert.equal(document.evaluations[document.label]?.metrics['eval/acc_tools'], 1);
  const rollouts = (await readFile(join(out, 'rollouts', 'step-000000.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { arm: string; opening: { role: string; content: { text?: string }[] }[] });
  for (const rollout of rollouts) assert.equal(rollout.opening[0]?.content[0]?.text, rollout.arm === 'tools' ? ARMS.tools : ARMS.no_tools);

  // The same folder with another system turn is another eval: refused, naming what changed.
  const again = await evalCli(['--out', out, '--run-config', runConfig, '--system-prompt', '']).catch((err: unknown) => err);
  assert.ok(again instanceof Error && /presentation_sha256: was /.test(again.message), String(again));
});

test('flags override the run config; without one the env presents its own system turn and every image', async () => {
  const out = await mkdtemp(join(tmpdir(), 'vistool-eval-out-'));
  server.requests.length = 0;
  const { code, progress } = await evalCli(['--out', out, '--tools', 'on', '--limit', '1', '--system-prompt', 'Be brief.', '--images-first']);
  assert.equal(code, 0, progress);
  assert.match(progress, /the env's own presentation/);
  const [first] = server.requests;
  assert.equal(first?.body.messages[0]?.content, 'Be brief.');
  const document = JSON.parse(await readFile(join(out, 'results.json'), 'utf8')) as ResultsDocument;
  assert.deepEqual(document.presentation, { system_prompt: 'Be brief.', view: { latest_images: null, images_first: true } });
});

test('a run config flag for the wrong kind of policy, or an unreadable one, is a usage error that says what to give', async () => {
  const command = createEvalCommand({ stdout: { write: () => true }, stderr: { write: () => true } });
  const base = ['--tasks', data.file, '--out', await mkdtemp(join(tmpdir(), 'vistool-eval-out-'))];
  await assert.rejects(command.run(['--policy', 'checkpoint:/nowhere', '--run-config', runConfig, ...base]), (e: unknown) => e instanceof UsageError && /--run-config is for openai: policies/.test(e.message));
  await assert.rejects(command.run(['--policy', `openai:${server.url}#m`, '--trainer-config', runConfig, ...base]), (e: unknown) => e instanceof UsageError && /--trainer-config is for checkpoint: policies/.test(e.message));
  await assert.rejects(command.run(['--policy', `openai:${server.url}#m`, '--run-config', '/nowhere.json', ...base]), (e: unknown) => e instanceof UsageError && /cannot read --run-config \/nowhere\.json/.test(e.message));
  await assert.rejects(command.run(['--policy', `openai:${server.url}#m`, '--latest-images', '0', ...base]), (e: unknown) => e instanceof UsageError && /--latest-images must be a whole number from 1 to 1000/.test(e.message));
  const bad = join(await mkdtemp(join(tmpdir(), 'vistool-eval-bad-')), 'bad.json');
  await writeFile(bad, JSON.stringify({ policy: { view: { latest_images: 0 } } }));
  await assert.rejects(command.run(['--policy', `openai:${server.url}#m`, '--run-config', bad, ...base]), (e: unknown) => e instanceof UsageError && /policy\.view\.latest_images/.test(e.message));
});
