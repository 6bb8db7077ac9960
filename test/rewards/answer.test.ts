import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AnswerMethod } from '../../env/rewards/answer-match.js';
import { scoreAnswer } from '../../env/rewards/answer.js';
import { parseNumber } from '../../env/rewards/numbers.js';
import { DEFAULT_REWARD_CONFIG } from '../../env/rewards/config.js';

type Case = [prediction: string | string[] | null, gold: string | string[], correct: boolean, score: number, method: AnswerMethod, why: string];

const cases: Case[] = [
  // numbers: ChartQA relaxed accuracy
  ['12', '12', true, 1, 'numeric', 'same integer'],
  ['12.5', '12', true, 1, 'numeric', '0.5 off 12 is 4.2%: inside 5%'],
  ['12.6', '12', true, 1, 'numeric', '5% of 12 is 0.6: the edge is inside'],
  ['12.7', '12', false, 0, 'numeric', '5.8% off is outside'],
  ['95', '100', true, 1, 'numeric', '5% below'],
  ['94.9', '100', false, 0, 'numeric', 'just beyond 5% below'],
  ['0', '0', true, 1, 'numeric', 'gold 0 needs exactly 0'],
  ['0.001', '0', false, 0, 'numeric', 'no relative error around 0'],
  ['1,234', '1234', true, 1, 'numeric', 'thousands separators'],
  ['1234', '1,234.0', true, 1, 'numeric', 'separators in the gold'],
  ['-4.2', '-4.2', true, 1, 'numeric', 'negative numbers'],
  ['4.2', '-4.2', false, 0, 'numeric', 'the sign matters'],
  ['−4.2', '-4.2', true, 1, 'numeric', 'unicode minus sign'],
  ['1e3', '1000', true, 1, 'numeric', 'scientific notation'],
  ['2.5e-3', '0.0025', true, 1, 'numeric', 'negative exponent'],
  ['12%', '0.12', true, 1, 'numeric', 'percent vs fraction: 12% reads as 0.12'],
  ['12%', '12', true, 1, 'numeric', 'percent vs face value: the axis is often in percent'],
  ['0.12', '12%', true, 1, 'numeric', 'fraction vs percent gold'],
  ['12 percent', '12', true, 1, 'numeric', 'percent written out'],
  ['13%', '0.12', false, 0, 'numeric', 'a wrong percentage is still wrong'],
  ['$3.5M', '3500000', true, 1, 'numeric', 'currency and a letter scale'],
  ['$3.5M', '3.5', true, 1, 'numeric', 'face value of a scaled answer'],
  ['3.5 million', '3,500,000', true, 1, 'numeric', 'scale word'],
  ['3.5', '3.5 million', true, 1, 'numeric', 'scale on the gold side'],
  ['2k', '2000', true, 1, 'numeric', 'k suffix'],
  ['1.2 bn', '1200000000', true, 1, 'numeric', 'bn suffix'],
  ['12 kg', '12', true, 1, 'numeric', 'units are ignored'],
  ['12kg', '12', true, 1, 'numeric', 'a unit touching the digits is not a scale'],
  ['20 m', '20', true, 1, 'numeric', 'a spaced "m" is metres, not millions'],
  ['€ 45', '45', true, 1, 'numeric', 'euro sign with a space'],
  ['about 45', '45', true, 1, 'numeric', 'hedge words'],
  ['45.', '45', true, 1, 'numeric', 'trailing full stop'],
  ['seven', '7', true, 1, 'numeric', 'number word'],
  ['twenty-one', '21', true, 1, 'numeric', 'hyphenated number word'],
  ['one hundred', '100', true, 1, 'numeric', 'hundred'],
  ['one hundred and five', '105', true, 1, 'numeric', '"and" inside a number'],
  ['a thousand', '1000', true, 1, 'numeric', '"a thousand"'],
  ['two million', '2000000', true, 1, 'numeric', 'million in words'],
  ['7', 'seven', true, 1, 'numeric', 'number word on the gold side'],
  ['eight', '7', false, 0, 'numeric', 'a wrong number word'],
  ['seven people', '7', true, 1, 'numeric', 'a number word with a unit'],
  ['7', 'Seven Eleven', false, 0, 'exact', 'number words in a row that are not one number make a name'],
  ['2020', '2019', false, 0, 'numeric', 'years match exactly although 2020 is within 5% of 2019'],
  ['2019', '2019', true, 1, 'numeric', 'same year'],
  ['Belgium', '12', false, 0, 'numeric', 'text against a numeric gold'],
  // text: normalised exact match
  ['Belgium', 'belgium', true, 1, 'exact', 'case'],
  ['  the   Belgium. ', 'Belgium', true, 1, 'exact', 'whitespace, punctuation and articles'],
  ['an apple', 'Apple', true, 1, 'exact', 'article "an"'],
  ['France', 'Belgium', false, 0, 'exact', 'different text'],
  ['Yes', 'yes', true, 1, 'exact', 'yes/no'],
  ['A', 'a', true, 1, 'exact', 'a multiple-choice letter is not erased as an article'],
  ['Q1', 'Q2', false, 0, 'exact', 'short labels need an exact match'],
  ['', 'Belgium', false, 0, 'none', 'an empty answer'],
  [null, 'Belgium', false, 0, 'none', 'no answer at all'],
  // ANLS for long text
  ['the quick brown fox jumps over the lazy dog', 'The quick brown fox jumps over the lazy dog', true, 1, 'exact', 'long text, exact after normalisation'],
  ['quick brown fox jumps over the lazy dgo', 'quick brown fox jumps over the lazy dog', true, 1 - 2 / 35, 'anls', 'a transposition in long text (35 characters once "the" is dropped)'],
  ['quick brown cat walks past the lazy dog', 'quick brown fox jumps over the lazy dog', false, 1 - 11 / 35, 'anls', 'partial credit below the correct mark'],
  ['completely unrelated words here', 'quick brown fox jumps over the lazy dog', false, 0, 'anls', 'beyond threshold 0.5 scores 0'],
  // lists
  ['Belgium || France', ['France', 'Belgium'], true, 1, 'list', 'order does not matter'],
  [['France', 'Belgium'], 'Belgium||France', true, 1, 'list', 'string[] against a || string'],
  ['Belgium|||France', 'France || Belgium', true, 1, 'list', 'ReFocus ||| separators'],
  ['Belgium', ['Belgium', 'France'], false, 2 / 3, 'list', 'half the list: F1 = 2/3'],
  ['Belgium || France || Italy', ['Belgium', 'France'], false, 0.8, 'list', 'one extra item: F1 = 0.8'],
  ['Belgium, France', ['Belgium', 'France'], true, 1, 'list', 'a prose list with commas'],
  ['Belgium and France', ['Belgium', 'France'], true, 1, 'list', 'a prose list with "and"'],
  ['104 || 99', ['100', '104'], true, 1, 'list', 'numeric items pair by maximum matching, not greedily'],
  ['1,234 || 5', ['1234', '5'], true, 1, 'list', 'a thousands separator does not split a list item'],
  ['Belgium || France', 'Belgium', false, 0, 'list', 'two candidates for one answer is hedging'],
  ['Italy || Spain', ['Belgium', 'France'], false, 0, 'list', 'no item right'],
];

for (const [prediction, gold, correct, score, method, why] of cases) {
  test(`answer ${JSON.stringify(prediction)} vs gold ${JSON.stringify(gold)}: ${why}`, () => {
    const match = scoreAnswer(prediction, gold);
    assert.equal(match.correct, correct);
    assert.ok(Math.abs(match.score - score) < 1e-9, `score ${match.score}, expected ${score}`);
    assert.equal(match.method, method);
  });
}

test('list_score "exact" pays nothing for a partly right list', () => {
  const config = { ...DEFAULT_REWARD_CONFIG.answer, list_score: 'exact' as const };
  assert.deepEqual(scoreAnswer('Belgium', ['Belgium', 'France'], config), { correct: false, score: 0, method: 'list' });
  assert.deepEqual(scoreAnswer('France || Belgium', ['Belgium', 'France'], config), { correct: true, score: 1, method: 'list' });
});

test('exact_years off restores plain ChartQA relaxed accuracy for years', () => {
  const config = { ...DEFAULT_REWARD_CONFIG.answer, exact_years: false };
  assert.equal(scoreAnswer('2020', '2019', config).correct, true);
});

test('relative_tolerance is configurable: 0 demands the exact value', () => {
  const config = { ...DEFAULT_REWARD_CONFIG.answer, relative_tolerance: 0 };
  assert.equal(scoreAnswer('12.1', '12', config).correct, false);
  assert.equal(scoreAnswer('0.3', '0.30', config).correct, true);
});

test('parseNumber recognises answers that are numbers and refuses sentences and labels', () => {
  assert.equal(parseNumber('3.5 million')?.value, 3.5e6);
  assert.deepEqual(parseNumber('12%')?.readings, [0.12, 12]);
  assert.equal(parseNumber('-$5')?.value, -5);
  assert.equal(parseNumber('negative five')?.value, -5);
  assert.equal(parseNumber('2019')?.plainInteger, true);
  assert.equal(parseNumber('2,019')?.plainInteger, false);
  for (const notANumber of ['Belgium', 'Q1', '2019 Q1', 'the answer is 3 and 4 and 5', '1,23', 'a', 'none', '3/4 of the 12 bars']) {
    assert.equal(parseNumber(notANumber), null, `${notANumber} should not parse`);
  }
});
