import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAIChatPolicy } from '../../env/eval/chat-policy.js';
import { runChatEval } from '../../env/eval/run-eval.js';
import type { CompletedResult } from '../../env/eval/task-result.js';
import { parseNumber } from '../../env/rewards/numbers.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { startScriptedChatServer, type ScriptedChatServer } from './scripted-chat-server.js';
import { generateTasks, goldText, taskOf, type GeneratedTasks } from './scripted-model.js';

let data: GeneratedTasks;
let server: ScriptedChatServer;
let nudged: TaskRecord[];

/** A numeric gold that a 2% nudge keeps within the relaxed 5% (not a year, not zero). */
function nudgeable(task: TaskRecord): boolean {
  const n = typeof task.answer === 'string' ? parseNumber(task.answer) : null;
  return n !== null && n.value !== 0 && !(Number.isInteger(n.value) && n.value >= 1000 && n.value <= 2100);
}

before(async () => {
  data = await generateTasks(12, 47);
  nudged = data.tasks.filter(nudgeable).slice(0, 3);
  assert.ok(nudged.length >= 2, 'the generated tasks include numeric answers');
  server = await startScriptedChatServer((request) => {
    if (request.images.length === 0) {
      // The judge: a strict one, YES only when the student's answer is written as the reference.
      const prompt = JSON.stringify(request.body.messages);
      const gold = /Reference answer: (.*?)\\n/u.exec(prompt)?.[1];
      const prediction = /Student's answer: (.*?)\\n/u.exec(prompt)?.[1];
      return { text: gold !== undefined && gold === prediction ? '<|YES|>' : '<|NO|>' };
    }
    const task = taskOf(request, data);
    const answer = nudged.includes(task) ? String(Math.round(Number(goldText(task)) * 1.02 * 1000) / 1000) : goldText(task);
    return { text: `<answer>${answer}</answer>` };
  });
});

after(async () => {
  await server.close();
});

test('a 2% numeric miss is right by relaxed accuracy, wrong by exact accuracy, and the judge configured in the reward config disagrees with the rule there', async () => {
  const out = await mkdtemp(join(tmpdir(), 'vistool-eval-judge-'));
  const { document } = await runChatEval({
    policy: new OpenAIChatPolicy({ baseUrl: server.url, model: 'scripted', apiKeyEnv: 'NONE', temperature: 0, maxTokens: 64, timeoutMs: 5000, maxRetries: 0, backoffInitialMs: 1, backoffMaxMs: 1, retryAfterMaxMs: 1 }),
    policyName: `openai:${server.url}#scripted`,
    label: 'judged',
    tasksFile: data.file,
    arms: ['no_tools'],
    limit: null,
    concurrency: 2,
    maxTurns: 2,
    temperature: 0,
    maxTokens: 64,
    out,
    rewardConfig: { judge: { enabled: true, base_url: server.url, model: 'judge', max_retries: 0 } },
    retryFailed: false,
    progress: () => {},
  });
  const results = (await readFile(join(out, 'results.jsonl'), 'utf8')).split('\n').filter((l) => l).map((l) => JSON.parse(l) as CompletedResult);
  for (const r of results) {
    const wasNudged = nudged.some((t) => t.id === r.task_id);
    assert.equal(r.correct_relaxed, true, `${r.task_id}: relaxed`);
    assert.equal(r.correct_exact, !wasNudged, `${r.task_id}: exact`);
    assert.equal(r.judge, !wasNudged, `${r.task_id}: judge`);
  }
  const s = document.arms.no_tools?.all;
  const n = data.tasks.length;
  assert.equal(s?.acc_relaxed, 1);
  assert.equal(s?.acc_exact, (n - nudged.length) / n);
  assert.equal(s?.judged, n);
  assert.equal(s?.judge_agreement, (n - nudged.length) / n);
  assert.equal(document.evaluations.judged?.metrics['eval/judge_agreement_no_tools'], (n - nudged.length) / n);
});
