"""The warm-up guard: a later SFT phase must not take away what an earlier phase taught.

The warm-up trains one skill per phase (sft_schedule.py) and a probe measures every skill every
`sft.probe_every` steps (sft_probe.py). A phase ends on its own skill's probe rate; nothing in the
schedule looks back. Issue 40 measured what that misses: reading the edited image at 0.95 when
the reading phase ended, 0.81 after the tool-trajectory phase and 0.75 when the mixture ended,
and RL did not bring it back. The guard compares, at the end of every phase, each earlier
phase's skills with their rates at the end of the phase that taught them, and reports each drop
larger than `ERODED_MARGIN` as a `warning` event and in run.json (`warmup_erosion`), which the
demo's report shows as a yellow note.

`eroded_skills` is the pure comparison; `WarmupGuard` feeds it from the probe records as SFT runs
(the trainer calls `observe` with every probe and `finish` when SFT ends).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# A drop of more than this (a rate, 0-1) in an earlier phase's skill is reported. The probe scores
# 64 tasks, so one task is 0.016 and a binomial standard error near 0.9 is about 0.04: 0.1 is
# more than two of those, and less than issue 40's 0.95 -> 0.81 -> 0.75.
ERODED_MARGIN = 0.1

# The probe rates each phase teaches that the policy after SFT uses: reading the edited image and the
# call with the chart in view. The call without images (what the reading phase trains alongside, and
# the calls-without-images phase alone) is a stepping stone to the call with the chart in view: once
# that is there, the mixture lets it fade (issue 40's run: 1.00 -> 0.64 while the call with the chart
# stayed at 1.00), and nothing after SFT writes a call without images.
# The calls-without-images phase holds nothing either, when it runs first (sft.calls_first): the
# call with the chart in view it reaches falls to 0.00 within 50 steps of the reading phase (seeds
# 1 and 5), which trains the call without images alongside and ends only once that is back at its
# target; the tool-trajectory phase then brings the call with the chart back.
PHASE_SKILLS: dict[str, tuple[str, ...]] = {
    "answers_after_tool": ("sft/probe_answer_after_tool_acc",),
    "tool_trajectories": ("sft/probe_call_acc",),
}


@dataclass(frozen=True)
class PhaseEnd:
    """One phase as it ended: its name, the SFT step of its last probe and that probe's rates."""

    phase: str
    step: int
    rates: dict[str, float]


@dataclass(frozen=True)
class Erosion:
    skill: str           # the probe rate, e.g. sft/probe_answer_after_tool_acc
    taught_by: str       # the phase whose skill it is
    taught_step: int     # where that phase ended
    rate_then: float
    lowered_by: str      # the later phase at whose end the rate was lower
    lowered_step: int
    rate_now: float

    @property
    def drop(self) -> float:
        return self.rate_then - self.rate_now

    def message(self) -> str:
        return (f"SFT phase {self.lowered_by} lowered {self.skill.removeprefix('sft/')} from {self.rate_then:.2f} "
                f"(end of {self.taught_by}, step {self.taught_step}) to {self.rate_now:.2f} (step {self.lowered_step}): "
                f"a drop of {self.drop:.2f}, more than the guard's margin of {ERODED_MARGIN:.2f}")

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "drop": round(self.drop, 4)}


def eroded_skills(ends: list[PhaseEnd], margin: float = ERODED_MARGIN) -> list[Erosion]:
    """Every (earlier phase's skill, later phase) where the skill's rate at the later phase's end is
    more than `margin` below its rate at the end of the phase that taught it. `ends` is in order;
    a skill a probe did not measure is skipped."""
    found: list[Erosion] = []
    for index, earlier in enumerate(ends):
        for skill in PHASE_SKILLS.get(earlier.phase, ()):
            if skill not in earlier.rates:
                continue
            for later in ends[index + 1:]:
                if skill in later.rates and earlier.rates[skill] - later.rates[skill] > margin + 1e-9:
                    found.append(Erosion(skill, earlier.phase, earlier.step, earlier.rates[skill], later.phase, later.step,
                                         later.rates[skill]))
    return found


class WarmupGuard:
    """Follows the probe records of one SFT run and returns each erosion once, when the phase that
    caused it has ended (seen at the first probe of the next phase, or at `finish`)."""

    def __init__(self, margin: float = ERODED_MARGIN):
        self.margin = margin
        self.ends: list[PhaseEnd] = []
        self.current: PhaseEnd | None = None
        self.reported: list[Erosion] = []

    def observe(self, step: int, phase: str, record: dict[str, Any]) -> list[Erosion]:
        """A probe taken after `step` SFT steps, the last of which was in `phase`."""
        rates = {key: float(value) for key, value in record.items() if key.startswith("sft/probe_")}
        if not rates:
            return []
        new: list[Erosion] = []
        if self.current is not None and self.current.phase != phase:
            new = self._close()
        self.current = PhaseEnd(phase, step, rates)
        return new

    def finish(self) -> list[Erosion]:
        """SFT is over: the phase it ended in has ended too."""
        return self._close() if self.current is not None else []

    def _close(self) -> list[Erosion]:
        assert self.current is not None
        self.ends.append(self.current)
        self.current = None
        new = [erosion for erosion in eroded_skills(self.ends, self.margin) if erosion not in self.reported]
        self.reported.extend(new)
        return new


def report_erosion(found: list[Erosion], events: Any, run: Any) -> None:
    """Each erosion as a `warning` event, and all of them so far in run.json's `warmup_erosion`."""
    if not found:
        return
    for erosion in found:
        events.warning(erosion.message(), stage="sft", step=erosion.lowered_step, skill=erosion.skill)
    earlier = list(run.read_run().get("warmup_erosion") or [])
    run.update_run(warmup_erosion=earlier + [erosion.record() for erosion in found])
