"""Calls by target and scanner counts, per RL step and per evaluation, from trajectories in the rollout
contract's layout (each call that ran carries `target`, each scored trajectory `findings`)."""

import pytest

from vistool_trainer.rollouts.target_metrics import FINDINGS, call_target_counts, scan_counts
from vistool_trainer.trainers.evaluate import tools_arm_target_metrics
from vistool_trainer.trainers.grpo import merge_rank_metrics


def _call(ok, target=None):
    call = {"name": "focus_on_x_values_with_mask", "arguments": {}, "ok": ok}
    if target is not None:
        call["target"] = target
    return call


def _trajectory(calls, findings=()):
    return {"turns": [{"role": "assistant", "text": "...", "calls": calls, "errors": [], "answer": None},
                      {"role": "tool", "text": "OBSERVATION", "images": ["a"]}],
            "findings": list(findings)}


TRAJECTORIES = [
    _trajectory([_call(True, "on"), _call(True, "partly")], ["repeated_call"]),
    _trajectory([_call(True, "off"), _call(False)], ["off_target_call", "repeated_call"]),  # a failed call has no target
    _trajectory([_call(True)]),  # an env before targets: unknown
    _trajectory([_call(True, "unknown"), _call(True, "on")], ["answered_without_looking"]),
]


def test_calls_by_target_and_the_on_target_rate():
    counts = call_target_counts(TRAJECTORIES)
    # Worked out by hand: on 2, partly 1, off 1, unknown 2; rate 2 / (2 + 1 + 1).
    assert counts == {"tools/calls_on_target": 2.0, "tools/calls_partly_on_target": 1.0, "tools/calls_off_target": 1.0,
                      "tools/calls_target_unknown": 2.0, "tools/call_on_target_rate": 0.5}
    # Only unknown targets: the rate is left out, the counts stay.
    unknown = call_target_counts([TRAJECTORIES[2]])
    assert "tools/call_on_target_rate" not in unknown
    assert unknown["tools/calls_target_unknown"] == 1.0


def test_scan_counts_every_scanner_every_step():
    counts = scan_counts(TRAJECTORIES + [{"turns": []}])
    assert counts == {"scan/off_target_call": 1.0, "scan/repeated_call": 2.0, "scan/ignored_tool_error": 0.0,
                      "scan/degenerate_edit": 0.0, "scan/format_collapse": 0.0, "scan/answered_without_looking": 1.0}
    assert len(counts) == len(FINDINGS)


def test_two_ranks_add_counts_and_recompute_the_rate_from_the_sums():
    first = {**call_target_counts(TRAJECTORIES[:1]), **scan_counts(TRAJECTORIES[:1])}   # on 1, partly 1: rate 0.5
    second = {**call_target_counts(TRAJECTORIES[1:]), **scan_counts(TRAJECTORIES[1:])}  # on 1, off 1: rate 0.5
    third_rank = {**call_target_counts([_trajectory([_call(True, "on")] * 4)])}          # on 4: rate 1
    merged = merge_rank_metrics([({}, {}, first, 1), ({}, {}, second, 3), ({}, {}, third_rank, 1)])
    assert merged["tools/calls_on_target"] == 6.0
    assert merged["scan/repeated_call"] == 2.0
    # on 6 of 6 + 1 + 1 with a known target, whatever each rank's rate or rollout count was.
    assert merged["tools/call_on_target_rate"] == pytest.approx(6 / 8)


def test_the_evaluations_tools_arm_metrics_follow_vistool_evals_names():
    metrics = tools_arm_target_metrics(TRAJECTORIES)
    assert metrics["eval/call_on_target_rate"] == 0.5
    assert metrics["eval/scan/repeated_call"] == 2.0
    assert sorted(key for key in metrics if key.startswith("eval/scan/")) == sorted(f"eval/scan/{name}" for name in FINDINGS)
    assert "eval/call_on_target_rate" not in tools_arm_target_metrics([TRAJECTORIES[2]])


def test_the_scanner_names_are_the_rollout_records_findings():
    import json
    from pathlib import Path
    schema = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "rollout-record.schema.json").read_text())
    assert list(FINDINGS) == schema["properties"]["findings"]["items"]["enum"]


def test_a_search_episode_counts_its_crops_like_any_call():
    """The calls of the env's nested search episode (test/episodes/episode-targets.test.ts), as the record carries them:
    crops and zooms judged against the scene's target box, each with its plain IoU."""
    from vistool_trainer.rollouts.turn_metrics import turn_metrics

    def crop(name, target, iou):
        return {"name": name, "arguments": {"bbox": [0, 0, 56, 56]}, "ok": True, "target": target, "target_iou": iou}

    calls = [crop("crop", "partly", 1681 / 319872), crop("crop", "on", 1681 / 18816),
             crop("zoom_in", "on", 1681 / 4704), crop("crop", "partly", 320 / 2145)]
    trajectory = {**_trajectory(calls), "end_reason": "answer", "tool_calls": 4}
    counts = call_target_counts([trajectory])
    assert counts["tools/calls_on_target"] == 2.0 and counts["tools/calls_partly_on_target"] == 2.0
    assert counts["tools/call_on_target_rate"] == 0.5  # 2 on of 4 known
    metrics = turn_metrics([trajectory], [True])
    assert metrics["tools/crop_iou_calls"] == 4.0
    assert metrics["tools/crop_iou"] == pytest.approx((1681 / 319872 + 1681 / 18816 + 1681 / 4704 + 320 / 2145) / 4)
