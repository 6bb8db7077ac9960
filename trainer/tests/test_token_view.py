"""The token view is matched back to the sampled turns by token id, or not recorded at all."""

from vistool_trainer.rollouts.token_view import ScoredPositions, token_view as token_ids_view, with_token_text


def token_view(messages, turns, scored, decode):
    """The view as the record carries it: matched by id, then given its text."""
    view = token_ids_view(messages, turns, scored)
    return None if view is None else with_token_text(view, decode)

MESSAGES = [
    {"role": "system", "content": []},
    {"role": "user", "content": []},
    {"role": "assistant", "content": [], "token_ids": [11, 12, 2]},
    {"role": "tool", "content": []},
    {"role": "assistant", "content": [], "token_ids": [13, 2]},
]
TURNS = [{"role": "assistant"}, {"role": "tool"}, {"role": "assistant"}]


def decode(token: int) -> str:
    return {11: "<think>", 12: "hi", 13: "7", 2: "<|im_end|>"}[token]


def test_one_sequence_spelling_both_turns_gives_one_entry_per_assistant_turn():
    scored = [ScoredPositions([11, 12, 2, 13, 2], [-0.123456, -1.0, -0.01, -2.5, -0.2], [0.5, 1.25, 0.1, 2.0, 0.3])]
    assert token_view(MESSAGES, TURNS, scored, decode) == [
        {"turn": 0, "tokens": ["<think>", "hi", "<|im_end|>"], "logprob": [-0.1235, -1.0, -0.01], "entropy": [0.5, 1.25, 0.1], "mask": [1, 1, 1]},
        {"turn": 2, "tokens": ["7", "<|im_end|>"], "logprob": [-2.5, -0.2], "entropy": [2.0, 0.3], "mask": [1, 1]},
    ]


def test_a_sequence_per_turn_reads_the_same():
    scored = [ScoredPositions([11, 12, 2], [-0.1, -1.0, -0.01], [0.5, 1.25, 0.1]), ScoredPositions([13, 2], [-2.5, -0.2], [2.0, 0.3])]
    assert [entry["turn"] for entry in token_view(MESSAGES, TURNS, scored, decode)] == [0, 2]


def test_positions_that_do_not_spell_the_turns_record_nothing():
    # A turn trained twice (its tokens in two sequences), a missing token, an extra one.
    twice = [ScoredPositions([11, 12, 2], [0.0] * 3, [0.0] * 3), ScoredPositions([11, 12, 2, 13, 2], [0.0] * 5, [0.0] * 5)]
    assert token_view(MESSAGES, TURNS, twice, decode) is None
    assert token_view(MESSAGES, TURNS, [ScoredPositions([11, 12, 13, 2], [0.0] * 4, [0.0] * 4)], decode) is None
    assert token_view(MESSAGES, TURNS, [ScoredPositions([11, 12, 2, 13, 2, 5], [0.0] * 6, [0.0] * 6)], decode) is None
    assert token_view(MESSAGES, TURNS[:1], [ScoredPositions([11, 12, 2, 13, 2], [0.0] * 5, [0.0] * 5)], decode) is None
