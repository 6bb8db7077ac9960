"""Per-task records of a held-out evaluation: every task's rollout at every evaluation, kept in the
run directory as `rollouts/eval-<label>.jsonl` in the rollout-record schema (docs/CONTRACTS.md), so
the viewer can put two checkpoints side by side and follow one task through training.

A task's arms are consecutive lines (`group` 0 = tools, 1 = no tools, and `arm`, `label`), as
`vistool eval` writes its own; images are by reference (the env server already wrote them to the
run's images/). The file is written whole and atomically once the evaluation has finished, so a
crash leaves either no file or a complete one, and a resumed run that evaluates the same label again
replaces it instead of doubling it. It never reads or changes any other record of the run.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ..rollouts.rollout import Rollout

# Trainer labels are plain words ("before", "rl_step_10"); anything else is made a safe file name.
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def eval_records_path(root: Path, label: str) -> Path:
    name = _UNSAFE.sub("_", label).strip("._") or "eval"
    return Path(root) / "rollouts" / f"eval-{name}.jsonl"


def eval_record(rollout: Rollout, step: int, arm: str, label: str) -> dict[str, Any]:
    """One task's episode in one arm, as a rollout record: the server's trajectory plus what the
    evaluation adds. No advantage or `kept`: nothing trains on it."""
    record = dict(rollout.trajectory)
    record.update({"step": step, "prompt_id": rollout.prompt_id, "group": 0 if arm == "tools" else 1, "arm": arm, "label": label,
                   "reward": rollout.reward, "reward_breakdown": rollout.components, "reward_weights": rollout.weights,
                   "reward_notes": rollout.notes, "correct": rollout.correct, "env_failed": rollout.env_failed})
    return record


def write_eval_records(root: Path, label: str, step: int, arms: dict[str, list[Rollout]]) -> Path:
    """`arms` maps "tools"/"no_tools" to the evaluation's rollouts, one per task in the same task
    order; the records go task by task, the tools arm first."""
    order = [arm for arm in ("tools", "no_tools") if arm in arms]
    count = max((len(arms[arm]) for arm in order), default=0)
    records = [eval_record(arms[arm][i], step, arm, label) for i in range(count) for arm in order if i < len(arms[arm])]
    path = eval_records_path(root, label)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            for record in records:
                stream.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
