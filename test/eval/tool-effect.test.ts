/**
 * The tool effect and its pieces. The interval is checked against Newcombe's published paired
 * example (1998, "Improved confidence intervals for the difference between binomial proportions
 * based on paired data", method 10: the table 36, 12, 2, 0 → 0.2, [0.0569, 0.3404]), the counts
 * and shares against hand counts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toolEffect, type ToolEffectPair } from '../../env/eval/tool-effect.js';
import { answersDiffer, forcedTurns } from '../../env/eval/counterfactual.js';
import type { Trajectory } from '../../env/episodes/trajectory.js';

const repeat = (count: number, pair: ToolEffectPair) => Array.from({ length: count }, () => ({ ...pair }));

test("the tool effect reproduces Newcombe's paired example: 36 right both ways, 12 right only as run, 2 only withheld", () => {
  const pairs = [
    ...repeat(30, { real: true, withheld: true, replayed: false, changed: false }),
    ...repeat(6, { real: true, withheld: true, replayed: true, changed: false }),
    ...repeat(12, { real: true, withheld: false, replayed: true, changed: true }),
    ...repeat(2, { real: false, withheld: true, replayed: true, changed: true }),
  ];
  const effect = toolEffect(pairs);
  assert.ok(Math.abs(effect.effect - 0.2) < 1e-12);
  assert.ok(Math.abs(effect.ci95[0] - 0.0569) < 1e-4, String(effect.ci95[0]));
  assert.ok(Math.abs(effect.ci95[1] - 0.3404) < 1e-4, String(effect.ci95[1]));
  assert.equal(effect.n, 50);
  assert.equal(effect.replayed, 20);
  // 14 of the 20 replayed changed their answer.
  assert.equal(effect.answer_changed_rate, 14 / 20);
  assert.equal(effect.method, 'newcombe-paired');
});

test('no replay at all: effect 0 and no answer-changed rate; nothing paired: the whole range', () => {
  const none = toolEffect(repeat(5, { real: true, withheld: true, replayed: false, changed: false }));
  assert.equal(none.effect, 0);
  assert.equal(none.answer_changed_rate, null);
  assert.ok(none.ci95[0] < 0 && none.ci95[1] > 0);
  assert.deepEqual(toolEffect([]).ci95, [-1, 1]);
});

const turn = (text: string, ok: boolean[] = []) => ({
  role: 'assistant' as const, text, errors: [], answer: null,
  calls: ok.map((o) => ({ name: 'zoom_in', arguments: {}, ok: o, image_in: 'a', ...(o ? { image_out: 'b', summary: 's' } : {}) })),
});
const observation = { role: 'tool' as const, text: 'OBSERVATION', images: [] };

test('a replay forces the turns up to and including the first successful call; none without one', () => {
  const turns = [turn('bad call', [false]), observation, turn('good call', [true]), observation, turn('another', [true]), observation, turn('<answer>3</answer>')];
  assert.deepEqual(forcedTurns({ turns } as Pick<Trajectory, 'turns'>), ['bad call', 'good call']);
  assert.equal(forcedTurns({ turns: [turn('bad', [false]), observation, turn('<answer>3</answer>')] } as Pick<Trajectory, 'turns'>), null);
});

test("answers differ only once normalised as the scorer compares them", () => {
  assert.equal(answersDiffer('The Nile.', 'nile'), false);
  assert.equal(answersDiffer('7', '8'), true);
  assert.equal(answersDiffer(null, null), false);
  assert.equal(answersDiffer('7', null), true);
  assert.equal(answersDiffer(['A', 'b'], ['a', 'B']), false);
});
