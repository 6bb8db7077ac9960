"""Deep multi-turn search, measured per RL step and per evaluation (issue 45), from the trajectory
records the env server returns (docs/CONTRACTS.md, Rollout record).

Names (stable):
- `rollout/turns_to_answer`: the mean number of assistant turns of the episodes that answered
  (end_reason 'answer'); left out when none did. `rollout/answered` counts those episodes.
- `rollout/calls_per_correct`: tool calls that ran / correct answers, over the step's episodes;
  left out when none was correct.
- `tools/crop_iou`: the mean, over zoom calls that ran on a task with a target box (zoom_in on a
  chart or table with gold bands; zoom_in and crop on a search scene), of the crop's IoU with that
  box (the call record's `target_iou`, computed by the env server where the target is known:
  env/episodes/call-target.ts, zoomTargetIou); left out when no call had one (tasks without a
  target box report nothing). `tools/crop_iou_calls` counts those calls.

Means of different populations (answered episodes, measured calls), so a multi-rank step merges
them with `merge_turn_metrics`, weighting by those counts, never by rollouts. Evaluations name the
tools arm's values `eval/turns_to_answer`, `eval/calls_per_correct`, `eval/crop_iou` (`eval_turn_metrics`).
Pure: no torch, no I/O.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

TURNS_TO_ANSWER = "rollout/turns_to_answer"
ANSWERED = "rollout/answered"
CALLS_PER_CORRECT = "rollout/calls_per_correct"
CROP_IOU = "tools/crop_iou"
CROP_IOU_CALLS = "tools/crop_iou_calls"
ANSWER_END_REASON = "answer"


def assistant_turns(trajectory: Mapping[str, Any]) -> int:
    return sum(1 for turn in trajectory.get("turns") or [] if turn.get("role") == "assistant")


def turns_to_answer(trajectories: Iterable[Mapping[str, Any]]) -> tuple[float | None, int]:
    """(mean assistant turns of the episodes that answered, how many answered); None when none did."""
    turns = [assistant_turns(t) for t in trajectories if t.get("end_reason") == ANSWER_END_REASON]
    return (sum(turns) / len(turns) if turns else None), len(turns)


def calls_per_correct(calls: float, correct: float) -> float | None:
    """Tool calls per correct answer; None when nothing was correct."""
    return calls / correct if correct > 0 else None


def crop_ious(trajectories: Iterable[Mapping[str, Any]]) -> list[float]:
    """Each zoom call's IoU with its task's target box, where the env measured one (`target_iou`)."""
    return [float(call["target_iou"]) for t in trajectories for turn in t.get("turns") or [] if turn.get("role") == "assistant"
            for call in turn.get("calls") or [] if call.get("ok") is True and isinstance(call.get("target_iou"), (int, float))]


def turn_metrics(trajectories: Sequence[Mapping[str, Any]], correct: Sequence[bool]) -> dict[str, float]:
    """The step's values (module docstring); `correct[i]` is episode i's verdict."""
    out: dict[str, float] = {}
    mean_turns, answered = turns_to_answer(trajectories)
    out[ANSWERED] = float(answered)
    if mean_turns is not None:
        out[TURNS_TO_ANSWER] = mean_turns
    calls = sum(int(t.get("tool_calls") or 0) for t in trajectories)  # calls that ran, as tool/calls_mean counts them
    ratio = calls_per_correct(float(calls), float(sum(bool(c) for c in correct)))
    if ratio is not None:
        out[CALLS_PER_CORRECT] = ratio
    ious = crop_ious(trajectories)
    out[CROP_IOU_CALLS] = float(len(ious))
    if ious:
        out[CROP_IOU] = sum(ious) / len(ious)
    return out


MERGED_KEYS = (TURNS_TO_ANSWER, ANSWERED, CALLS_PER_CORRECT, CROP_IOU, CROP_IOU_CALLS)


def merge_turn_metrics(parts: Sequence[tuple[Mapping[str, float], int]]) -> dict[str, float]:
    """Every rank's (turn_metrics values, rollouts generated) as one: the means weighted by their
    own counts, calls per correct from each rank's calls and correct answers (calls_mean × n and
    acc/mean × n, the step's rollout means)."""
    out: dict[str, float] = {ANSWERED: sum(p.get(ANSWERED, 0.0) for p, _ in parts),
                             CROP_IOU_CALLS: sum(p.get(CROP_IOU_CALLS, 0.0) for p, _ in parts)}
    for mean, count in ((TURNS_TO_ANSWER, ANSWERED), (CROP_IOU, CROP_IOU_CALLS)):
        if out[count] > 0:
            out[mean] = sum(p.get(mean, 0.0) * p.get(count, 0.0) for p, _ in parts) / out[count]
    calls = sum(p.get("tool/calls_mean", 0.0) * n for p, n in parts)
    ratio = calls_per_correct(calls, sum(p.get("acc/mean", 0.0) * n for p, n in parts))
    if ratio is not None:
        out[CALLS_PER_CORRECT] = ratio
    return out


def eval_turn_metrics(trajectories: Sequence[Mapping[str, Any]], correct: Sequence[bool]) -> dict[str, float]:
    """An evaluation's tools arm: `eval/turns_to_answer`, `eval/calls_per_correct`, `eval/crop_iou`
    (each left out where undefined, as in a step)."""
    values = turn_metrics(trajectories, correct)
    names = {TURNS_TO_ANSWER: "eval/turns_to_answer", CALLS_PER_CORRECT: "eval/calls_per_correct", CROP_IOU: "eval/crop_iou"}
    return {name: values[key] for key, name in names.items() if key in values}
