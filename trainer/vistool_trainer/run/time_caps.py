"""What a run records when a stage's time cap (`sft.max_seconds`, `rl.max_seconds`) stops it.

The step budgets decide what a run trains; the time caps are a safety net for a machine far slower
than expected. A stage the cap stops has trained less than its budget, where the wall clock fell,
so its outcome depends on the machine's speed: the run says so in run.json (`time_caps_reached`,
which the demo's summary and report read) and as a warning event, never silently. This module
decides nothing about when to stop.
"""
from __future__ import annotations

from typing import Any

from .events import EventStream
from .run_directory import RunDirectory

STAGE_CAP_KEYS = {"sft": "sft.max_seconds", "rl": "rl.max_seconds"}


def time_cap_message(stage: str, step: int, steps: int, seconds: float, phase: str | None = None) -> str:
    where = f" in its {phase} phase" if phase else ""
    return (f"TIME CAP REACHED: {stage.upper()} stopped after {step} of its {steps} steps{where}, because {STAGE_CAP_KEYS[stage]} "
            f"({seconds:.0f} s) ran out. What this run learned now depends on this machine's speed, not on the recipe; "
            f"give it more time (make demo DEMO_MINUTES=..., or raise {STAGE_CAP_KEYS[stage]}) for the designed run.")


def record_time_cap(run: RunDirectory, events: EventStream, stage: str, step: int, steps: int, seconds: float,
                    phase: str | None = None) -> dict[str, Any]:
    """Add `stage`'s cap to run.json's `time_caps_reached` and emit the warning; returns the entry."""
    if stage not in STAGE_CAP_KEYS:
        raise ValueError(f"time cap stage {stage!r} is not one of {', '.join(STAGE_CAP_KEYS)}")
    entry: dict[str, Any] = {"step": step, "steps": steps, "max_seconds": seconds}
    if phase:
        entry["phase"] = phase
    reached = dict(run.read_run().get("time_caps_reached") or {})
    reached[stage] = entry
    run.update_run(time_caps_reached=reached)
    events.warning(time_cap_message(stage, step, steps, seconds, phase))
    return entry
