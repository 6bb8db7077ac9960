import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closestLabel, lookupLabel, selectLabels } from '../../env/tools/labels.js';

const COLUMNS = ['Rider', 'Country', 'Wins', 'Win %', 'Team name'];

test('an exact label matches exactly', () => {
  assert.deepEqual(lookupLabel('Wins', COLUMNS), { kind: 'found', match: { requested: 'Wins', matched: 'Wins', how: 'exact' } });
});

test('labels fall back to case-insensitive, then whitespace-normalised, then punctuation-insensitive matching', () => {
  assert.deepEqual(lookupLabel('wins', COLUMNS), { kind: 'found', match: { requested: 'wins', matched: 'Wins', how: 'case' } });
  assert.deepEqual(lookupLabel('  team   NAME ', COLUMNS), { kind: 'found', match: { requested: '  team   NAME ', matched: 'Team name', how: 'whitespace' } });
  assert.deepEqual(lookupLabel('win%', COLUMNS), { kind: 'found', match: { requested: 'win%', matched: 'Win %', how: 'punctuation' } });
  assert.deepEqual(lookupLabel('Team-Name', COLUMNS), { kind: 'found', match: { requested: 'Team-Name', matched: 'Team name', how: 'punctuation' } });
});

test('an earlier level wins over a later one, so an exact label is never called ambiguous', () => {
  const labels = ['Total', 'total'];
  assert.deepEqual(lookupLabel('total', labels), { kind: 'found', match: { requested: 'total', matched: 'total', how: 'exact' } });
});

test('two labels matching at the deciding level are ambiguous, and both are named', () => {
  const result = selectLabels(['TOTAL'], ['Total', 'total', 'Sum'], 'column', 'columns');
  assert.equal(result.ok, false);
  assert.ok(!result.ok && result.message.includes("'Total' and 'total'") && result.message.includes('ambiguous'), !result.ok ? result.message : '');
});

test('punctuation-only labels never match everything at the punctuation level', () => {
  assert.deepEqual(lookupLabel('%', ['Wins', 'Team']), { kind: 'unknown' });
  assert.deepEqual(lookupLabel('Wins', ['%', '-']), { kind: 'unknown' });
});

test('an unknown label fails the whole selection with the list of valid labels and a near miss', () => {
  const result = selectLabels(['Country', 'Wns'], COLUMNS, 'column', 'columns');
  assert.deepEqual(result, { ok: false, message: "unknown column 'Wns' (did you mean 'Wins'?) — columns are: Rider, Country, Wins, Win %, Team name" });
  const far = selectLabels(['Points'], COLUMNS, 'column', 'columns');
  assert.deepEqual(far, { ok: false, message: 'unknown column \'Points\' — columns are: Rider, Country, Wins, Win %, Team name' });
});

test('a selection reports every match and keeps each matched label once, in request order', () => {
  const result = selectLabels(['wins', 'Rider', 'WINS'], COLUMNS, 'column', 'columns');
  assert.ok(result.ok);
  assert.deepEqual(result.selected, ['Wins', 'Rider']);
  assert.deepEqual(result.matches.map((m) => m.how), ['case', 'exact', 'case']);
});

test('closestLabel suggests only near, unambiguous labels', () => {
  assert.equal(closestLabel('Contry', COLUMNS), 'Country');
  assert.equal(closestLabel('Xyz', COLUMNS), null);
  assert.equal(closestLabel('ab', ['ac', 'ad']), null, 'too short for any edit');
  assert.equal(closestLabel('abcdef', ['abcdxx', 'abcdyy']), null, 'a tie is no suggestion');
});
