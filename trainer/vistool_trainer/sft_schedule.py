"""The SFT warm-up's phases, and when each ends (docs/DEMO.md):

0. **calls without images** (`sft.calls_without_images_first` steps at most): only the tool-call
   turns are trained, with the images in their context left out — copying the call's arguments
   from the question, which a small model learns far faster without image tokens to look past;
1. **answers after the tool** (`sft.after_tool_turns_first` steps at most): only the assistant
   turns that follow a tool result are trained — reading the edited image;
2. **tool trajectories** (`sft.tool_trajectories_steps` steps at most): whole gold tool
   trajectories, no direct answers — writing the call (copying the label from the question);
3. **the mixture**, to `sft.steps`: whole trajectories with `sft.direct_answer_fraction` direct
   answers — the call-or-answer choice RL then learns to make.

Phases 0–2 can end early on the SFT probe (sft_probe.py): phase 0 once `sft/probe_call_acc`
(measured with the images in view) reaches `sft.calls_without_images_until_acc`, phase 1 once
`sft/probe_answer_after_tool_acc` reaches `sft.after_tool_until_acc`, phase 2 once
`sft/probe_call_acc` reaches `sft.tool_trajectories_until_acc`. A small model learns each skill
after a plateau whose length varies with the seed by hundreds of steps; ending a phase on what
was learned rather than on a step count gives the later phases the steps an early plateau saved,
and a late one the steps it needs, within one total budget. The steps where phases ended are kept
in the trainer state, so a resumed run continues the same schedule.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class SftSchedule:
    after_tool_end: int
    tool_trajectories_end: int
    direct_answer_fraction: float = 0.0
    after_tool_until_acc: float | None = None
    tool_trajectories_until_acc: float | None = None
    tool_trajectories_steps: int = 0
    calls_end: int = 0
    calls_until_acc: float | None = None
    after_tool_steps: int = 0
    calls_ended_early_at: int | None = None
    # Where each early end happened (None: the phase ran to its cap or has not ended).
    after_tool_ended_early_at: int | None = None
    tool_trajectories_ended_early_at: int | None = None

    @classmethod
    def from_config(cls, sft: dict[str, Any], saved: dict[str, Any] | None = None) -> "SftSchedule":
        if saved:
            return cls(**saved)
        calls = int(sft.get("calls_without_images_first", 0))
        first = calls + int(sft.get("after_tool_turns_first", 0))
        trajectories = int(sft.get("tool_trajectories_steps", 0))
        return cls(after_tool_end=first, tool_trajectories_end=first + trajectories, calls_end=calls,
                   calls_until_acc=sft.get("calls_without_images_until_acc"), after_tool_steps=first - calls,
                   direct_answer_fraction=float(sft.get("direct_answer_fraction", 0.0)),
                   after_tool_until_acc=sft.get("after_tool_until_acc"), tool_trajectories_until_acc=sft.get("tool_trajectories_until_acc"),
                   tool_trajectories_steps=trajectories)

    def state(self) -> dict[str, Any]:
        return asdict(self)

    def calls_without_images(self, step: int) -> bool:
        """Whether step `step` (0-based) trains only the tool calls, their images left out."""
        return step < self.calls_end

    def after_tool(self, step: int) -> bool:
        """Whether step `step` (0-based) trains only the turns that follow a tool result."""
        return self.calls_end <= step < self.after_tool_end

    def direct_share(self, step: int) -> float:
        """The share of direct answers in step `step`'s batch: none before the mixture starts."""
        return self.direct_answer_fraction if step >= self.tool_trajectories_end else 0.0

    def phase(self, step: int) -> str:
        if self.calls_without_images(step):
            return "calls_without_images"
        if self.after_tool(step):
            return "answers_after_tool"
        return "tool_trajectories" if step < self.tool_trajectories_end else "mixture"

    def wants_probe_decision(self, steps_done: int) -> bool:
        """Whether a probe after `steps_done` steps can end a phase (every rank asks at the same steps)."""
        phase = self.phase(steps_done)
        return ((phase == "calls_without_images" and self.calls_until_acc is not None)
                or (phase == "answers_after_tool" and self.after_tool_until_acc is not None)
                or (phase == "tool_trajectories" and self.tool_trajectories_until_acc is not None))

    def reached(self, steps_done: int, probe: dict[str, float]) -> bool:
        """Whether the probe taken after `steps_done` steps meets the current phase's target."""
        phase = self.phase(steps_done)
        if phase == "calls_without_images" and self.calls_until_acc is not None:
            return probe.get("sft/probe_call_acc", 0.0) >= self.calls_until_acc
        if phase == "answers_after_tool" and self.after_tool_until_acc is not None:
            return probe.get("sft/probe_answer_after_tool_acc", 0.0) >= self.after_tool_until_acc
        if phase == "tool_trajectories" and self.tool_trajectories_until_acc is not None:
            return probe.get("sft/probe_call_acc", 0.0) >= self.tool_trajectories_until_acc
        return False

    def end_phase(self, steps_done: int) -> str:
        """End the current phase now: the next step is the next phase's first. Returns the phase ended."""
        phase = self.phase(steps_done)
        if phase == "calls_without_images":
            self.calls_end = steps_done
            self.after_tool_end = steps_done + self.after_tool_steps
            self.tool_trajectories_end = self.after_tool_end + self.tool_trajectories_steps
            self.calls_ended_early_at = steps_done
        elif phase == "answers_after_tool":
            self.after_tool_end = steps_done
            self.tool_trajectories_end = steps_done + self.tool_trajectories_steps
            self.after_tool_ended_early_at = steps_done
        elif phase == "tool_trajectories":
            self.tool_trajectories_end = steps_done
            self.tool_trajectories_ended_early_at = steps_done
        return phase
