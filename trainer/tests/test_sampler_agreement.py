"""training/rollout_probs_diff_* (rollouts/sampler_agreement.py): the engine's probabilities of the
tokens it sampled against the trainer's, token by token; expected values worked out by hand."""
import math

import pytest

from vistool_trainer.rollouts.sampler_agreement import rollout_probs_diff, sampled_and_scored, sampler_agreement
from vistool_trainer.rollouts.token_view import ScoredPositions


def turn(ids, log_probs=None):
    message = {"role": "assistant", "content": [{"type": "text", "text": "x"}], "token_ids": ids}
    if log_probs is not None:
        message["sampler_log_probs"] = log_probs
    return message


USER = {"role": "user", "content": [{"type": "text", "text": "Q"}]}
TOOL = {"role": "tool", "content": [{"type": "text", "text": "OBSERVATION"}]}


def test_the_statistics_are_verls_over_probabilities():
    pairs = [([math.log(0.5), math.log(0.2)], [math.log(0.4), math.log(0.2)]), ([math.log(0.9)], [math.log(0.6)])]
    metrics = rollout_probs_diff(pairs)
    diffs = [0.1, 0.0, 0.3]
    mean = sum(diffs) / 3
    assert metrics["training/rollout_probs_diff_max"] == pytest.approx(0.3)
    assert metrics["training/rollout_probs_diff_mean"] == pytest.approx(mean)
    assert metrics["training/rollout_probs_diff_std"] == pytest.approx(math.sqrt(sum((d - mean) ** 2 for d in diffs) / 3))
    assert rollout_probs_diff([]) == {}


def test_turns_are_matched_to_the_scored_positions_of_their_rollout_in_order():
    messages = [USER, turn([5, 6], [-0.1, -0.2]), TOOL, turn([7], [-0.3])]
    one_sequence = [ScoredPositions([5, 6, 7], [-0.1, -0.25, -0.3], [0, 0, 0])]
    assert sampled_and_scored(messages, one_sequence) == ([-0.1, -0.2, -0.3], [-0.1, -0.25, -0.3])
    per_turn = [ScoredPositions([5, 6], [-0.1, -0.25], [0, 0]), ScoredPositions([7], [-0.3], [0])]
    assert sampled_and_scored(messages, per_turn) == ([-0.1, -0.2, -0.3], [-0.1, -0.25, -0.3])


def test_rollouts_without_engine_log_probs_or_with_other_scored_tokens_are_left_out():
    scored = [ScoredPositions([5, 6], [-0.1, -0.2], [0, 0])]
    assert sampled_and_scored([USER, turn([5, 6])], scored) is None  # the transformers sampler returns none
    assert sampled_and_scored([USER, turn([5, 9], [-0.1, -0.2])], scored) is None
    # Two rollouts; sequence 1 belongs to rollout 0, sequence 0 to rollout 1.
    rollouts = [[USER, turn([1], [math.log(0.5)])], [USER, turn([2], [math.log(0.25)])]]
    metrics = sampler_agreement(rollouts, [1, 0], [ScoredPositions([2], [math.log(0.25)], [0]), ScoredPositions([1], [math.log(0.25)], [0])])
    assert metrics["training/rollout_probs_diff_max"] == pytest.approx(0.25)
    assert metrics["training/rollout_probs_diff_mean"] == pytest.approx(0.125)
    assert sampler_agreement([[USER, turn([1])]], [0], [ScoredPositions([1], [-1.0], [0])]) == {}
