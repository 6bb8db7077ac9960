/**
 * The host side of the viewer's "Replay without the tool's result" (env/view/rollout-replay.ts,
 * the `replay/*` requests of protocol/panel/replay.ts through PanelBackend.handle), on a training
 * run recorded through the real engine (training-replay-run.ts), against the scripted
 * OpenAI-compatible server of the eval tests. That server is the one stand-in: the policy endpoint
 * is a true external boundary (a model served by another process); everything on this side of it —
 * the task lookup, the engine's episode with results withheld, the scoring — is the real code.
 *
 * The server's policy answers right only when the last image it is sent is not the task image (it
 * "looks" at the edit), or always right ("blind"); so whether the replay's answer changed, and what
 * it is, follows from the withholding alone and is known here without the code under test.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PanelBackend } from '../../env/view/panel-backend.js';
import { isLoopbackHost, parseReplayPolicy, ReplayPolicyError, replayPolicyState, type ReplayPolicy } from '../../env/view/replay-policy.js';
import type { ResponseMessage } from '../../protocol/panel/messages.js';
import type { ReplayAvailability, WithheldReplayResult } from '../../protocol/panel/replay.js';
import { startScriptedChatServer, type ChatScript, type ScriptedChatServer, type SeenRequest } from '../eval/scripted-chat-server.js';
import { goldText, hermesCall, taskOf } from '../eval/scripted-model.js';
import { writeTrainingReplayRun, type TrainingReplayRun } from './training-replay-run.js';

let run: TrainingReplayRun;
let root: string;
const servers: ScriptedChatServer[] = [];
const backends: PanelBackend[] = [];

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-rollout-replay-'));
  run = await writeTrainingReplayRun(join(root, 'train-run'));
});

after(async () => {
  for (const backend of backends) backend.stop();
  await Promise.all(servers.map((s) => s.close()));
  await rm(root, { recursive: true, force: true });
});

const lastImageIsEdited = (request: SeenRequest) => request.images.length > 1 && request.images[request.images.length - 1] !== request.images[0];

const looking = (request: SeenRequest) => ({ text: `<answer>${lastImageIsEdited(request) ? goldText(taskOf(request, run.data)) : 'Atlantis'}</answer>` });
const blind = (request: SeenRequest) => ({ text: `<answer>${goldText(taskOf(request, run.data))}</answer>` });

async function serve(script: ChatScript): Promise<ScriptedChatServer> {
  const server = await startScriptedChatServer(script);
  servers.push(server);
  return server;
}

function policyAt(server: ScriptedChatServer, options: { observationRole?: string } = {}): ReplayPolicy {
  return parseReplayPolicy(`openai:${server.url}#served-checkpoint`, options);
}

async function backendFor(dirs: string[], replayPolicy?: ReplayPolicy): Promise<PanelBackend> {
  const backend = new PanelBackend({ runs: dirs, ...(replayPolicy ? { replayPolicy: { policy: replayPolicy } } : {}) });
  await backend.start();
  backends.push(backend);
  return backend;
}

let nextId = 0;
async function ask<R>(backend: PanelBackend, method: string, params: unknown): Promise<{ ok: true; result: R } | { ok: false; message: string }> {
  const response = (await backend.handle({ kind: 'request', id: `t-${nextId++}`, method, params })) as ResponseMessage<R> | null;
  assert.ok(response, `${method} got no response`);
  return response.ok ? { ok: true, result: response.result } : { ok: false, message: response.error.message };
}

async function replay(backend: PanelBackend, line: number, runId = 'train-run'): Promise<WithheldReplayResult> {
  const answer = await ask<WithheldReplayResult>(backend, 'replay/withheld', { runId, step: 1, line });
  if (!answer.ok) assert.fail(`replay/withheld failed: ${answer.message}`);
  return answer.result;
}

/** Every file under a folder with its size and modification time: a replay must leave the run as it was. */
async function snapshot(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return Promise.all(entries.sort().map(async (name) => {
    const info = await stat(join(dir, name));
    return `${name} ${info.size} ${info.mtimeMs}`;
  }));
}

test('the fixture is what the replay needs: two rollouts whose call ran and that answered right after the edit, one without a call', () => {
  assert.deepEqual(run.records.map((r) => r.tool_calls), [1, 1, 0]);
  assert.deepEqual(run.records.map((r) => r.correct), [true, true, true]);
  assert.ok(run.records.every((r) => r.arm === undefined && r.opening !== undefined), 'training records, with the opening the policy read');
});

test('a policy that reads the edit answers otherwise without it: the recorded call is forced, its observation shows the unedited image with the same text, the answer changed', async () => {
  const server = await serve(looking);
  const backend = await backendFor([run.dir], policyAt(server));
  const before = await snapshot(run.dir);
  const record = run.records[0];
  assert.ok(record);
  const task = run.data.tasks.find((t) => t.id === record.prompt_id);
  assert.ok(task);

  const result = await replay(backend, 0);
  assert.deepEqual(result.replay, { answer: 'Atlantis', correct: false, changed: true });
  assert.equal(result.recordedAnswer, goldText(task));
  assert.equal(result.policy, `openai:${server.url}#served-checkpoint`);
  assert.equal(result.forcedTurns, 1, 'the turn of the first successful call');
  assert.equal(result.turns, 2, 'the forced call and one greedy answer');
  assert.equal(result.openingMatches, true, 'the replay opened with the messages the recorded episode read');
  assert.equal(result.requests, 1, 'only the continuation is asked; the forced turn is not');

  // What the policy was sent: the recorded call word for word, then the observation as a tool turn
  // (the trainer's policies read them so) with the recorded text and the task image, not the edit.
  assert.equal(server.requests.length, 1);
  const sent = server.requests[0] as SeenRequest;
  assert.equal(sent.body.temperature, 0, 'greedy');
  assert.equal(sent.body.model, 'served-checkpoint');
  const assistant = sent.body.messages.filter((m) => m.role === 'assistant');
  assert.deepEqual(assistant.map((m) => m.content), [hermesCall(task)]);
  const observation = sent.body.messages[sent.body.messages.length - 1];
  assert.equal(observation?.role, 'tool');
  const recordedObservation = record.turns.find((t) => t.role === 'tool');
  assert.ok(recordedObservation && recordedObservation.role === 'tool');
  const observationText = (observation?.content as { type: string; text?: string }[]).filter((p) => p.type === 'text').map((p) => p.text).join('\n');
  assert.equal(observationText, recordedObservation.text, 'the same observation text');
  assert.equal(sent.images.length, 2);
  assert.equal(sent.images[1], sent.images[0], 'the observation carries the unedited task image');

  assert.deepEqual(await snapshot(run.dir), before, 'nothing in the run directory was written or touched');
});

test('a policy that never reads the edit answers the same: unchanged and right', async () => {
  const server = await serve(blind);
  const backend = await backendFor([run.dir], policyAt(server));
  const task = run.data.tasks.find((t) => t.id === run.records[1]?.prompt_id);
  assert.ok(task);
  const result = await replay(backend, 1);
  assert.deepEqual(result.replay, { answer: goldText(task), correct: true, changed: false });
});

test('observations go as user turns when the host is told so (servers that refuse images in tool turns)', async () => {
  const server = await serve(looking);
  const backend = await backendFor([run.dir], policyAt(server, { observationRole: 'user' }));
  await replay(backend, 0);
  const sent = server.requests[0] as SeenRequest;
  assert.deepEqual(sent.body.messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
});

test('availability: the configured policy, or the reason there is none', async () => {
  const server = await serve(looking);
  const configured = await ask<ReplayAvailability>(await backendFor([run.dir], policyAt(server)), 'replay/availability', {});
  assert.deepEqual(configured, { ok: true, result: { available: true, policy: `openai:${server.url}#served-checkpoint`, reason: null } });

  const none = await backendFor([run.dir]);
  const unavailable = await ask<ReplayAvailability>(none, 'replay/availability', {});
  assert.ok(unavailable.ok);
  assert.equal(unavailable.result.available, false);
  assert.match(unavailable.result.reason ?? '', /no policy to replay with: give --policy openai:<url>#<model>/);
  const refused = await ask(none, 'replay/withheld', { runId: 'train-run', step: 1, line: 0 });
  assert.deepEqual(refused.ok, false);
  assert.match(!refused.ok ? refused.message : '', /no policy to replay with/);
  assert.equal(server.requests.length, 0);
});

test('what cannot be replayed says why, before any request: no successful call, an evaluation record, no config.json, a task not in the run, bad params', async () => {
  const server = await serve(looking);
  const backend = await backendFor([run.dir], policyAt(server));
  const noCall = await ask(backend, 'replay/withheld', { runId: 'train-run', step: 1, line: 2 });
  assert.match(!noCall.ok ? noCall.message : '', /made no successful tool call: there is no tool result to withhold/);
  const badParams = await ask(backend, 'replay/withheld', { runId: 'train-run', step: 1, line: -1 });
  assert.equal(badParams.ok, false);

  // Copies of the run, each broken one way.
  const copy = async (name: string, change: (dir: string) => Promise<void>) => {
    const dir = join(root, name);
    await cp(run.dir, dir, { recursive: true });
    await change(dir);
    return dir;
  };
  const stepFile = (dir: string) => join(dir, 'rollouts', 'step-000001.jsonl');
  const evalDir = await copy('eval-record', async (dir) => {
    const lines = (await readFile(stepFile(dir), 'utf8')).trim().split('\n').map((l) => ({ ...(JSON.parse(l) as object), arm: 'tools', label: 'after_rl' }));
    await writeFile(stepFile(dir), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  });
  const noConfig = await copy('no-config', (dir) => rm(join(dir, 'config.json')));
  const unknownTask = await copy('unknown-task', async (dir) => {
    const text = await readFile(stepFile(dir), 'utf8');
    await writeFile(stepFile(dir), text.replaceAll(`"prompt_id":"${run.records[0]?.prompt_id}"`, '"prompt_id":"no-such-task"'));
  });
  const many = await backendFor([evalDir, noConfig, unknownTask], policyAt(server));
  const failure = async (runId: string) => {
    const answer = await ask(many, 'replay/withheld', { runId, step: 1, line: 0 });
    return answer.ok ? 'answered' : answer.message;
  };
  assert.match(await failure('eval-record'), /an evaluation's record \(arm tools\).*vistool eval --counterfactual/);
  assert.match(await failure('no-config'), /has no config\.json/);
  assert.match(await failure('unknown-task'), /task 'no-such-task' is in none of the run's task files/);
  assert.equal(server.requests.length, 0, 'none of them asked the policy');
});

test('a run whose config changed since the rollout says the replay answered another prompt', async () => {
  const server = await serve(looking);
  const changed = join(root, 'changed-config');
  await cp(run.dir, changed, { recursive: true });
  const config = JSON.parse(await readFile(join(changed, 'config.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(changed, 'config.json'), JSON.stringify({ ...config, policy: { system_prompt: 'Answer briefly.' } }));
  const backend = await backendFor([changed], policyAt(server));
  const result = await replay(backend, 0, 'changed-config');
  assert.equal(result.openingMatches, false);
  assert.equal(server.requests[0]?.body.messages[0]?.content, 'Answer briefly.', 'the replay used the config as it is now');
});

test('a policy that fails is the replay\'s error, naming the endpoint', async () => {
  const server = await serve(() => ({ status: 400, body: '{"error": {"message": "model not loaded"}}' }));
  const backend = await backendFor([run.dir], policyAt(server));
  const answer = await ask(backend, 'replay/withheld', { runId: 'train-run', step: 1, line: 0 });
  assert.equal(answer.ok, false);
  assert.match(!answer.ok ? answer.message : '', /counterfactual replay: .*chat\/completions.*400/s);
});

test('the policy setting: an OpenAI-compatible URL on this machine unless allowed, never credentials, never a checkpoint', () => {
  const ok = parseReplayPolicy('openai:http://127.0.0.1:8123/v1/#ckpt');
  assert.deepEqual(ok, { baseUrl: 'http://127.0.0.1:8123/v1', model: 'ckpt', observationRole: 'tool', apiKeyEnv: 'VISTOOL_POLICY_API_KEY', description: 'openai:http://127.0.0.1:8123/v1#ckpt' });
  for (const host of ['127.0.0.1', '127.8.9.10', 'localhost', '[::1]']) assert.equal(isLoopbackHost(new URL(`http://${host}:1/`).hostname), true, host);
  for (const host of ['10.0.0.1', 'example.com', '128.0.0.1', '127.0.0.1.evil.com']) assert.equal(isLoopbackHost(new URL(`http://${host}:1/`).hostname), false, host);
  assert.throws(() => parseReplayPolicy('openai:https://api.example.com/v1#gpt'), (e: Error) => e instanceof ReplayPolicyError && /api\.example\.com is not this machine/.test(e.message));
  assert.equal(parseReplayPolicy('openai:https://api.example.com/v1#gpt', { allowRemote: true }).baseUrl, 'https://api.example.com/v1');
  assert.throws(() => parseReplayPolicy('openai:http://user:secret@127.0.0.1:1/v1#m'), /credentials/);
  assert.throws(() => parseReplayPolicy('checkpoint:runs/a/checkpoints/step-000010'), /serve-policy --checkpoint runs\/a\/checkpoints\/step-000010/);
  assert.throws(() => parseReplayPolicy('http://127.0.0.1:1/v1'), /not understood/);
  assert.throws(() => parseReplayPolicy('openai:ftp://127.0.0.1/v1#m'), /http or https/);
  assert.throws(() => parseReplayPolicy('openai:http://127.0.0.1:1/v1#m', { observationRole: 'system' }), /user or tool/);
  assert.throws(() => parseReplayPolicy('openai:http://127.0.0.1:1/v1#m', { apiKeyEnv: 'sk-live-123' }), /NAME of an environment variable/);
  // A host's setting: empty says how to give one, in that host's words.
  const empty = replayPolicyState('  ', { settingName: 'the setting vistool.viewer.replayPolicy' });
  assert.equal(empty.policy, null);
  assert.match(empty.policy === null ? empty.reason : '', /give the setting vistool\.viewer\.replayPolicy openai:<url>#<model>/);
  const remote = replayPolicyState('openai:http://10.1.2.3:8000/v1#m', { settingName: 'the setting vistool.viewer.replayPolicy' });
  assert.match(remote.policy === null ? remote.reason : '', /10\.1\.2\.3 is not this machine/);
});
