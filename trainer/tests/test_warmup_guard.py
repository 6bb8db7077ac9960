"""The warm-up guard (algorithms/warmup_guard.py): a later SFT phase that lowers an earlier phase's
skill by more than the margin is found, once, with the numbers issue 40 measured."""
from vistool_trainer.algorithms.warmup_guard import ERODED_MARGIN, PhaseEnd, WarmupGuard, eroded_skills

ANSWER, CALL, CALL_NO_IMAGES = "sft/probe_answer_after_tool_acc", "sft/probe_call_acc", "sft/probe_call_without_images_acc"


def test_issue_40_erosion_is_found_at_each_later_phase():
    # Issue 40, seed 1 on another CPU: reading 0.95 when its phase ended at 550, 0.81 after the
    # tool trajectories (600), 0.75 when the mixture ended (650); the calls stayed right.
    ends = [PhaseEnd("answers_after_tool", 550, {ANSWER: 0.95, CALL_NO_IMAGES: 1.0, CALL: 0.2}),
            PhaseEnd("tool_trajectories", 600, {ANSWER: 0.81, CALL_NO_IMAGES: 1.0, CALL: 0.95}),
            PhaseEnd("mixture", 650, {ANSWER: 0.75, CALL_NO_IMAGES: 1.0, CALL: 0.97})]
    found = eroded_skills(ends)
    assert [(e.skill, e.taught_by, e.lowered_by, e.lowered_step) for e in found] == [
        (ANSWER, "answers_after_tool", "tool_trajectories", 600), (ANSWER, "answers_after_tool", "mixture", 650)]
    assert [round(e.drop, 2) for e in found] == [0.14, 0.20]
    assert "0.95" in found[0].message() and "0.81" in found[0].message()


def test_drops_within_the_margin_and_rises_are_not_erosion():
    assert ERODED_MARGIN == 0.1
    ends = [PhaseEnd("answers_after_tool", 500, {ANSWER: 0.9, CALL_NO_IMAGES: 0.92}),
            PhaseEnd("tool_trajectories", 550, {ANSWER: 0.8, CALL_NO_IMAGES: 1.0, CALL: 0.94}),  # exactly 0.1: not more
            PhaseEnd("mixture", 600, {ANSWER: 0.95, CALL_NO_IMAGES: 0.83, CALL: 0.8})]
    found = eroded_skills(ends)
    # Only the call with the chart in view (0.94 -> 0.80) counts; the call without images is a stepping stone, not a skill held.
    assert [(e.skill, e.rate_then, e.rate_now) for e in found] == [(CALL, 0.94, 0.8)]
    faded = [PhaseEnd("answers_after_tool", 550, {ANSWER: 0.95, CALL_NO_IMAGES: 1.0}), PhaseEnd("mixture", 650, {ANSWER: 0.95, CALL_NO_IMAGES: 0.64})]
    assert eroded_skills(faded) == []


def test_a_skill_the_probe_did_not_measure_is_skipped():
    assert eroded_skills([PhaseEnd("answers_after_tool", 100, {ANSWER: 0.9}), PhaseEnd("mixture", 150, {})]) == []


def test_the_guard_reports_each_erosion_once_when_the_lowering_phase_ends():
    guard = WarmupGuard()
    assert guard.observe(500, "answers_after_tool", {ANSWER: 0.6, CALL_NO_IMAGES: 1.0}) == []
    assert guard.observe(550, "answers_after_tool", {ANSWER: 0.95, CALL_NO_IMAGES: 1.0, "sft/loss": 0.1}) == []
    assert guard.observe(600, "tool_trajectories", {ANSWER: 0.81, CALL: 0.95}) == []  # the phase has not ended yet
    found = guard.observe(650, "mixture", {ANSWER: 0.75, CALL: 0.97})
    assert [(e.lowered_by, e.rate_then, e.rate_now) for e in found] == [("tool_trajectories", 0.95, 0.81)]
    assert guard.observe(700, "mixture", {ANSWER: 0.7, CALL: 0.97}) == []
    found = guard.finish()
    assert [(e.lowered_by, e.lowered_step, e.rate_now) for e in found] == [("mixture", 700, 0.7)]
    assert guard.finish() == []
    assert guard.observe(750, "mixture", {"sft/loss": 0.2}) == []  # a record without probe rates changes nothing
