"""Per-tool and per-error-class counts, on trajectories written in the rollout contract's layout."""

from vistool_trainer.trainers.grpo import merge_rank_metrics
from vistool_trainer.rollouts.tool_metrics import tool_use_counts


def _call(name, ok, error_class=None):
    call = {"name": name, "arguments": {}, "ok": ok}
    if error_class:
        call["error"] = {"class": error_class, "message": "...", "tool": name}
    return call


def _turn(calls, extra_errors=()):
    errors = [c["error"] for c in calls if "error" in c] + [{"class": cls, "message": "..."} for cls in extra_errors]
    return {"role": "assistant", "text": "...", "calls": calls, "errors": errors, "answer": None}


TRAJECTORIES = [
    {"turns": [_turn([_call("focus_on_columns_with_mask", True)]), {"role": "tool", "text": "OBSERVATION", "images": ["a"]},
               _turn([_call("focus_on_columns_with_mask", False, "E4")])]},
    {"turns": [_turn([_call("zoom_in", True), _call("delete_everything", False, "E1")])]},
    {"turns": [_turn([], extra_errors=["E1"])]},  # a malformed message: an error of no call
    {"turns": []},
]


def test_counts_by_tool_and_by_error_class():
    counts = tool_use_counts(TRAJECTORIES)
    assert counts == {
        "errors/E1": 2.0, "errors/E2": 0.0, "errors/E3": 0.0, "errors/E4": 1.0, "errors/E5": 0.0, "errors/E6": 0.0,
        "tools/focus_on_columns_with_mask/calls": 1.0, "tools/focus_on_columns_with_mask/failed": 1.0,
        "tools/zoom_in/calls": 1.0,
    }
    # An invented tool name (E1) never becomes a series of its own.
    assert not any("delete_everything" in key for key in counts)


def test_counts_from_two_ranks_add_up_while_means_are_weighted():
    first = tool_use_counts(TRAJECTORIES[:2])
    second = tool_use_counts(TRAJECTORIES[2:])
    merged = merge_rank_metrics([({}, {}, {**first, "reward/mean": 1.0}, 2), ({}, {}, {**second, "reward/mean": 0.0}, 2)])
    whole = tool_use_counts(TRAJECTORIES)
    assert {key: merged[key] for key in whole} == whole
    assert merged["reward/mean"] == 0.5
