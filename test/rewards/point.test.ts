import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerRuleFor, parsePoint, scoreAnswer, scorePoint, scoreTrajectory, DEFAULT_REWARD_CONFIG } from '../../env/rewards/index.js';
import type { Trajectory } from '../../env/episodes/trajectory.js';

const RULE = { kind: 'point', tolerance_px: 10 } as const;

test('a point is read from the usual ways of writing one, and nothing else reads as a point', () => {
  for (const text of ['(12, 34)', '[12, 34]', '12, 34', '12 34', 'x=12, y=34', '(12.0,34)', ' ( 12 ,34 ) ']) assert.deepEqual(parsePoint(text), { x: 12, y: 34 }, text);
  for (const text of ['12', '(1, 2, 3)', 'A', 'about 12 and 34', '', '(12, 34) or (1, 2)']) assert.equal(parsePoint(text), null, text);
});

test('the distance reward: 1 within the tolerance, falling linearly to 0 at three tolerances, correct only within it', () => {
  const at = (x: number, y: number) => scorePoint(`(${x}, ${y})`, '(100, 50)', RULE);
  // Distances 0, 10 (= τ), 20 (= 2τ: half way down), 30 (= 3τ) and 40, computed by hand from the formula.
  assert.deepEqual([at(100, 50), at(106, 58), at(112, 66), at(118, 74), at(124, 82)].map((m) => [m.score, m.correct, m.distance]),
    [[1, true, 0], [1, true, 10], [0.5, false, 20], [0, false, 30], [0, false, 40]]);
  assert.deepEqual(scorePoint('C', '(100, 50)', RULE), { correct: false, score: 0, method: 'point', distance: null });
  assert.deepEqual(scorePoint(['(100, 50)', '(1, 1)'], '(100, 50)', RULE).score, 0, 'two points are a hedge');
  assert.equal(scoreAnswer('(101, 50)', '(100, 50)', DEFAULT_REWARD_CONFIG.answer, RULE).correct, true);
  // Without the rule the same texts are compared as text: a pixel off is wrong.
  assert.equal(scoreAnswer('(101, 50)', '(100, 50)').correct, false);
});

test('only locate tasks with a tolerance ask for the point rule', () => {
  assert.deepEqual(answerRuleFor({ query: { family: 'locate', tolerance_px: 12 } }), { kind: 'point', tolerance_px: 12 });
  assert.equal(answerRuleFor({ query: { family: 'above_below' } }), undefined);
  assert.equal(answerRuleFor({ query: { family: 'locate' } }), undefined);
  assert.equal(answerRuleFor({}), undefined);
});

test('a scored trajectory keeps the distance in its breakdown and pays partial accuracy', () => {
  const trajectory: Trajectory = {
    prompt_id: 'p', task: { question: 'Where is point C?', answer: '(100, 50)', kind: 'geometry', difficulty: 1, image: 'x' },
    turns: [{ role: 'assistant', text: '<answer>(112, 66)</answer>', calls: [], errors: [], answer: '(112, 66)' }],
    answer: '(112, 66)', end_reason: 'answer', tool_calls: 0, tool_errors: 0,
  };
  const scored = scoreTrajectory(trajectory, '(100, 50)', DEFAULT_REWARD_CONFIG, undefined, RULE);
  assert.equal(scored.components.point_distance_px, 20);
  assert.equal(scored.components.accuracy, 0.5);
  assert.equal(scored.correct, false);
  const plain = scoreTrajectory(trajectory, '(100, 50)', DEFAULT_REWARD_CONFIG);
  assert.equal(plain.components.point_distance_px, undefined);
  assert.equal(plain.components.accuracy, 0);
});
