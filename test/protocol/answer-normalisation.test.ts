import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { normalizeAnswerText } from '../../protocol/answer-text.js';

interface Case {
  text: string;
  normalized: string;
  why: string;
}

// The same hand-worked cases hold the trainer's Python copy (trainer/tests/test_answer_normalisation.py).
const { cases } = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'answer-normalisation.json'), 'utf8')) as { cases: Case[] };

test('the scorer normalises every shared case as worked out by hand', () => {
  assert.ok(cases.length >= 10);
  for (const c of cases) assert.equal(normalizeAnswerText(c.text), c.normalized, `${JSON.stringify(c.text)}: ${c.why}`);
});
