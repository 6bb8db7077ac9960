import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterChoices, filterGroups, GROUP_ORDERS, groupBadge, mergeChoices, groupRollouts, histogram, isGroupOrder, navigationOrder, NO_FILTER, sortGroups, stepThrough } from '../../webview/viewer/groups.js';
import type { RolloutSummary } from '../../protocol/panel-protocol.js';
import { summarizeRollout } from '../../env/runs/rollout-summary.js';

function rollout(line: number, promptId: string, group: number | null, reward: number | null, extra: Partial<RolloutSummary> = {}): RolloutSummary {
  return {
    line, promptId, group, kept: null, question: `question of ${promptId}`, gold: '34', answer: '34', correct: reward === null ? null : reward >= 1, reward, advantage: 0,
    toolCalls: 0, toolErrors: 0, formatErrors: 0, errorClasses: [], toolNames: [], turns: 1, endReason: 'answer', ...extra,
  };
}

test('consecutive lines of one prompt form a group, sorted best reward first, unscored last', () => {
  const groups = groupRollouts([rollout(0, 'p1', 0, 0.2), rollout(1, 'p1', 1, 1.1), rollout(2, 'p1', 2, null), rollout(3, 'p2', 0, 0.5)]);
  assert.deepEqual(groups.map((g) => g.promptId), ['p1', 'p2']);
  assert.deepEqual(groups[0]?.rollouts.map((r) => r.line), [1, 0, 2]);
  assert.equal(groups[0]?.rewardMin, 0.2);
  assert.equal(groups[0]?.rewardMax, 1.1);
  assert.equal(groups[0]?.size, 3);
  assert.equal(groups[0]?.correct, 1);
});

test('the same prompt drawn twice in a step makes two groups: the group index restarting splits them', () => {
  const groups = groupRollouts([rollout(0, 'p1', 0, 1), rollout(1, 'p1', 1, 0), rollout(2, 'p1', 0, 1), rollout(3, 'p1', 1, 1)]);
  assert.equal(groups.length, 2);
  assert.notEqual(groups[0]?.key, groups[1]?.key);
});

test('the trainer\'s kept flag wins over the reward-spread guess', () => {
  const [flagged, spread] = groupRollouts([
    rollout(0, 'p1', 0, 1, { kept: false }), rollout(1, 'p1', 1, 0, { kept: false }),
    rollout(2, 'p2', 0, 1.2, { kept: true }), rollout(3, 'p2', 1, 1.2, { kept: true }),
  ]);
  assert.equal(flagged?.kept, false, 'rewards differ, but the trainer says it dropped the group');
  assert.equal(spread?.kept, true, 'rewards are equal, but the trainer says it used the group');
});

test('a group is kept when its rewards differ and filtered (dropped by dynamic sampling) when all are equal', () => {
  const [kept, flat] = groupRollouts([rollout(0, 'p1', 0, 1), rollout(1, 'p1', 1, 0), rollout(2, 'p2', 0, 1.2), rollout(3, 'p2', 1, 1.2)]);
  assert.equal(kept?.kept, true);
  assert.equal(flat?.kept, false);
});

test('an untrained group with an episode that failed at the env server says it was dropped for that, not that every rollout scored the same', () => {
  // The trainer's records of a step with rl.failed_groups 'drop', as it writes them (rollout_record):
  // p1's second episode could not be scored (reward 0 there, 1 beside it), p2 scored flat and
  // dynamic sampling dropped it, p3's episode failed and both scored 0, p4 is trained.
  const record = (promptId: string, group: number, reward: number, kept: boolean, envFailed: boolean) => ({
    prompt_id: promptId, task: { question: `question of ${promptId}`, answer: '34', kind: 'table', difficulty: 1, image: 'ab12' }, turns: [], answer: reward > 0 ? '34' : null,
    end_reason: 'answer', tool_calls: 0, tool_errors: 0, correct: reward > 0, reward, step: 3, group, advantage: 0, kept, env_failed: envFailed,
  });
  const records = [
    record('p1', 0, 1, false, false), record('p1', 1, 0, false, true),
    record('p2', 0, 1, false, false), record('p2', 1, 1, false, false),
    record('p3', 0, 0, false, true), record('p3', 1, 0, false, false),
    record('p4', 0, 1, true, false), record('p4', 1, 0, true, false),
  ];
  const summaries = records.map((r, line) => summarizeRollout(r, line)).filter((s): s is RolloutSummary => typeof s !== 'string');
  assert.deepEqual(summaries.map((s) => s.envFailed), [false, true, false, false, true, false, false, false]);
  const badges = groupRollouts(summaries).map((g) => groupBadge(g));
  assert.deepEqual(badges.map((b) => b.status), ['dropped', 'filtered', 'dropped', 'kept']);
  for (const failed of [badges[0], badges[2]]) {
    assert.match(failed?.title ?? '', /^dropped: an episode failed at the env server/);
    assert.doesNotMatch(failed?.title ?? '', /scored the same/);
  }
  assert.match(badges[1]?.title ?? '', /^every rollout scored the same: dynamic sampling drops this group/);
});

test('a group trained although an episode failed (rl.failed_groups keep) is kept; an older record without env_failed reads as before', () => {
  const kept = groupRollouts([rollout(0, 'p1', 0, 1, { kept: true, envFailed: true }), rollout(1, 'p1', 1, 0, { kept: true })]);
  assert.equal(groupBadge(kept[0]!).status, 'kept');
  const old = groupRollouts([rollout(0, 'p1', 0, 1.2), rollout(1, 'p1', 1, 1.2)]);
  assert.deepEqual(groupBadge(old[0]!), { status: 'filtered', title: 'every rollout scored the same: dynamic sampling drops this group' });
});

test('an untrained group whose rewards and correctness both differ was drawn after the step had its groups, not filtered', () => {
  const [extra, accuracyFlat] = groupRollouts([
    rollout(0, 'p1', 0, 1.2, { kept: false }), rollout(1, 'p1', 1, 0, { kept: false }),
    // Rewards differ but both are wrong: dynamic sampling on accuracy drops it.
    rollout(2, 'p2', 0, 0.2, { kept: false, correct: false }), rollout(3, 'p2', 1, 0.1, { kept: false, correct: false }),
  ]);
  assert.equal(groupBadge(extra!).status, 'extra');
  assert.equal(groupBadge(accuracyFlat!).status, 'filtered');
});

test('filters select by outcome, tool use, error class and tool name; groups left empty disappear', () => {
  const rollouts = [
    rollout(0, 'p1', 0, 1.2, { toolCalls: 1, toolNames: ['focus_on_columns_with_mask'] }),
    rollout(1, 'p1', 1, 0.2, { correct: false, errorClasses: ['E4'], toolNames: ['focus_on_columns_with_mask'] }),
    rollout(2, 'p2', 0, 0.1, { correct: false }),
  ];
  const groups = groupRollouts(rollouts);
  const lines = (filter: Partial<typeof NO_FILTER>) => navigationOrder(filterGroups(groups, { ...NO_FILTER, ...filter }));
  assert.deepEqual(lines({}), [0, 1, 2]);
  assert.deepEqual(lines({ outcome: 'correct' }), [0]);
  assert.deepEqual(lines({ outcome: 'incorrect' }), [1, 2]);
  assert.deepEqual(lines({ tools: 'tools' }), [0]);
  assert.deepEqual(lines({ tools: 'none' }), [1, 2]);
  assert.deepEqual(lines({ errorClass: 'E4' }), [1]);
  assert.deepEqual(lines({ errorClass: 'none' }), [0, 2]);
  assert.deepEqual(lines({ toolName: 'focus_on_columns_with_mask' }), [0, 1]);
  assert.equal(filterGroups(groups, { ...NO_FILTER, outcome: 'correct' }).length, 1);
  assert.deepEqual(filterChoices(rollouts), { errorClasses: ['E4'], toolNames: ['focus_on_columns_with_mask'] });
});

test('search matches questions and prompt ids, case-insensitively', () => {
  const groups = groupRollouts([rollout(0, 'table-7', 0, 1, { question: 'How many WINS does Merckx have?' }), rollout(1, 'chart-2', 0, 1, { question: 'Which year?' })]);
  assert.deepEqual(filterGroups(groups, { ...NO_FILTER, search: 'wins' }).map((g) => g.promptId), ['table-7']);
  assert.deepEqual(filterGroups(groups, { ...NO_FILTER, search: 'CHART' }).map((g) => g.promptId), ['chart-2']);
});

test('j/k walk the displayed order and stop at the ends; an unknown current line goes to the first', () => {
  const order = [4, 1, 7];
  assert.equal(stepThrough(order, 4, 1), 1);
  assert.equal(stepThrough(order, 7, 1), 7);
  assert.equal(stepThrough(order, 4, -1), 4);
  assert.equal(stepThrough(order, 99, 1), 4);
  assert.equal(stepThrough([], null, 1), null);
});

test('groups sort by mean reward either way or by reward spread, stably, unscored groups last', () => {
  const groups = groupRollouts([
    rollout(0, 'a', 0, 0.5), rollout(1, 'a', 1, 0.5), // mean 0.5, spread 0
    rollout(2, 'b', 0, 1.0), rollout(3, 'b', 1, 0.0), // mean 0.5, spread 1
    rollout(4, 'c', 0, null), // unscored
    rollout(5, 'd', 0, 0.9), rollout(6, 'd', 1, 0.7), // mean 0.8, spread 0.2
  ]);
  const ids = (order: Parameters<typeof sortGroups>[1]) => sortGroups(groups, order).map((g) => g.promptId);
  assert.deepEqual(ids('file'), ['a', 'b', 'c', 'd']);
  assert.deepEqual(ids('reward-desc'), ['d', 'a', 'b', 'c'], 'ties keep file order');
  assert.deepEqual(ids('reward-asc'), ['a', 'b', 'd', 'c']);
  assert.deepEqual(ids('spread-desc'), ['b', 'd', 'a', 'c']);
  assert.ok(GROUP_ORDERS.every(([order]) => isGroupOrder(order)));
  assert.equal(isGroupOrder('by-vibes'), false);
});

test('a histogram bins values over their range, the maximum in the last bin, nulls counted apart', () => {
  // Range 0..1 in 4 bins of 0.25: [0, .25) [.25, .5) [.5, .75) [.75, 1].
  const h = histogram([0, 0.1, 0.25, 0.5, 0.74, 0.75, 1, null, 1], 4);
  assert.deepEqual(h.edges, [0, 0.25, 0.5, 0.75, 1]);
  assert.deepEqual(h.counts, [2, 1, 2, 3]);
  assert.equal(h.missing, 1);
  assert.deepEqual(histogram([1.2, 1.2, 1.2]), { edges: [1.2, 1.2], counts: [3], missing: 0 });
  assert.deepEqual(histogram([null]), { edges: [], counts: [], missing: 1 });
});

test('the filters offer the step\'s choices, the run\'s from a search across steps, and whatever is chosen, once each and sorted', () => {
  const step = { errorClasses: ['E4'], toolNames: ['zoom_in'] };
  assert.deepEqual(mergeChoices(step, null, NO_FILTER), step);
  assert.deepEqual(mergeChoices(step, { errorClasses: ['E1', 'E4'], toolNames: ['focus_on_columns_with_mask'] }, NO_FILTER), { errorClasses: ['E1', 'E4'], toolNames: ['focus_on_columns_with_mask', 'zoom_in'] });
  // A chosen class the step lacks stays offered; 'none' is its own option, not a class.
  assert.deepEqual(mergeChoices(step, null, { ...NO_FILTER, errorClass: 'E6', toolName: 'ocr' }), { errorClasses: ['E4', 'E6'], toolNames: ['ocr', 'zoom_in'] });
  assert.deepEqual(mergeChoices(step, null, { ...NO_FILTER, errorClass: 'none' }).errorClasses, ['E4']);
});
