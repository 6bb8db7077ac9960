import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listStepFiles } from '../../env/runs/rollout-index.js';
import { searchRollouts, snippetAround } from '../../env/runs/rollout-search.js';
import { RolloutSearchRequest } from '../../protocol/panel-protocol.js';
import { NO_FACETS, type RolloutFacets } from '../../protocol/rollout-filter.js';
import { FLAT_GROUP, TABLE_GROUP, writeRunDirectory } from './run-directory.js';

// The fixture run: steps 1, 2 and 3, each with TABLE_GROUP (lines 0–3) then FLAT_GROUP (lines 4–7).
// From the scripts (test/runs/run-directory.ts):
//   line 0: mask [Rider, Wins], answer 34        line 1: mask, highlight row Merckx, answer 34
//   line 2: "<think>I remember it is 28.</think>\n<answer>28</answer>", no tool, wrong
//   line 3: mask [Rider, Points] (E4, unknown column), answer 34
//   lines 4–7: highlight x value 2020, answer 2020 ("Which year has the highest value?")
// Step 2 also ends with two lines that are not rollout records.
let dir: string;

before(async () => {
  dir = await writeRunDirectory(join(await mkdtemp(join(tmpdir(), 'vistool-search-')), 'run'), { rolloutSteps: [1, 2, 3], groups: [TABLE_GROUP, FLAT_GROUP] });
  await appendFile(join(dir, 'rollouts', 'step-000002.jsonl'), 'not json at all\n{"prompt_id": "no-turns"}\n');
});

async function search(query: string, filter: Partial<RolloutFacets> = {}, limit?: number) {
  return searchRollouts(dir, await listStepFiles(dir), { query, filter: { ...NO_FACETS, ...filter }, ...(limit ? { limit } : {}) });
}

const where = (result: Awaited<ReturnType<typeof search>>) => result.matches.map((m) => [m.step, m.line]);

test('text in the question is found in every step, counted per step, each match named by step, line and prompt id', async () => {
  const result = await search('MERCKX have');
  assert.deepEqual(result.steps, [{ step: 1, matches: 4 }, { step: 2, matches: 4 }, { step: 3, matches: 4 }]);
  assert.equal(result.total, 12);
  assert.equal(result.capped, false);
  assert.deepEqual(where(result), [1, 2, 3].flatMap((s) => [0, 1, 2, 3].map((l) => [s, l])));
  assert.ok(result.matches.every((m) => m.promptId === 'fixture-table' && m.field === 'question' && m.snippet === 'How many wins does Merckx have?'));
  // "Merckx have" starts at character 19 of the question.
  assert.deepEqual([result.matches[0]!.start, result.matches[0]!.end], [19, 30]);
  // Every line was read: 8 records per step, and step 2's two lines that are not records.
  assert.deepEqual(result.scanned, { steps: 3, rollouts: 24, skipped: 2 });
});

test('text only the model wrote is found in its turn, with the turn, its role and a snippet around it', async () => {
  const result = await search('remember');
  assert.deepEqual(where(result), [[1, 2], [2, 2], [3, 2]]);
  const [first] = result.matches;
  assert.deepEqual({ field: first!.field, turn: first!.turn, role: first!.role }, { field: 'turn', turn: 0, role: 'assistant' });
  // The newline between think and answer is folded to a space; "remember" starts after "<think>I ".
  assert.equal(first!.snippet, '<think>I remember it is 28.</think> <answer>28</answer>');
  assert.deepEqual([first!.start, first!.end], [9, 17]);
  assert.equal((await search('points')).matches.map((m) => `${m.step}:${m.line}:${m.field}:${m.turn}`).join(' '), '1:3:turn:0 2:3:turn:0 3:3:turn:0');
  const none = await search('no such text anywhere');
  assert.equal(none.total, 0);
  // What the run holds, matching or not: line 3's E4, and the three tools the scripts call; no findings (the fixture's records were not scanned).
  assert.deepEqual(none.seen, { errorClasses: ['E4'], toolNames: ['focus_on_columns_with_mask', 'focus_on_rows_with_highlight', 'focus_on_x_values_with_highlight'], findings: [] });
});

test('the answer is looked at before the turns, and the facets narrow the text search as the viewer\'s filters do', async () => {
  const answers = await search('2020');
  assert.deepEqual(answers.steps.map((s) => s.matches), [4, 4, 4]);
  assert.ok(answers.matches.every((m) => m.field === 'answer' && m.snippet === '2020' && m.line >= 4));
  // No text, only facets: the E4 rollout; the two without a tool that ran; the wrong one; the highlighters.
  assert.deepEqual(where(await search('', { errorClass: 'E4' })), [[1, 3], [2, 3], [3, 3]]);
  assert.deepEqual(where(await search('', { tools: 'none' })), [[1, 2], [1, 3], [2, 2], [2, 3], [3, 2], [3, 3]]);
  assert.deepEqual(where(await search('', { outcome: 'incorrect' })), [[1, 2], [2, 2], [3, 2]]);
  assert.equal((await search('', { toolName: 'focus_on_x_values_with_highlight' })).total, 12);
  assert.equal((await search('merckx', { toolName: 'focus_on_x_values_with_highlight' })).total, 0);
  assert.equal((await search('merckx', { outcome: 'correct', errorClass: 'none' })).total, 6, 'lines 0 and 1 of each step');
});

test('matches are capped at the limit, in step and line order, and the answer says so while the counts stay whole', async () => {
  const result = await search('merckx', {}, 5);
  assert.deepEqual(where(result), [[1, 0], [1, 1], [1, 2], [1, 3], [2, 0]]);
  assert.equal(result.capped, true);
  assert.equal(result.total, 12);
  assert.deepEqual(result.steps.map((s) => s.matches), [4, 4, 4]);
});

test('the list can start at a step and line: the next page after the last listed, or one step\'s matches; the counts stay whole', async () => {
  const files = await listStepFiles(dir);
  const page = (from: { step: number; line: number }, limit?: number) => searchRollouts(dir, files, { query: 'merckx', filter: NO_FACETS, from, ...(limit ? { limit } : {}) });
  // After the first page of 5 (up to step 2, line 0): from step 2, line 1.
  const next = await page({ step: 2, line: 1 }, 5);
  assert.deepEqual(where(next), [[2, 1], [2, 2], [2, 3], [3, 0], [3, 1]]);
  assert.deepEqual(next.from, { step: 2, line: 1 });
  assert.equal(next.capped, true, '7 matches from there, 5 listed');
  assert.equal(next.total, 12);
  assert.deepEqual(next.steps.map((s) => s.matches), [4, 4, 4]);
  const rest = await page({ step: 3, line: 2 });
  assert.deepEqual(where(rest), [[3, 2], [3, 3]]);
  assert.equal(rest.capped, false);
  assert.deepEqual(where(await page({ step: 9, line: 0 })), []);
  assert.equal(RolloutSearchRequest.is({ kind: 'request', id: '1', method: 'rollouts/search', params: { runId: 'a', query: '', filter: NO_FACETS, from: { step: 1, line: -1 } } }), false);
});

test('a file read in slices of one line finds the same matches as one read of each file', async () => {
  const files = await listStepFiles(dir);
  const params = { query: 'merckx', filter: { ...NO_FACETS, tools: 'tools' as const } };
  const sliced = await searchRollouts(dir, files, params, { sliceBytes: 1 });
  assert.deepEqual(sliced, await searchRollouts(dir, files, params));
  // Used tools: lines 0 and 1 (line 3's only call failed, so no tool ran).
  assert.deepEqual(where(sliced), [[1, 0], [1, 1], [2, 0], [2, 1], [3, 0], [3, 1]]);
});

test('a snippet is cut around the found text, with an ellipsis on each cut side', () => {
  const text = `${'a'.repeat(100)}NEEDLE${'b'.repeat(100)}`;
  // From 40 characters before (60) to 120 characters after that (180).
  assert.deepEqual(snippetAround(text, 100, 6), { snippet: `…${'a'.repeat(40)}NEEDLE${'b'.repeat(74)}…`, start: 41, end: 47 });
  assert.deepEqual(snippetAround('short text', 6, 4), { snippet: 'short text', start: 6, end: 10 });
});

test('the request guard refuses a bad filter, an overlong query and an out-of-range limit', () => {
  const message = (params: unknown) => ({ kind: 'request', id: '1', method: 'rollouts/search', params });
  const ok = { runId: 'a', query: 'x', filter: { ...NO_FACETS } };
  assert.equal(RolloutSearchRequest.is(message(ok)), true);
  assert.equal(RolloutSearchRequest.is(message({ ...ok, limit: 50 })), true);
  assert.equal(RolloutSearchRequest.is(message({ ...ok, limit: 0 })), false);
  assert.equal(RolloutSearchRequest.is(message({ ...ok, limit: 5000 })), false);
  assert.equal(RolloutSearchRequest.is(message({ ...ok, query: 'x'.repeat(201) })), false);
  assert.equal(RolloutSearchRequest.is(message({ ...ok, filter: { ...NO_FACETS, outcome: 'maybe' } })), false);
  assert.equal(RolloutSearchRequest.is(message({ ...ok, filter: { outcome: 'all' } })), false);
});

test('a search whose signal is aborted reads no further step file and rejects with the abort', async () => {
  const files = await listStepFiles(dir);
  const controller = new AbortController();
  // The search reaches step 2's file after reading step 1's: the signal is aborted right then.
  const watched = files.map((f) => (f.step === 2 ? { step: f.step, bytes: f.bytes, get file() {
    controller.abort();
    return f.file;
  } } : f));
  await assert.rejects(searchRollouts(dir, watched, { query: 'merckx', filter: NO_FACETS }, { signal: controller.signal }), { name: 'AbortError' });
  const done = new AbortController();
  done.abort();
  await assert.rejects(searchRollouts(dir, files, { query: 'merckx', filter: NO_FACETS }, { signal: done.signal }), { name: 'AbortError' });
});
