import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { contentHash } from '../../env/core/image.js';
import { OpenAIChatPolicy } from '../../env/eval/chat-policy.js';
import { runChatEval, type ChatEvalOptions } from '../../env/eval/run-eval.js';
import type { CompletedResult, TaskResult } from '../../env/eval/task-result.js';
import type { AssistantTurn, Trajectory } from '../../env/episodes/trajectory.js';
import { evalResultsFromDocument } from '../../env/runs/evaluations.js';
import { RunSource } from '../../env/runs/run-source.js';
import { groupRollouts } from '../../webview/viewer/groups.js';
import { startScriptedChatServer, type ChatScript, type ScriptedChatServer } from './scripted-chat-server.js';
import { answeringModel, generateTasks, taskOf, type GeneratedTasks } from './scripted-model.js';

let data: GeneratedTasks;
const servers: ScriptedChatServer[] = [];

before(async () => {
  data = await generateTasks(10);
});

after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(script: ChatScript): Promise<ScriptedChatServer> {
  const server = await startScriptedChatServer(script);
  servers.push(server);
  return server;
}

function options(server: ScriptedChatServer, out: string, overrides: Partial<ChatEvalOptions> = {}): ChatEvalOptions {
  return {
    policy: new OpenAIChatPolicy({
      baseUrl: server.url,
      model: 'scripted',
      apiKeyEnv: 'VISTOOL_TEST_KEY',
      env: { VISTOOL_TEST_KEY: 'sk-test-123' },
      temperature: 0,
      maxTokens: 256,
      timeoutMs: 5000,
      maxRetries: 3,
      backoffInitialMs: 5,
      backoffMaxMs: 20,
      retryAfterMaxMs: 1000,
    }),
    policyName: `openai:${server.url}#scripted`,
    label: 'scripted',
    tasksFile: data.file,
    arms: ['tools', 'no_tools'],
    limit: null,
    concurrency: 3,
    maxTurns: 4,
    temperature: 0,
    maxTokens: 256,
    out,
    rewardConfig: {},
    retryFailed: false,
    progress: () => {},
    ...overrides,
  };
}

const lines = async (path: string): Promise<unknown[]> => (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown);
const outDir = () => mkdtemp(join(tmpdir(), 'vistool-eval-out-'));

test('hermes tool calls: --tools both plays every task in two arms through the engine and reports each arm', async () => {
  const server = await serve(answeringModel(data, 'hermes'));
  const out = await outDir();
  const { document } = await runChatEval(options(server, out));

  const results = (await lines(join(out, 'results.jsonl'))) as TaskResult[];
  assert.equal(results.length, 20);
  assert.ok(results.every((r) => r.status === 'ok'));
  const tools = document.arms.tools?.all;
  const noTools = document.arms.no_tools?.all;
  assert.ok(tools && noTools);
  assert.equal(tools.n, 10);
  assert.equal(tools.acc_relaxed, 1);
  assert.equal(tools.tool_call_rate, 1);
  assert.equal(tools.turns_mean, 2);
  assert.equal(noTools.acc_relaxed, 0.5, 'the script answers right without tools for every second task');
  assert.equal(noTools.tool_call_rate, 0);
  assert.equal(noTools.turns_mean, 1);
  assert.equal(document.complete, true);
  // The dashboard reads the same file (env/runs/evaluations.ts) and finds both arms.
  const [evaluation] = evalResultsFromDocument(JSON.parse(await readFile(join(out, 'results.json'), 'utf8')), 'results.json', null);
  assert.equal(evaluation?.label, 'scripted');
  assert.equal(evaluation?.metrics['eval/acc_tools'], 1);
  assert.equal(evaluation?.metrics['eval/acc_no_tools'], 0.5);
  assert.equal(evaluation?.metrics['eval/tool_call_rate'], 1);
  assert.equal(evaluation?.metrics['eval/n'], 10);
  // Per kind and difficulty, the slices add up to the whole.
  const kinds = Object.values(document.arms.tools?.by_kind ?? {});
  assert.equal(kinds.reduce((s, k) => s + k.n, 0), 10);
  assert.equal(Object.values(document.arms.tools?.by_difficulty ?? {}).reduce((s, k) => s + k.n, 0), 10);
  // The key travels in the Authorization header only.
  assert.equal(server.requests[0]?.headers.authorization, 'Bearer sk-test-123');
});

test('the edited image comes back to the model as a user turn with a data URL whose bytes are the tool output', async () => {
  const server = await serve(answeringModel(data, 'hermes'));
  const out = await outDir();
  await runChatEval(options(server, out, { arms: ['tools'], limit: 2, concurrency: 1 }));
  const records = (await lines(join(out, 'rollouts', 'step-000000.jsonl'))) as Trajectory[];
  const second = server.requests.find((r) => r.tools && r.turn === 1);
  assert.ok(second, 'a second turn was asked for');
  const last = second.body.messages[second.body.messages.length - 1];
  assert.equal(last?.role, 'user', 'tool observations are sent as user turns');
  assert.match(JSON.stringify(last?.content), /OBSERVATION: /);
  const sentImage = second.images[second.images.length - 1] ?? '';
  assert.match(sentImage, /^data:image\/png;base64,/);
  const task = taskOf(second, data);
  const record = records.find((r) => r.prompt_id === task.id);
  const call = (record?.turns[0] as AssistantTurn | undefined)?.calls[0];
  assert.equal(call?.ok, true);
  assert.equal(contentHash(Buffer.from(sentImage.slice('data:image/png;base64,'.length), 'base64')), call?.image_out);
  // ... and the image is in the eval folder under its hash, where the viewer looks for it.
  assert.ok((await readdir(join(out, 'images'))).includes(`${call?.image_out}.png`));
});

test('ReFocus python blocks and structured tool_calls are parsed by the engine like hermes calls', async () => {
  for (const format of ['refocus', 'structured'] as const) {
    const server = await serve(answeringModel(data, format));
    const out = await outDir();
    const { document } = await runChatEval(options(server, out, { arms: ['tools'], limit: 4 }));
    const tools = document.arms.tools?.all;
    assert.equal(tools?.tool_call_rate, 1, `${format}: every task made a successful call`);
    assert.equal(tools?.acc_relaxed, 1, `${format}: every answer was read`);
    assert.equal(tools?.errors.E1.count, 0, `${format}: no malformed calls`);
  }
});

test('the viewer opens an eval folder like a training run: status, evaluations, one step whose prompt groups pair the tools and no-tools arms', async () => {
  const server = await serve(answeringModel(data, 'hermes'));
  const out = await outDir();
  await runChatEval(options(server, out, { limit: 4 }));
  const source = new RunSource('eval', out);
  await source.refresh();
  const summary = source.summary();
  assert.equal(summary.status, 'finished');
  assert.deepEqual(summary.problems, []);
  assert.equal(summary.rolloutSteps, 1);
  assert.deepEqual(summary.evaluations.map((e) => [e.label, e.metrics['eval/acc_tools'], e.metrics['eval/acc_no_tools']]), [['scripted', 1, 0.5]]);
  assert.deepEqual((await source.stepFiles()).map((s) => s.file), ['rollouts/step-000000.jsonl']);
  const index = await (await source.stepIndex(0)).index('eval');
  assert.deepEqual(index.skipped, []);
  const groups = groupRollouts(index.rollouts);
  assert.equal(groups.length, 4, 'one prompt group per task');
  for (const group of groups) {
    assert.deepEqual(group.rollouts.map((r) => r.group).sort(), [0, 1], 'group 0 = tools arm, 1 = no tools');
    assert.deepEqual(group.gold, data.tasks.find((t) => t.id === group.promptId)?.answer);
    assert.equal(group.rollouts.find((r) => r.group === 0)?.toolCalls, 1);
    assert.equal(group.rollouts.find((r) => r.group === 1)?.toolCalls, 0);
  }
  const record = (await (await source.stepIndex(0)).record(0)) as unknown as Trajectory & { arm: string };
  assert.equal(typeof record.reward, 'number');
  assert.ok(['tools', 'no_tools'].includes(record.arm));
});

test('garbage replies become E1 errors the model sees, the episode runs to the turn limit, and the task counts as answered wrong', async () => {
  const server = await serve(() => ({ text: 'lorem ipsum {{{ not a call' }));
  const out = await outDir();
  const { document } = await runChatEval(options(server, out, { limit: 3, maxTurns: 3 }));
  const tools = document.arms.tools?.all;
  assert.equal(tools?.completed, 3);
  assert.equal(tools?.acc_relaxed, 0);
  assert.equal(tools?.answer_rate, 0);
  assert.equal(tools?.turns_mean, 3);
  assert.equal(tools?.errors.E1.count, 9);
  assert.equal(tools?.errors.E1.share, 1);
  assert.equal(tools?.errors.E1.rate, 1);
  const results = (await lines(join(out, 'results.jsonl'))) as CompletedResult[];
  assert.ok(results.every((r) => r.end_reason === 'max_turns'));
  // The error observation reached the model as a user turn.
  const later = server.requests.find((r) => r.turn === 1);
  assert.match(JSON.stringify(later?.body.messages.at(-1)?.content), /ERROR \[E1\]/);
});

test('429 with Retry-After and 500s are retried; a task whose server keeps failing is recorded as failed with the reason', async () => {
  const model = answeringModel(data, 'hermes');
  const attempts = new Map<string, number>();
  const doomed = data.tasks[1];
  const server = await serve((request) => {
    const task = taskOf(request, data);
    if (task === doomed) return { status: 503, body: '{"error":"overloaded"}' };
    const key = `${task.id}/${request.tools}/${request.turn}`;
    const n = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, n);
    if (n === 1 && request.turn === 0) return { status: 429, headers: { 'retry-after': '0.01' } };
    if (n === 2 && request.turn === 0 && request.tools) return { status: 500 };
    return model(request);
  });
  const out = await outDir();
  const { document } = await runChatEval(options(server, out, { limit: 4 }));
  const results = (await lines(join(out, 'results.jsonl'))) as TaskResult[];
  assert.equal(results.length, 8, 'every task/arm has a line, failed ones included');
  const failed = results.filter((r) => r.status === 'failed');
  assert.deepEqual(failed.map((r) => r.task_id), [doomed?.id, doomed?.id]);
  for (const f of failed) {
    assert.ok(f.status === 'failed');
    assert.match(f.reason, /answered 503/);
    assert.match(f.reason, /gave up after 4 attempt\(s\)/);
    assert.equal(f.requests, 4);
  }
  const ok = results.filter((r): r is CompletedResult => r.status === 'ok');
  assert.ok(ok.every((r) => r.correct_relaxed || r.arm === 'no_tools'));
  assert.equal(ok.filter((r) => r.arm === 'tools').every((r) => r.retries === 2), true, '429 then 500 on the first tools turn');
  assert.equal(document.arms.tools?.all.failed, 1);
  assert.equal(document.arms.tools?.all.acc_relaxed, 1, 'failed tasks are counted apart, not as wrong answers');
  assert.equal(document.complete, true);
});

test('a server that does not answer within the timeout fails the task with a timeout reason; a 200 that is not a completion fails it at once', async () => {
  const [hangs, garbled] = [data.tasks[0], data.tasks[2]];
  const model = answeringModel(data, 'hermes');
  const server = await serve((request) => {
    const task = taskOf(request, data);
    if (task === hangs) return { hang: true };
    if (task === garbled) return { rawBody: '<html>proxy error</html>' };
    return model(request);
  });
  const out = await outDir();
  const base = options(server, out);
  const policy = new OpenAIChatPolicy({ baseUrl: server.url, model: 'scripted', apiKeyEnv: 'NONE', temperature: 0, maxTokens: 64, timeoutMs: 300, maxRetries: 1, backoffInitialMs: 5, backoffMaxMs: 5, retryAfterMaxMs: 1000 });
  await runChatEval({ ...base, policy, arms: ['tools'], limit: 3 });
  const results = (await lines(join(out, 'results.jsonl'))) as TaskResult[];
  const byId = new Map(results.map((r) => [r.task_id, r]));
  const timedOut = byId.get(hangs?.id ?? '');
  assert.equal(timedOut?.status, 'failed');
  assert.match(timedOut?.status === 'failed' ? timedOut.reason : '', /timed out after 300 ms/);
  assert.equal(timedOut?.requests, 2, 'a timeout is retried');
  const bad = byId.get(garbled?.id ?? '');
  assert.match(bad?.status === 'failed' ? bad.reason : '', /not JSON: <html>proxy error<\/html>/);
  assert.equal(bad?.requests, 1, 'a body that is not a completion is not retried');
  assert.equal(byId.get(data.tasks[1]?.id ?? '')?.status, 'ok');
});

test('a task whose image cannot be read is recorded as failed in every arm with the path, and the others still run', async () => {
  const server = await serve(answeringModel(data, 'hermes'));
  const broken = data.tasks.slice(0, 3).map((t, i) => (i === 1 ? { ...t, image: 'images/no-such-file.png' } : t));
  const file = join(dirname(data.file), 'broken-tasks.jsonl');
  await writeFile(file, broken.map((t) => JSON.stringify(t) + '\n').join(''));
  const out = await outDir();
  const { document } = await runChatEval(options(server, out, { tasksFile: file }));
  const results = (await lines(join(out, 'results.jsonl'))) as TaskResult[];
  const failed = results.filter((r) => r.status === 'failed');
  assert.deepEqual(failed.map((r) => [r.task_id, r.arm]).sort(), [[broken[1]?.id, 'no_tools'], [broken[1]?.id, 'tools']]);
  for (const f of failed) assert.match(f.status === 'failed' ? f.reason : '', /cannot decode the task image .*no-such-file\.png/);
  assert.equal(document.arms.tools?.all.completed, 2);
  assert.equal(document.arms.tools?.all.failed, 1);
  assert.equal(document.complete, true, 'a failed task has its line: the eval is complete, with a failure');
});

test('on resume failed tasks stay failed and are not asked again, unless --retry-failed, whose new line then counts', async () => {
  const model = answeringModel(data, 'hermes');
  let down = true;
  const flaky = data.tasks[0];
  const server = await serve((request) => (down && taskOf(request, data) === flaky ? { status: 502 } : model(request)));
  const out = await outDir();
  const run = (retryFailed: boolean) => runChatEval(options(server, out, { limit: 3, arms: ['tools'], retryFailed }));
  assert.equal((await run(false)).document.arms.tools?.all.failed, 1);
  down = false;
  const before = server.requests.length;
  const kept = await run(false);
  assert.equal(server.requests.length, before, 'nothing was asked: every task has a line');
  assert.equal(kept.skipped, 3);
  assert.equal(kept.document.arms.tools?.all.failed, 1);
  const retried = await run(true);
  assert.equal(retried.ran, 1);
  assert.ok(server.requests.slice(before).every((r) => taskOf(r, data) === flaky), 'only the failed task was run again');
  assert.equal(retried.document.arms.tools?.all.failed, 0);
  assert.equal(retried.document.arms.tools?.all.acc_relaxed, 1);
  const results = (await lines(join(out, 'results.jsonl'))) as TaskResult[];
  assert.deepEqual(results.filter((r) => r.task_id === flaky?.id).map((r) => r.status), ['failed', 'ok'], 'the failure stays in the log; the later line counts');
});

test('a server that fails task after task stops the eval after N failures in a row, keeping what was recorded', async () => {
  const server = await serve(() => ({ status: 500 }));
  const out = await outDir();
  await assert.rejects(
    runChatEval(options(server, out, { concurrency: 1, stopAfterFailures: 3, arms: ['tools'] })),
    /3 task\/arm results in a row failed \(last: .*answered 500.*\); stopped .*--retry-failed/,
  );
  const results = (await lines(join(out, 'results.jsonl'))) as TaskResult[];
  assert.equal(results.length, 3);
  assert.ok(results.every((r) => r.status === 'failed'));
  const run = JSON.parse(await readFile(join(out, 'run.json'), 'utf8')) as { status: string; error: string };
  assert.equal(run.status, 'failed');
  assert.match(run.error, /in a row failed/);
  const summary = JSON.parse(await readFile(join(out, 'results.json'), 'utf8')) as { complete: boolean };
  assert.equal(summary.complete, false);
});

test('an eval folder another live process is writing to is refused; a stale record of a killed eval is not', async () => {
  const server = await serve(answeringModel(data, 'hermes'));
  const out = await outDir();
  await runChatEval(options(server, out, { limit: 1, arms: ['no_tools'] }));
  const record = JSON.parse(await readFile(join(out, 'run.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(out, 'run.json'), JSON.stringify({ ...record, status: 'running', pid: process.ppid }));
  await assert.rejects(runChatEval(options(server, out, { limit: 2, arms: ['no_tools'] })), new RegExp(`another eval \\(pid ${process.ppid}\\) is running`));
  await writeFile(join(out, 'run.json'), JSON.stringify({ ...record, status: 'running', pid: 2 ** 22 + 12345 }));
  const resumed = await runChatEval(options(server, out, { limit: 2, arms: ['no_tools'] }));
  assert.deepEqual([resumed.skipped, resumed.ran], [1, 1]);
});
