import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJudgeReply } from '../../env/rewards/judge-verdict.js';
import { combineWithJudge } from '../../env/rewards/judge-combine.js';
import { backoffDelay, retryAfterMs } from '../../env/core/backoff.js';

const readings: [reply: string, verdict: boolean | 'garbage'][] = [
  ['<|YES|>', true],
  ['<|NO|>', false],
  ['Judgement: <|YES|>', true],
  ['  <|NO|>\n', false],
  ['{"correct": true}', true],
  ['{"correct": false, "reason": "different country"}', false],
  ['```json\n{"correct": true}\n```', true],
  ['The verdict is {"correct": false}.', false],
  ['<|YES|><|NO|>', 'garbage'],
  ['yes', 'garbage'],
  ['1', 'garbage'],
  ['{"correct": "true"}', 'garbage'],
  ['{"verdict": true}', 'garbage'],
  ['', 'garbage'],
];

for (const [reply, verdict] of readings) {
  test(`judge reply ${JSON.stringify(reply)} reads as ${String(verdict)}`, () => {
    const parsed = parseJudgeReply(reply);
    if (verdict === 'garbage') assert.ok('garbage' in parsed);
    else assert.deepEqual(parsed, { correct: verdict });
  });
}

test('combining with the judge: replace, average and either over the four agreements', () => {
  const right = { correct: true, score: 1, method: 'exact' as const };
  const wrong = { correct: false, score: 0, method: 'exact' as const };
  const yes = { status: 'ok' as const, correct: true, cached: false };
  const no = { status: 'ok' as const, correct: false, cached: false };
  const table = [
    [right, yes, 'replace', 1, true], [right, no, 'replace', 0, false], [wrong, yes, 'replace', 1, true], [wrong, no, 'replace', 0, false],
    [right, yes, 'average', 1, true], [right, no, 'average', 0.5, false], [wrong, yes, 'average', 0.5, false], [wrong, no, 'average', 0, false],
    [right, yes, 'either', 1, true], [right, no, 'either', 1, true], [wrong, yes, 'either', 1, true], [wrong, no, 'either', 0, false],
  ] as const;
  for (const [rule, verdict, mode, score, correct] of table) {
    assert.deepEqual(combineWithJudge(rule, verdict, mode), { score, correct, judged: true }, `${mode} rule=${rule.correct} judge=${verdict.correct}`);
  }
  assert.deepEqual(combineWithJudge(right, { status: 'error', reason: 'down' }, 'replace'), { score: 1, correct: true, judged: false });
  assert.deepEqual(combineWithJudge(wrong, undefined, 'either'), { score: 0, correct: false, judged: false });
});

test('backoff doubles up to its ceiling with equal jitter, and Retry-After reads seconds or a date', () => {
  const policy = { initialMs: 100, maxMs: 1000 };
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((r) => backoffDelay(r, policy, () => 0)), [50, 100, 200, 400, 500, 500]);
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((r) => backoffDelay(r, policy, () => 0.999999)), [100, 200, 400, 800, 1000, 1000]);
  assert.equal(retryAfterMs('2'), 2000);
  assert.equal(retryAfterMs('0.5'), 500);
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now), 3000);
  assert.equal(retryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now), 0);
  assert.equal(retryAfterMs('soon'), null);
  assert.equal(retryAfterMs(null), null);
});
