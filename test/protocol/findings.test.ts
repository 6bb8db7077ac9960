/**
 * Issue 43's words and filters, shared by the host and the panels: a record's findings read back
 * (known names only, in the fixed order), the finding facet the viewer's list and the run-wide search
 * apply, its guard, what a search reports it saw, a summary's findings, a counterfactual read back.
 * Expected values are written out by hand from the records built here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { counterfactualOf, FINDING_LEGEND, FINDING_NAMES, findingsOf, isCallTarget, scanMetric } from '../../protocol/findings.js';
import { describeFacets, isRolloutFacets, matchesFacets, NO_FACETS } from '../../protocol/rollout-filter.js';
import { searchSteps, type SearchedRollout } from '../../protocol/rollout-search.js';
import { ShowInViewerCommand, ViewerShowStepNotification } from '../../protocol/panel/rollouts.js';
import { summarizeRollout } from '../../env/runs/rollout-summary.js';
import { RolloutSearchRequest } from '../../protocol/panel/search.js';

const record = (findings: unknown, extra: Record<string, unknown> = {}) => ({ prompt_id: 'p', task: { question: 'q', answer: '1', image: 'i' }, turns: [], ...(findings === undefined ? {} : { findings }), ...extra });

test('the six scanners of the contract, each with a label and a meaning, and their metric names', () => {
  assert.deepEqual([...FINDING_NAMES], ['off_target_call', 'repeated_call', 'ignored_tool_error', 'degenerate_edit', 'format_collapse', 'answered_without_looking']);
  for (const name of FINDING_NAMES) assert.ok(FINDING_LEGEND[name].label.length > 0 && FINDING_LEGEND[name].meaning.length > 20);
  assert.equal(scanMetric('repeated_call'), 'scan/repeated_call');
  assert.deepEqual(['on', 'partly', 'off', 'unknown', 'maybe', null].map(isCallTarget), [true, true, true, true, false, false]);
});

test("a record's findings: known names once each in the fixed order; none without a list", () => {
  assert.deepEqual(findingsOf(record(['repeated_call', 'off_target_call', '<script>x</script>', 'repeated_call'])), ['off_target_call', 'repeated_call']);
  assert.deepEqual(findingsOf(record([])), []);
  assert.equal(findingsOf(record(undefined)), null);
  assert.equal(findingsOf(record('off_target_call')), null);
  const summary = summarizeRollout(record(['degenerate_edit']), 0);
  assert.ok(typeof summary !== 'string');
  assert.deepEqual(summary.findings, ['degenerate_edit']);
  const old = summarizeRollout(record(undefined), 1);
  assert.ok(typeof old !== 'string' && !('findings' in old));
});

test('the finding facet keeps the rollouts a scanner fired on; "none" those scanned with nothing found; an unscanned record passes neither', () => {
  const base = summarizeRollout(record([]), 0);
  assert.ok(typeof base !== 'string');
  const off = { ...base, findings: ['off_target_call' as const] };
  const clean = { ...base, findings: [] };
  const unscanned = { ...base };
  delete unscanned.findings;
  const keep = (finding: typeof NO_FACETS.finding) => [off, clean, unscanned].map((r) => matchesFacets(r, { ...NO_FACETS, finding }));
  assert.deepEqual(keep('off_target_call'), [true, false, false]);
  assert.deepEqual(keep('repeated_call'), [false, false, false]);
  assert.deepEqual(keep('none'), [false, true, false]);
  assert.deepEqual(keep(null), [true, true, true]);
  assert.deepEqual(keep(undefined), [true, true, true]);
  assert.equal(describeFacets({ ...NO_FACETS, outcome: 'incorrect', finding: 'off_target_call' }), 'incorrect · finding off target');
  assert.equal(describeFacets({ ...NO_FACETS, finding: 'none' }), 'no findings');
});

test('the guards take a finding or none, and refuse a name outside the list, naming nothing they do not know', () => {
  assert.ok(isRolloutFacets({ ...NO_FACETS, finding: 'format_collapse' }));
  assert.ok(isRolloutFacets({ ...NO_FACETS, finding: 'none' }));
  assert.ok(isRolloutFacets(NO_FACETS));
  assert.ok(!isRolloutFacets({ ...NO_FACETS, finding: 'bogus' }));
  assert.ok(RolloutSearchRequest.isParams({ runId: 'r', query: '', filter: { ...NO_FACETS, finding: 'repeated_call' } }));
  assert.ok(!RolloutSearchRequest.isParams({ runId: 'r', query: '', filter: { ...NO_FACETS, finding: '<b>' } }));
  assert.ok(ShowInViewerCommand.isParams({ runId: 'r', path: '/x', step: 3, finding: 'ignored_tool_error' }));
  assert.ok(!ShowInViewerCommand.isParams({ runId: 'r', path: '/x', step: 3, finding: 'ignored' }));
  assert.ok(ViewerShowStepNotification.isParams({ runId: 'r', step: 3, finding: 'degenerate_edit' }));
});

test('a run-wide search with the finding facet counts every step exactly and says which findings the run holds', async () => {
  // Step 1: lines 0 and 2 off target, line 1 clean; step 2: line 0 repeated, line 1 off target and repeated.
  const steps: Record<number, unknown[][]> = { 1: [['off_target_call'], [], ['off_target_call']], 2: [['repeated_call'], ['repeated_call', 'off_target_call']] };
  const read = (step: number): SearchedRollout[] =>
    (steps[step] ?? []).map((findings, line) => {
      const r = record(findings, { prompt_id: `s${step}-${line}` });
      const summary = summarizeRollout(r, line);
      if (typeof summary === 'string') throw new Error(summary);
      return { line, record: r, summary };
    });
  const result = await searchSteps([1, 2], read, { query: '', filter: { ...NO_FACETS, finding: 'off_target_call' } });
  assert.equal(result.total, 3);
  assert.deepEqual(result.steps, [{ step: 1, matches: 2 }, { step: 2, matches: 1 }]);
  assert.deepEqual(result.matches.map((m) => [m.step, m.line]), [[1, 0], [1, 2], [2, 1]]);
  assert.deepEqual(result.seen.findings, ['off_target_call', 'repeated_call']);
});

test('a counterfactual is read back only when well formed', () => {
  assert.deepEqual(counterfactualOf(record([], { counterfactual: { answer: '28', correct: false, changed: true } })), { answer: '28', correct: false, changed: true });
  assert.deepEqual(counterfactualOf(record([], { counterfactual: { answer: null, correct: false, changed: true } })), { answer: null, correct: false, changed: true });
  assert.equal(counterfactualOf(record([], { counterfactual: { answer: 3, correct: false, changed: true } })), null);
  assert.equal(counterfactualOf(record([], { counterfactual: { answer: '3', correct: 'yes', changed: true } })), null);
  assert.equal(counterfactualOf(record([])), null);
});
