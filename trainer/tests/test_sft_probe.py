"""The SFT probe (sft.probe_tasks): which gold turns of held-out conversations the policy would
write, teacher-forced. Checked against greedy decoding, the thing it stands in for."""
import pytest

from test_sft_phases import CALL, DIRECT_CONVERSATION, TOOL_CONVERSATION, USER, SYSTEM, RESULT, ANSWER, _policy
from vistool_trainer.config import SftConfig, from_dict
from vistool_trainer.trainers.sft import run_sft
from vistool_trainer.trainers.sft_probe import SftProbe, reproduced_turns, split_probe, trained_runs, turn_kinds


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
