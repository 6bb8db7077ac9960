import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actionError } from '../../env/core/errors.js';
import { DEFAULT_REWARD_CONFIG, type RewardConfig } from '../../env/rewards/config.js';
import { resolveRewardConfig } from '../../env/rewards/resolve-config.js';
import { scoreTrajectory, totalReward, type ScoredTrajectory } from '../../env/rewards/score.js';
import { answerTurn, call, callTurn, direct, maskCall, observation, trajectory, withTool } from './trajectories.js';

const close = (actual: number, expected: number, what = 'reward'): void =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what} ${actual}, expected ${expected}`);

function config(overrides: unknown): RewardConfig {
  return resolveRewardConfig(overrides);
}

/** The breakdown must always reproduce the total. */
function consistent(result: ScoredTrajectory, cfg: RewardConfig = DEFAULT_REWARD_CONFIG): ScoredTrajectory {
  close(totalReward(result.components, result.weights, cfg), result.reward, 'recomputed total');
  return result;
}

test('defaults: a correct answer after a successful tool call earns 0.8 + 0.2 + 0.2 = 1.2', () => {
  const r = consistent(scoreTrajectory(withTool('7'), '7'));
  close(r.reward, 1.2);
  assert.equal(r.correct, true);
  assert.deepEqual(r.weights, { accuracy: 0.8, format: 0.2, tool_bonus: 0.2, tool_use: 0, efficiency: 0 });
  assert.equal(r.components.accuracy, 1);
  assert.equal(r.components.format, 1);
  assert.equal(r.components.tool_bonus, 1);
  assert.equal(r.components.no_tool_factor, 1);
});

test('defaults: a correct direct answer is down-weighted to (0.8 + 0.2) × 0.8 = 0.8', () => {
  const r = consistent(scoreTrajectory(direct('7'), '7'));
  close(r.reward, 0.8);
  assert.equal(r.correct, true);
  assert.equal(r.components.tool_bonus, 0);
  assert.equal(r.components.no_tool_factor, 0.8);
});

test('defaults: a wrong answer earns only its format, and the conditional bonus is not paid', () => {
  close(consistent(scoreTrajectory(withTool('9'), '7')).reward, 0.2);
  close(consistent(scoreTrajectory(direct('9'), '7')).reward, 0.2 * 0.8);
  assert.equal(scoreTrajectory(withTool('9'), '7').components.tool_bonus, 0);
});

test('a failed tool call is not tool use: no bonus, and the no-tool factor applies', () => {
  const failed = call('focus_on_columns_with_mask', { columns: ['Nation'] }, false, actionError('E4', "unknown column 'Nation'", 'focus_on_columns_with_mask'));
  const t = trajectory([callTurn([failed]), observation('ERROR [E4]: unknown column'), answerTurn('7')]);
  const r = consistent(scoreTrajectory(t, '7'));
  close(r.reward, (0.8 + 0.2) * 0.8);
  assert.equal(r.components.tool_use, 0);
});

test('format is the share of well-formed turns: one unparseable turn in four gives 0.8 + 0.2 × 3/4 + 0.2 = 1.15', () => {
  const garbled = { role: 'assistant' as const, text: '<tool_call>{"name": focus</tool_call>', calls: [], errors: [actionError('E1', 'the tool call is not valid JSON')], answer: null };
  const t = trajectory([garbled, { role: 'user', text: 'ERROR [E1]: ...', images: [] }, callTurn([maskCall]), observation(), callTurn([call('focus_on_rows_with_draw', { rows: ['Belgium'] })]), observation(), answerTurn('7')]);
  const r = consistent(scoreTrajectory(t, '7'));
  close(r.components.format ?? NaN, 3 / 4, 'format');
  close(r.reward, 0.8 + 0.2 * 0.75 + 0.2);
  assert.ok(r.notes.some((n) => n.includes('assistant turn 1') && n.includes('E1')));
});

test('deepeyes format mode: −1 on an unbalanced tag, and the no-tool factor leaves a negative total alone', () => {
  const cfg = config({ format: { mode: 'deepeyes' } });
  const unbalanced = trajectory([answerTurn('7', '<think>reading the chart <think> still</think><answer>7</answer>')]);
  const right = consistent(scoreTrajectory(unbalanced, '7', cfg), cfg);
  assert.equal(right.components.format, -1);
  close(right.reward, (0.8 - 0.2) * 0.8);
  const wrong = consistent(scoreTrajectory(trajectory([answerTurn('9', '<think>x<answer>9</answer>')]), '7', cfg), cfg);
  close(wrong.reward, -0.2);
  const clean = consistent(scoreTrajectory(withTool('7'), '7', cfg), cfg);
  assert.equal(clean.components.format, 0);
  close(clean.reward, 0.8 + 0.2);
});

test('require_think and require_answer_tags make untagged turns malformed', () => {
  const cfg = config({ format: { require_think: true, require_answer_tags: true } });
  const bare = trajectory([callTurn([maskCall], '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Country", "Wins"]}}</tool_call>'), observation(), answerTurn('7', 'The answer is 7.')]);
  const r = consistent(scoreTrajectory(bare, '7', cfg), cfg);
  assert.equal(r.components.format, 0);
  close(r.reward, 0.8 + 0.2);
  assert.equal(scoreTrajectory(withTool('7'), '7', cfg).components.format, 1);
});

test('repetition dominates: the same call twice caps a correct tool answer at −1', () => {
  const t = trajectory([callTurn([maskCall]), observation(), callTurn([call('focus_on_columns_with_mask', { columns: ['Country', 'Wins'] })]), observation(), answerTurn('7')]);
  const r = consistent(scoreTrajectory(t, '7'));
  assert.equal(r.components.repetition, 1);
  assert.equal(r.reward, -1);
  assert.equal(r.correct, true, 'correctness is still reported for accuracy metrics');
  assert.ok(r.notes.some((n) => n.includes('focus_on_columns_with_mask') && n.includes('2 times')));
  // Below every clean trajectory, including a wrong direct answer with the worst format.
  const worstClean = scoreTrajectory(trajectory([answerTurn('9', '<think>')]), '7', config({ format: { mode: 'deepeyes' } }));
  assert.ok(r.reward < worstClean.reward);
});

test('repetition dominates: a generation loop inside one turn caps the total at the configured penalty', () => {
  const loop = `<think>${'the value of wins is seven so '.repeat(6)}</think><answer>7</answer>`;
  const cfg = config({ repetition: { penalty: -0.5 } });
  const r = consistent(scoreTrajectory(withTool('7'), '7', cfg), cfg);
  assert.equal(r.components.repetition, 0);
  const looped = consistent(scoreTrajectory(trajectory([callTurn([maskCall]), observation(), answerTurn('7', loop)]), '7', cfg), cfg);
  assert.equal(looped.components.repetition, 1);
  assert.equal(looped.reward, -0.5);
});

test('repetition does not fire on distinct calls or on a phrase that opens every turn', () => {
  const opener = 'Let me focus on the relevant part of the table first.';
  const t = trajectory([
    callTurn([maskCall], `<think>${opener}</think><tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Country", "Wins"]}}</tool_call>`),
    observation(),
    callTurn([call('focus_on_rows_with_highlight', { rows: ['Belgium'] })], `<think>${opener}</think><tool_call>{"name": "focus_on_rows_with_highlight", "arguments": {"rows": ["Belgium"]}}</tool_call>`),
    observation(),
    callTurn([call('focus_on_columns_with_mask', { columns: ['Wins'] })], `<think>${opener}</think><tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}</tool_call>`),
    observation(),
    answerTurn('7'),
  ]);
  const r = scoreTrajectory(t, '7');
  assert.equal(r.components.repetition, 0);
  close(r.reward, 1.2);
});

test('an overlong answer scores 0 accuracy (DeepEyes: 1000 characters), and nothing else changes', () => {
  const long = `7 ${Array.from({ length: 250 }, (_, i) => `w${i}`).join(' ')}`; // long, but no loop
  assert.ok(long.length >= 1000);
  const r = consistent(scoreTrajectory(withTool(long), '7'));
  assert.equal(r.components.overlong, 1);
  assert.equal(r.components.accuracy, 0);
  assert.equal(r.correct, false);
  close(r.reward, 0.2);
  const justUnder = 'x'.repeat(999);
  assert.equal(scoreTrajectory(withTool(justUnder), '7').components.overlong, 0);
});

test('an episode cut off without an answer scores accuracy 0 and says why', () => {
  const t = trajectory([callTurn([maskCall]), observation(), callTurn([call('focus_on_rows_with_mask', { rows: ['Belgium'] })]), observation()]);
  const r = consistent(scoreTrajectory(t, '7'));
  assert.equal(r.correct, false);
  close(r.reward, 0.2);
  assert.ok(r.notes.some((n) => n.includes('no final answer') && n.includes('max_turns')));
});

test('efficiency, when weighted, falls linearly from free_turns to max_turns', () => {
  const cfg = config({ weights: { efficiency: 0.1 } });
  const four = trajectory([callTurn([maskCall]), observation(), callTurn([call('focus_on_rows_with_mask', { rows: ['Belgium'] })]), observation(), callTurn([call('focus_on_rows_with_draw', { rows: ['Belgium'] })]), observation(), answerTurn('7')]);
  const r = consistent(scoreTrajectory(four, '7', cfg), cfg);
  close(r.components.efficiency ?? NaN, (6 - 4) / (6 - 2), 'efficiency');
  close(r.reward, 0.8 + 0.2 + 0.2 + 0.1 * 0.5);
  close(scoreTrajectory(withTool('7'), '7', cfg).components.efficiency ?? NaN, 1, 'two turns are free');
});

test('an unconditional tool bonus is available but off by default', () => {
  const cfg = config({ weights: { tool_use: 0.1 } });
  close(consistent(scoreTrajectory(withTool('9'), '7', cfg), cfg).reward, 0.2 + 0.1);
  close(scoreTrajectory(withTool('9'), '7').reward, 0.2);
});

test('no_tool_factor 1 switches the down-weighting off', () => {
  const cfg = config({ tool: { no_tool_factor: 1 } });
  close(scoreTrajectory(direct('7'), '7', cfg).reward, 1);
});

test('require_well_formed withholds accuracy from a trajectory with a malformed turn', () => {
  const cfg = config({ answer: { require_well_formed: true } });
  const t = trajectory([{ role: 'assistant', text: 'hmm', calls: [], errors: [], answer: null }, { role: 'user', text: 'ERROR [E1]', images: [] }, answerTurn('7')]);
  const r = consistent(scoreTrajectory(t, '7', cfg), cfg);
  assert.equal(r.correct, false);
  assert.equal(r.components.accuracy, 0);
  close(r.reward, 0.2 * 0.5 * 0.8);
});

test('list answers give partial accuracy through F1', () => {
  const r = consistent(scoreTrajectory(withTool('Belgium'), ['Belgium', 'France']));
  assert.equal(r.correct, false);
  close(r.reward, 0.8 * (2 / 3) + 0.2);
});

test('judge "average": a paraphrase the rule misses earns half accuracy and is not called correct', () => {
  const paraphrase = direct('the Kingdom of Belgium');
  const r = consistent(scoreTrajectory(paraphrase, 'Belgium', DEFAULT_REWARD_CONFIG, { status: 'ok', correct: true, cached: false }));
  assert.equal(r.components.accuracy, 0.5);
  assert.equal(r.components.accuracy_rule, 0);
  assert.equal(r.components.accuracy_judge, 1);
  assert.equal(r.correct, false);
  close(r.reward, (0.8 * 0.5 + 0.2) * 0.8);
});

test('judge "replace" decides alone and "either" takes the more generous channel', () => {
  const yes = { status: 'ok' as const, correct: true, cached: false };
  const no = { status: 'ok' as const, correct: false, cached: false };
  const replace = config({ judge: { mode: 'replace' } });
  const either = config({ judge: { mode: 'either' } });
  const paraphrase = withTool('the Kingdom of Belgium');
  close(consistent(scoreTrajectory(paraphrase, 'Belgium', replace, yes), replace).reward, 1.2);
  close(consistent(scoreTrajectory(withTool('Belgium'), 'Belgium', replace, no), replace).reward, 0.2);
  close(consistent(scoreTrajectory(paraphrase, 'Belgium', either, yes), either).reward, 1.2);
  close(consistent(scoreTrajectory(withTool('Belgium'), 'Belgium', either, no), either).reward, 1.2);
});

test('a failed judge leaves the rule reward in charge and is recorded', () => {
  const r = consistent(scoreTrajectory(withTool('7'), '7', DEFAULT_REWARD_CONFIG, { status: 'error', reason: 'judge unreachable' }));
  close(r.reward, 1.2);
  assert.equal(r.components.judge_failed, 1);
  assert.equal(r.components.accuracy_judge, undefined);
  assert.ok(r.notes.some((n) => n.includes('judge unreachable')));
});

test('every judged trajectory carries judge_failed 0 or 1, so its mean is the share of failed judgements', () => {
  const yes = { status: 'ok' as const, correct: true, cached: false };
  const failed = { status: 'error' as const, reason: 'judge unreachable' };
  const flags = [yes, failed, yes, yes].map((verdict) => scoreTrajectory(withTool('7'), '7', DEFAULT_REWARD_CONFIG, verdict).components.judge_failed);
  assert.deepEqual(flags, [0, 1, 0, 0]);
  assert.equal(scoreTrajectory(withTool('7'), '7', DEFAULT_REWARD_CONFIG).components.judge_failed, undefined, 'no judge, no flag');
});

test('a judge/rule disagreement says why the accuracy is halved', () => {
  const no = { status: 'ok' as const, correct: false, cached: false };
  const r = scoreTrajectory(withTool('7'), '7', DEFAULT_REWARD_CONFIG, no);
  assert.equal(r.components.accuracy, 0.5);
  assert.ok(r.notes.includes('the judge says wrong and the rule correct: accuracy 0.5 (judge.mode average)'), r.notes.join('; '));
  const agree = scoreTrajectory(withTool('7'), '7', DEFAULT_REWARD_CONFIG, { status: 'ok', correct: true, cached: false });
  assert.ok(!agree.notes.some((n) => n.includes('the judge says')));
});

test('a judge cannot rescue a missing or an overlong answer', () => {
  const yes = { status: 'ok' as const, correct: true, cached: false };
  const cut = trajectory([callTurn([maskCall]), observation()]);
  assert.equal(scoreTrajectory(cut, '7', config({ judge: { mode: 'replace' } }), yes).correct, false);
  assert.equal(scoreTrajectory(withTool('7'.repeat(1000)), '7', config({ judge: { mode: 'replace' } }), yes).correct, false);
});

test("tool_bonus_requires 'on_target': the bonus needs a call that ran on target; partly, off and unknown earn none and say why", () => {
  const cfg = config({ tool: { tool_bonus_requires: 'on_target' } });
  const targeted = (target: 'on' | 'partly' | 'off' | 'unknown' | undefined) =>
    trajectory([callTurn([{ ...maskCall, ...(target ? { target } : {}) }]), observation(), answerTurn('7')]);
  // On target: 0.8 accuracy + 0.2 format + 0.2 bonus.
  close(consistent(scoreTrajectory(targeted('on'), '7', cfg), cfg).reward, 1.2);
  for (const target of ['partly', 'off', 'unknown', undefined] as const) {
    const r = consistent(scoreTrajectory(targeted(target), '7', cfg), cfg);
    // No bonus; a call ran, so the no-tool factor stays 1: 0.8 + 0.2 = 1.0.
    close(r.reward, 1.0, `reward with target ${target}`);
    assert.equal(r.components.tool_bonus, 0);
    assert.equal(r.components.no_tool_factor, 1);
    assert.ok(r.notes.some((n) => n.includes("tool_bonus_requires is 'on_target'") && n.includes(`1 ${target ?? 'unknown'}`)), r.notes.join('; '));
  }
  // 'success' (the default) pays for the partly call as before: 1.2.
  close(scoreTrajectory(targeted('partly'), '7').reward, 1.2);
  // A wrong answer earns no bonus either way, and no note about it: 0.2 format only.
  const wrong = scoreTrajectory(targeted('off'), '8', cfg);
  close(wrong.reward, 0.2);
  assert.ok(!wrong.notes.some((n) => n.includes('tool_bonus_requires')));
  // One call on target among others is enough.
  const mixed = trajectory([callTurn([{ ...maskCall, target: 'off' }]), observation(), callTurn([{ ...maskCall, arguments: { columns: ['Wins'] }, target: 'on' }]), observation(), answerTurn('7')]);
  close(scoreTrajectory(mixed, '7', cfg).reward, 1.2);
});

test('tool_bonus_requires takes only success or on_target', () => {
  assert.throws(() => resolveRewardConfig({ tool: { tool_bonus_requires: 'partly' } }), /rewards\.tool\.tool_bonus_requires: must be one of "success", "on_target"/u);
  assert.equal(resolveRewardConfig({}).tool.tool_bonus_requires, 'success');
});
