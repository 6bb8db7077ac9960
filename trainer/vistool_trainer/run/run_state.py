"""Where a run stands: the stage it is in and the steps each stage has taken, as one typed object
(TRL's `TrainerState` plays this part). A checkpoint's trainer_state.json is this object's JSON
form, and so are the `state` of run.json and the fields of the `checkpoint` and `finished` events.

The JSON form is the one the trainer has always written, key for key and in the same order
(`global_step`, `sft_step`, `rl_step`, `stage`, then `perception_step` once the perception stage
took a step and `sft_schedule` once SFT started), so checkpoints written before this module load
unchanged and new ones read the same to every reader. Keys this version does not know are kept
and written back, never dropped. Nothing here reads or writes a file.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Stage = Literal["start", "perception", "sft", "rl", "done"]
STAGES: tuple[str, ...] = get_args(Stage)


@dataclass
class RunState:
    """The run's progress. `global_step` counts every training step of every stage (the metrics
    lines' `step`); each stage also counts its own."""
    global_step: int = 0
    sft_step: int = 0
    rl_step: int = 0
    stage: Stage = "start"
    # None until the perception stage takes its first step (the key is absent from the JSON till then).
    perception_step: int | None = None
    # SftSchedule.state() once SFT has started: where its phases ended (None: absent from the JSON).
    sft_schedule: dict[str, Any] | None = None
    # Keys of a trainer_state.json this version does not know, written back as they were read.
    unknown: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise ValueError(f"trainer state: stage {self.stage!r} is not one of {', '.join(STAGES)} "
                             "(the checkpoint's trainer_state.json was not written by this trainer)")

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (trainer_state.json, run.json's `state`, the events' fields)."""
        out: dict[str, Any] = {"global_step": self.global_step, "sft_step": self.sft_step, "rl_step": self.rl_step, "stage": self.stage}
        if self.perception_step is not None:
            out["perception_step"] = self.perception_step
        if self.sft_schedule is not None:
            out["sft_schedule"] = self.sft_schedule
        out.update(self.unknown)
        return out

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> RunState:
        """A state from its JSON form; a missing counter is 0, as the trainer has always read it."""
        known = {"global_step", "sft_step", "rl_step", "stage", "perception_step", "sft_schedule"}
        return cls(global_step=int(values.get("global_step", 0)), sft_step=int(values.get("sft_step", 0)),
                   rl_step=int(values.get("rl_step", 0)), stage=values.get("stage", "start"),
                   perception_step=values.get("perception_step"), sft_schedule=values.get("sft_schedule"),
                   unknown={key: value for key, value in values.items() if key not in known})


@dataclass
class StepBudget:
    """`--max-steps`: how many more training steps this invocation may take, over every stage (the
    run pauses with a checkpoint when it is spent)."""
    left: int = 1 << 62

    @classmethod
    def of(cls, max_steps: int | None) -> StepBudget:
        return cls(max_steps if max_steps is not None else 1 << 62)

    def spend(self) -> None:
        self.left -= 1

    @property
    def spent(self) -> bool:
        return self.left <= 0
