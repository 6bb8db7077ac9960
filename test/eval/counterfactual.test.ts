/**
 * `vistool eval --counterfactual` against the scripted OpenAI-compatible server (the one stand-in
 * for a hosted model; test/eval/scripted-chat-server.ts). The scripted model's behaviour is chosen
 * per task so that the expected tool effect follows from the task positions alone:
 *
 *   position % 3 == 0  answers right at once, no call            → not replayed, unchanged
 *   otherwise, odd     calls a tool, then answers right blind    → replayed, unchanged
 *   otherwise, even    calls a tool, answers right only when the → replayed, wrong when withheld
 *                      image it was last shown is not the task's
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAIChatPolicy } from '../../env/eval/chat-policy.js';
import { runChatEval, type ChatEvalOptions } from '../../env/eval/run-eval.js';
import type { CompletedResult, TaskResult } from '../../env/eval/task-result.js';
import type { Trajectory } from '../../env/episodes/trajectory.js';
import { pairedDifference } from '../../protocol/eval-summary.js';
import { startScriptedChatServer, type ChatScript, type ScriptedChatServer, type SeenRequest } from './scripted-chat-server.js';
import { generateTasks, goldText, hermesCall, taskOf, type GeneratedTasks } from './scripted-model.js';

let data: GeneratedTasks;
const servers: ScriptedChatServer[] = [];

before(async () => {
  data = await generateTasks(10);
});

after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

type Behaviour = 'no_call' | 'blind' | 'looks';
const behaviourAt = (position: number): Behaviour => (position % 3 === 0 ? 'no_call' : position % 2 === 1 ? 'blind' : 'looks');

function lookingModel(request: SeenRequest) {
  const task = taskOf(request, data);
  const behaviour = behaviourAt(data.tasks.indexOf(task));
  if (request.tools && request.turn === 0 && behaviour !== 'no_call') return { text: hermesCall(task) };
  const sawEdit = request.images.length > 1 && request.images[request.images.length - 1] !== request.images[0];
  const right = !request.tools || behaviour !== 'looks' || sawEdit;
  return { text: `<answer>${right ? goldText(task) : 'Atlantis'}</answer>` };
}

async function serve(script: ChatScript): Promise<ScriptedChatServer> {
  const server = await startScriptedChatServer(script);
  servers.push(server);
  return server;
}

function options(server: ScriptedChatServer, out: string, overrides: Partial<ChatEvalOptions> = {}): ChatEvalOptions {
  return {
    policy: new OpenAIChatPolicy({
      baseUrl: server.url, model: 'scripted', apiKeyEnv: 'VISTOOL_TEST_KEY', env: { VISTOOL_TEST_KEY: 'sk-test-123' }, temperature: 0, maxTokens: 256,
      timeoutMs: 5000, maxRetries: 1, backoffInitialMs: 5, backoffMaxMs: 20, retryAfterMaxMs: 1000,
    }),
    // One name for every scripted server, so that a rerun against a new one resumes.
    policyName: 'openai:scripted',
    label: 'scripted',
    tasksFile: data.file,
    arms: ['tools', 'no_tools'],
    limit: null,
    concurrency: 1,
    maxTurns: 4,
    temperature: 0,
    maxTokens: 256,
    out,
    rewardConfig: {},
    retryFailed: false,
    progress: () => {},
    counterfactual: true,
    ...overrides,
  };
}

const lines = async (path: string): Promise<unknown[]> => (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown);
const outDir = () => mkdtemp(join(tmpdir(), 'vistool-eval-cf-'));

/** What the task positions say: 4 not replayed, 3 replayed and unchanged, 3 replayed and wrong when withheld. */
const expected = () => {
  const behaviours = data.tasks.map((_, i) => behaviourAt(i));
  const changed = behaviours.filter((b) => b === 'looks').length;
  const replayed = behaviours.filter((b) => b !== 'no_call').length;
  return { n: data.tasks.length, changed, replayed, table: { both: data.tasks.length - changed, onlyFirst: changed, onlySecond: 0, neither: 0 } };
};

test('--counterfactual replays each tools-arm episode with a successful call, results withheld, and reports the tool effect', async () => {
  const server = await serve(lookingModel);
  const out = await outDir();
  const { document } = await runChatEval(options(server, out));
  const want = expected();
  assert.deepEqual([want.n, want.replayed, want.changed], [10, 6, 3], 'the fixture has the mix the comments say');

  const results = (await lines(join(out, 'results.jsonl'))) as TaskResult[];
  const tools = results.filter((r): r is CompletedResult => r.arm === 'tools' && r.status === 'ok');
  assert.equal(tools.length, 10);
  for (const r of tools) {
    const behaviour = behaviourAt(data.tasks.findIndex((t) => t.id === r.task_id));
    assert.equal(r.correct_relaxed, true, 'every real tools-arm run is right');
    if (behaviour === 'no_call') assert.equal(r.counterfactual, null, `${r.task_id}: no successful call, not replayed`);
    else if (behaviour === 'blind') assert.deepEqual(r.counterfactual, { answer: r.answer, correct: true, changed: false });
    else assert.deepEqual(r.counterfactual, { answer: 'Atlantis', correct: false, changed: true });
  }
  for (const r of results.filter((x) => x.arm === 'no_tools')) assert.equal('counterfactual' in r, false, 'the no-tools arm is never replayed');

  // The trajectory records carry the same replay, and only where one ran.
  const rollouts = (await lines(join(out, 'rollouts', 'step-000000.jsonl'))) as (Trajectory & { arm: string })[];
  for (const record of rollouts.filter((r) => r.arm === 'tools')) {
    const line = tools.find((r) => r.task_id === record.prompt_id);
    assert.deepEqual(record.counterfactual, line?.counterfactual ?? undefined);
  }

  // The replay forced the original call turn and showed the unedited image after it.
  const replays = server.requests.filter((r) => r.tools && r.turn === 1 && r.images.length === 2 && r.images[1] === r.images[0]);
  assert.equal(replays.length, want.replayed, 'one greedy continuation per replay, after the forced call');
  for (const request of replays) {
    const assistant = request.body.messages.filter((m) => m.role === 'assistant');
    assert.deepEqual(assistant.map((m) => m.content), [hermesCall(taskOf(request, data))], 'the original call turn, word for word');
  }

  const effect = document.arms.tools?.all.tool_effect;
  const paired = pairedDifference(want.table);
  assert.ok(effect);
  assert.equal(effect.n, 10);
  assert.equal(effect.replayed, 6);
  assert.ok(Math.abs(effect.effect - 0.3) < 1e-12);
  assert.deepEqual(effect.ci95, paired.ci95);
  assert.equal(effect.answer_changed_rate, 0.5);
  assert.equal(effect.method, 'newcombe-paired');
  assert.equal(document.arms.no_tools?.all.tool_effect, null);
  const metrics = document.evaluations.scripted?.metrics ?? {};
  assert.ok(Math.abs((metrics['eval/tool_effect'] ?? NaN) - 0.3) < 1e-12);
  assert.equal(metrics['eval/tool_effect_lo'], paired.ci95[0]);
  assert.equal(metrics['eval/tool_effect_hi'], paired.ci95[1]);
  assert.equal(metrics['eval/answer_changed_rate'], 0.5);
  assert.equal(metrics['eval/counterfactual_n'], 6);
});

test('a killed --counterfactual eval resumes without redoing finished replays, and a rerun without it is refused', async () => {
  const out = await outDir();
  const first = await serve(lookingModel);
  const controller = new AbortController();
  const progress = (line: string) => {
    if (line.startsWith('eval: 4/')) controller.abort();
  };
  const partial = await runChatEval(options(first, out, { signal: controller.signal, progress }));
  assert.equal(partial.interrupted, true);
  const done = ((await lines(join(out, 'results.jsonl'))) as TaskResult[]).filter((r) => r.arm === 'tools').map((r) => r.task_id);
  assert.ok(done.length >= 4 && done.length < 10, `the first run stopped part-way (${done.length} tasks)`);

  await assert.rejects(runChatEval(options(first, out, { counterfactual: false })), /counterfactual: was true, now false/);

  const second = await serve(lookingModel);
  const { document } = await runChatEval(options(second, out));
  const askedAgain = new Set(second.requests.map((r) => taskOf(r, data).id));
  for (const id of done) assert.equal(askedAgain.has(id), false, `${id} (and its replay) was finished and is not asked again`);
  assert.equal(document.complete, true);
  const effect = document.arms.tools?.all.tool_effect;
  assert.ok(effect && Math.abs(effect.effect - 0.3) < 1e-12 && effect.replayed === 6 && effect.answer_changed_rate === 0.5);
  const results = (await lines(join(out, 'results.jsonl'))) as TaskResult[];
  assert.equal(results.length, 20, 'one line per task and arm');
});

test('--counterfactual needs a greedy run', async () => {
  const server = await serve(lookingModel);
  await assert.rejects(runChatEval(options(server, await outDir(), { temperature: 0.7 })), /greedy.*temperature 0/);
});
