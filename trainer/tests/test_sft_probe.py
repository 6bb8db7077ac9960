"""The SFT probe (sft.probe_tasks): which gold turns of held-out conversations the policy would
write, teacher-forced. Checked against greedy decoding, the thing it stands in for."""
import pytest

from test_sft_phases import CALL, DIRECT_CONVERSATION, TOOL_CONVERSATION, USER, SYSTEM, RESULT, ANSWER, _policy
from vistool_trainer.config import SftConfig, from_dict
from vistool_trainer.model.conversation import Conversation
from vistool_trainer.trainers.sft import run_sft
from vistool_trainer.trainers.sft_probe import SftProbe, first_difference, reproduced_turns, split_probe, trained_runs, turn_kinds


def test_turn_kinds_name_calls_answers_after_a_tool_result_and_direct_answers():
    assert turn_kinds(TOOL_CONVERSATION) == ["call", "answer_after_tool"]
    assert turn_kinds(DIRECT_CONVERSATION) == ["direct_answer"]


def test_each_run_of_trained_tokens_is_one_turn_and_its_first_token_is_not_judged():
    mask = [False, True, True, True, False, False, True, True]
    assert trained_runs(mask) == [(1, 4), (6, 8)]
    # Turn 1 misses only its first token (the call-or-answer choice): reproduced. Turn 2 misses its second.
    matches = [False, False, True, True, False, False, True, False]
    assert reproduced_turns(matches, mask) == [True, False]
    assert trained_runs([True, True]) == [(0, 2)] and trained_runs([False]) == []


def test_the_probe_holds_out_the_last_tasks_and_refuses_to_hold_out_all():
    assert split_probe([1, 2, 3, 4], 0) == ([1, 2, 3, 4], [])
    assert split_probe([1, 2, 3, 4], 1) == ([1, 2, 3], [4])
    with pytest.raises(ValueError, match="sft.probe_tasks 4 would hold out all 4"):
        split_probe([1, 2, 3, 4], 4)


def _greedy_turn(policy, prefix):
    return policy.sample_turns([prefix], max_new_tokens=40, temperature=1.0, greedy=True)[0].text


def test_the_probe_agrees_with_greedy_decoding_before_and_after_the_policy_learns_the_conversation():
    policy = _policy()
    probe = SftProbe.build(policy, [TOOL_CONVERSATION])
    # Untrained: greedy decoding writes neither gold turn, and the probe reproduces neither.
    assert _greedy_turn(policy, [SYSTEM, USER]) != CALL["content"][0]["text"]
    assert probe.measure(policy) == {"sft/probe_call_acc": 0.0, "sft/probe_answer_after_tool_acc": 0.0, "sft/probe_call_without_images_acc": 0.0}

    run_sft(policy, [TOOL_CONVERSATION], from_dict(SftConfig, {"steps": 60, "batch_size": 2, "lr": 3e-3, "weight_decay": 0.0}), seed=1,
            on_step=lambda *_: None)
    # Trained on it: greedy decoding writes both gold turns word for word, and the probe says so.
    assert _greedy_turn(policy, [SYSTEM, USER]) == CALL["content"][0]["text"]
    assert _greedy_turn(policy, [SYSTEM, USER, CALL, RESULT]) == ANSWER["content"][0]["text"]
    measured = probe.measure(policy)
    assert (measured["sft/probe_call_acc"], measured["sft/probe_answer_after_tool_acc"]) == (1.0, 1.0)
    # Trained with the image in view only, the call without it is another context: measured on its own.
    assert "sft/probe_call_without_images_acc" in measured
    assert policy.model.training  # the probe puts the model back as it found it


def _first_turn_choice(policy) -> str:
    """What greedy decoding writes first to the shared prompt: 'call', 'direct', or 'other'."""
    text = _greedy_turn(policy, [SYSTEM, USER])
    return "call" if text.startswith("<tool_call>") else "direct" if text.startswith("<answer>") else "other"


@pytest.mark.parametrize("trained_on, chunk", [("direct", 16), ("call", 16), ("direct", 1), ("call", 1)])
def test_the_choice_probe_names_the_first_turn_greedy_decoding_writes(trained_on, chunk):
    """The call and the direct answer part at their first token; the probe's choice there is checked
    against what greedy decoding writes (the independent judge), with the two first turns padded
    in one batch (chunk 16) and each in its own (chunk 1)."""
    policy = _policy()
    probe = SftProbe.build(policy, [TOOL_CONVERSATION, DIRECT_CONVERSATION], choice_pairs=[(0, 1)])
    conversation = DIRECT_CONVERSATION if trained_on == "direct" else TOOL_CONVERSATION
    run_sft(policy, [conversation], from_dict(SftConfig, {"steps": 60, "batch_size": 2, "lr": 3e-3, "weight_decay": 0.0}), seed=1,
            on_step=lambda *_: None)
    assert _first_turn_choice(policy) == trained_on
    measured = probe.measure(policy, chunk=chunk)
    expected = {"direct": (1.0, 0.0), "call": (0.0, 1.0)}[trained_on]
    assert (measured["sft/probe_first_turn_direct_rate"], measured["sft/probe_first_turn_call_rate"]) == expected


def test_an_untrained_policy_writes_neither_first_turn_and_the_probe_says_so():
    policy = _policy()
    assert _first_turn_choice(policy) == "other"
    measured = SftProbe.build(policy, [TOOL_CONVERSATION, DIRECT_CONVERSATION], choice_pairs=[(0, 1)]).measure(policy)
    assert (measured["sft/probe_first_turn_direct_rate"], measured["sft/probe_first_turn_call_rate"]) == (0.0, 0.0)


def test_a_choice_pair_that_is_not_one_prompt_answered_two_ways_is_refused():
    policy = _policy()
    with pytest.raises(ValueError, match="must open with a tool call and the second with a direct answer"):
        SftProbe.build(policy, [DIRECT_CONVERSATION, TOOL_CONVERSATION], choice_pairs=[(0, 1)])
    other_question = {"role": "user", "content": [USER["content"][0], {"type": "text", "text": "Is E low, medium or high?"}]}
    with pytest.raises(ValueError, match="do not answer the same prompt"):
        SftProbe.build(policy, [TOOL_CONVERSATION, Conversation.from_messages([SYSTEM, other_question, ANSWER])], choice_pairs=[(0, 1)])
    # Without pairs there is no choice rate at all (the text arm's probe).
    assert "sft/probe_first_turn_direct_rate" not in SftProbe.build(policy, [DIRECT_CONVERSATION]).measure(policy)


def test_first_difference_is_the_first_token_where_the_two_first_turns_part():
    policy = _policy()
    call = policy.encoder.training_segments(TOOL_CONVERSATION)[0]
    direct = policy.encoder.training_segments(DIRECT_CONVERSATION)[0]
    position = first_difference(call, direct)
    start = direct.loss_mask.index(1)
    # Computed here from the token ids: the first trained index where they differ.
    expected = next(i for i in range(start, len(direct.input_ids)) if call.input_ids[i] != direct.input_ids[i])
    assert position == expected and call.input_ids[:position] == direct.input_ids[:position]
    assert first_difference(call, call) is None
