"""The evaluation summary of a run's kept held-out evaluations (rollouts/eval-<label>.jsonl,
run/eval_records.py), for the demo's summary.json and the top of its report (issue 44): per
checkpoint and arm, the gold × answer grid (answers normalised as the scorer compares them,
env/rewards/normalize.ts) and the calls that named another label than the question's (off target),
with the accuracy on them and on the others; and the paired change between two checkpoints on the
same tasks. The dashboard computes the same grid and changes from the same records
(protocol/eval-summary.ts). Read-only."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..algorithms.intervals import newcombe_paired, wilson_interval
from ..rollouts.answer_text import NO_ANSWER, grid_answer
from .run_directory import read_json_lines

GRID_MAX_GOLD = 12
LEVELS = ("low", "medium", "high")


def _ordered(values: set[str]) -> list[str]:
    if values <= set(LEVELS):
        return [v for v in LEVELS if v in values]
    try:
        return sorted(values, key=float)
    except ValueError:
        return sorted(values)


def arm_records(run_dir: Path, label: str, setting: str) -> list[dict[str, Any]]:
    """One record per task of an evaluation in one arm (`tools` / `no_tools`; the record's `arm`,
    else its group: 0 tools, 1 no tools), the last line of a task winning."""
    path = run_dir / "rollouts" / f"eval-{label}.jsonl"
    if not path.exists():
        return []
    by_task: dict[str, dict[str, Any]] = {}
    for record in read_json_lines(path):
        arm = record.get("arm") or {0: "tools", 1: "no_tools"}.get(record.get("group"))
        if arm == setting:
            by_task[str(record.get("prompt_id"))] = record
    return list(by_task.values())


def answer_grid(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """{"gold": rows, "answers": columns, "counts": rows × columns}; None for free-form answers."""
    pairs = [(grid_answer((r.get("task") or {}).get("answer")), grid_answer(r.get("answer"))) for r in records]
    gold = _ordered({g for g, _ in pairs})
    if not gold or len(gold) > GRID_MAX_GOLD:
        return None
    others = sorted({a for _, a in pairs if a not in gold and a != NO_ANSWER})
    answers = gold + others + ([NO_ANSWER] if any(a == NO_ANSWER for _, a in pairs) else [])
    counts = [[0] * len(answers) for _ in gold]
    for g, a in pairs:
        counts[gold.index(g)][answers.index(a)] += 1
    return {"gold": gold, "answers": answers, "counts": counts}


def question_label(task: dict[str, Any]) -> str | None:
    """The label a question asks about: the demo's questions quote it last ('... for "D"?')."""
    quoted = re.findall(r'"([^"]+)"', str(task.get("question", "")))
    return quoted[-1] if quoted else None


def first_call_targets(record: dict[str, Any]) -> list[str] | None:
    """The labels the episode's first call named (its first list argument); None when it made no call."""
    call = next((c for turn in record.get("turns", []) for c in turn.get("calls") or []), None)
    if call is None:
        return None
    for value in (call.get("arguments") or {}).values():
        if isinstance(value, list):
            return [str(v) for v in value]
    return []


def off_target(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Episodes whose call was off target, and the accuracy with 95% Wilson intervals on them and on
    the other calls; None when nothing can be judged. Where every episode with a successful call was
    scanned, the env's verdict decides (the `off_target_call` finding, as protocol/eval-summary.ts
    reads it); in records from before the scanners, the first call naming another label than the
    question quotes."""
    called_ok = [r for r in records if any(call.get("ok") for turn in r.get("turns") or [] for call in turn.get("calls") or [])]
    if called_ok and all("findings" in r for r in called_ok):
        wrong = [r for r in called_ok if "off_target_call" in (r.get("findings") or [])]
        right = [r for r in called_ok if "off_target_call" not in (r.get("findings") or [])]
        judged: list[Any] = called_ok
        rule = "scanner"
    else:
        called = [(r, first_call_targets(r), question_label(r.get("task") or {})) for r in records]
        judged = [(r, targets, label) for r, targets, label in called if targets is not None and label is not None]
        if not judged:
            return None
        wrong = [r for r, targets, label in judged if targets != [label]]
        right = [r for r, targets, label in judged if targets == [label]]
        rule = "question-label"

    def accuracy(group: list[dict[str, Any]]) -> dict[str, Any]:
        correct = sum(1 for r in group if r.get("correct") is True)
        return {"n": len(group), "correct": correct, "acc": correct / len(group) if group else 0.0,
                "acc_ci95": list(wilson_interval(correct, len(group)))}

    return {"calls": len(judged), "off_target": len(wrong), "on_target_accuracy": accuracy(right), "off_target_accuracy": accuracy(wrong), "rule": rule}


def paired_change(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, Any] | None:
    """after − before on the tasks both evaluated: the 2×2 counts and Newcombe's paired interval."""
    right_before = {str(r.get("prompt_id")): r.get("correct") is True for r in before}
    right_after = {str(r.get("prompt_id")): r.get("correct") is True for r in after}
    shared = [p for p in right_after if p in right_before]
    if not shared:
        return None
    both = sum(1 for p in shared if right_before[p] and right_after[p])
    fixed = sum(1 for p in shared if not right_before[p] and right_after[p])
    broken = sum(1 for p in shared if right_before[p] and not right_after[p])
    neither = len(shared) - both - fixed - broken
    diff, low, high = newcombe_paired(both, fixed, broken, neither)
    return {"diff": diff, "ci95": [low, high], "method": "newcombe-paired", "shared": len(shared),
            "both_right": both, "fixed": fixed, "broken": broken, "both_wrong": neither}
