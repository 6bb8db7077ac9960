import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dashboardMetrics, summarize, summarizeArm } from '../../env/eval/summary.js';
import { countTargets, type CompletedResult } from '../../env/eval/task-result.js';
import { answerTurn, call, callTurn, observation, trajectory } from '../rewards/trajectories.js';

function result(id: string, arm: 'tools' | 'no_tools', targets: CompletedResult['targets'], findings: CompletedResult['findings']): CompletedResult {
  return {
    task_id: id, arm, kind: 'vbar', difficulty: 1, family: null, seconds: 1, requests: 1, retries: 0, status: 'ok', answer: '7', gold: '7',
    correct_relaxed: true, correct_exact: true, judge: null, reward: 1, format_valid: true, tool_calls: 1, tool_errors: 0, turns: 2,
    end_reason: 'answer', errors: {}, prompt_tokens: 0, completion_tokens: 0,
    ...(targets ? { targets } : {}), ...(findings ? { findings } : {}),
  };
}

test('countTargets counts the calls that ran; a call without a target is unknown, a failed call is not counted', () => {
  const record = trajectory([
    callTurn([{ ...call('zoom_in', { bbox: [0, 0, 9, 9] }), target: 'on' }, { ...call('zoom_in', { bbox: [0, 0, 9, 8] }), target: 'off' }]),
    observation(),
    callTurn([call('zoom_in', { bbox: [0, 0, 9, 7] }), call('zoom_in', { bbox: [9, 9, 0, 0] }, false)]),
    observation(),
    answerTurn('7'),
  ]);
  assert.deepEqual(countTargets(record), { on: 1, partly: 0, off: 1, unknown: 1 });
});

test('the tools arm reports call_on_target_rate = on / (on + partly + off) and how many tasks each scanner fired on', () => {
  const results = [
    result('a', 'tools', { on: 2, partly: 1, off: 0, unknown: 4 }, ['repeated_call']),
    result('b', 'tools', { on: 0, partly: 0, off: 1, unknown: 0 }, ['off_target_call', 'repeated_call']),
    result('c', 'tools', undefined, undefined), // written before issue 43
    result('a', 'no_tools', { on: 0, partly: 0, off: 0, unknown: 0 }, ['format_collapse']),
  ];
  const tools = summarizeArm(results.filter((r) => r.arm === 'tools'));
  assert.deepEqual([tools.calls_on_target, tools.calls_partly_on_target, tools.calls_off_target, tools.calls_target_unknown], [2, 1, 1, 4]);
  assert.equal(tools.call_on_target_rate, 2 / 4); // 2 on of 2 + 1 + 1 with a known target
  assert.deepEqual(tools.findings, { off_target_call: 1, repeated_call: 2, ignored_tool_error: 0, degenerate_edit: 0, format_collapse: 0, answered_without_looking: 0 });
  const metrics = dashboardMetrics(summarize(results), 3);
  assert.equal(metrics['eval/call_on_target_rate'], 0.5);
  assert.equal(metrics['eval/scan/repeated_call'], 2);
  assert.equal(metrics['eval/scan/answered_without_looking'], 0, 'every scanner, 0 included');
  assert.equal(Object.keys(metrics).filter((k) => k.startsWith('eval/scan/')).length, 6, 'the no-tools arm adds none');
  assert.equal(summarizeArm(results.filter((r) => r.arm === 'no_tools')).call_on_target_rate, null, 'no call with a known target');
});
