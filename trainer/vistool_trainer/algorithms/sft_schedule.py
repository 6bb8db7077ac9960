"""The SFT warm-up's phases, in order, and when each ends (docs/DEMO.md):

1. **answers after the tool** (`sft.after_tool_turns_first` steps at most): only the assistant
   turns that follow a tool result are trained — reading the edited image; with
   `sft.calls_alongside_answers` each drawn conversation's tool calls are trained too, with their
   images left out, as separate sequences — copying, learned at the same time;
2. **calls without images** (`sft.calls_without_images_steps` steps at most): only the tool-call
   turns, with the images in their context left out — copying the call's arguments from the
   question, which a small model learns far faster with no image tokens to look past;
3. **tool trajectories** (`sft.tool_trajectories_steps` steps at most): whole gold tool
   trajectories, no direct answers — both skills together, with the images in view;
4. **the mixture**, to `sft.steps` at most: whole trajectories with `sft.direct_answer_fraction`
   direct answers — the call-or-answer choice RL then learns to make. With
   `sft.mixture_until_direct_rate` it ends SFT at the first probe where the greedy first turn on
   the held-out tasks is the direct answer for at least that share of them
   (`sft/probe_first_turn_direct_rate`).

With `sft.calls_first` phase 2 runs first, then phase 1 (still training the calls alongside, with
`sft.calls_alongside_answers`), then 3 and 4: on a seed whose copy does not form beside the
reading, it forms alone (docs/DEMO.md, "How the result varies").

With `sft.hold_earlier_skills` (a margin), a phase after the first, the mixture included, ends on
the probe only if, at that same probe, every earlier phase's skills are still within the margin of
their rates when that phase ended (algorithms/warmup_guard.py names each phase's skills): a later
phase must not hand on less than an earlier one taught (issue 40: reading 0.95 when its phase ended,
0.75 when the mixture ended SFT, and RL did not bring it back). Until they are, the phase trains on,
to its cap.

A phase with no steps is skipped. Phases 1–3 can end early on the SFT probe (sft_probe.py), each
once its skill's rate reaches its target: `sft.after_tool_until_acc` on
`sft/probe_answer_after_tool_acc`, `sft.calls_without_images_until_acc` and
`sft.tool_trajectories_until_acc` on `sft/probe_call_acc` (measured with the images in view). A
small model learns each skill after a plateau whose length varies with the seed by hundreds of
steps; ending a phase on what was learned rather than on a step count moves the later phases
forward by the steps an early end saved, within one total budget. The schedule is kept in the
trainer state, so a resumed run continues it.

Why the mixture ends on a probe: trained on 40 % calls and 60 % direct answers, the micro model's
probability of starting with the call settles near 0.4 but wanders by ±0.1 from one step to the
next, the same on every chart, so the greedy policy answers directly on every task at most steps
and calls on every task at some (docs/DEMO.md). Where SFT stops decides which; stopping at a step
count, or where a time cap falls, leaves it to chance. The probe stops it in the state the recipe
wants: the greedy policy answers directly, and sampling still calls often enough for RL.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..config import SftConfig
from .warmup_guard import PHASE_SKILLS

# The phases before the mixture: name, the config key of its length, of its target, and the probe rate the target reads.
PHASES = (
    ("answers_after_tool", "after_tool_turns_first", "after_tool_until_acc", "sft/probe_answer_after_tool_acc"),
    ("calls_without_images", "calls_without_images_steps", "calls_without_images_until_acc", "sft/probe_call_acc"),
    ("tool_trajectories", "tool_trajectories_steps", "tool_trajectories_until_acc", "sft/probe_call_acc"),
)
# `sft.calls_first`: the calls-without-images phase first, before the reading phase (docs/DEMO.md).
CALLS_FIRST_ORDER = ("calls_without_images", "answers_after_tool", "tool_trajectories")
MIXTURE = "mixture"
_PHASE = {phase[0]: phase for phase in PHASES}
# What ends the mixture (and with it SFT): the share of held-out tasks whose greedy first turn is the direct answer.
MIXTURE_TARGET_KEY, MIXTURE_RATE = "mixture_until_direct_rate", "sft/probe_first_turn_direct_rate"
# The config keys that end a phase on the probe (run_config refuses them without a probe).
TARGET_KEYS = tuple(target_key for _, _, target_key, _ in PHASES) + (MIXTURE_TARGET_KEY,)


@dataclass
class SftSchedule:
    # In the order the phases run (`names`: PHASES' order, or CALLS_FIRST_ORDER with sft.calls_first).
    lengths: list[int]
    targets: list[float | None]
    # Where each phase ends (exclusive, in steps from the start of SFT); moved when an earlier one ends early.
    ends: list[int] = field(default_factory=list)
    # The step where a phase ended on the probe (None: it ran its cap, or has not ended).
    ended_early_at: list[int | None] = field(default_factory=list)
    direct_answer_fraction: float = 0.0
    # sft.calls_alongside_answers: the after-tool phase also trains the calls without their images,
    # and ends only when both the answer probe and the probe of the calls without images reach its target.
    calls_alongside: bool = False
    # sft.mixture_until_direct_rate, and the step where the probe ended the mixture (and SFT) on it.
    mixture_target: float | None = None
    mixture_ended_at: int | None = None
    # sft.hold_earlier_skills: the margin an earlier phase's skills may fall by before a later phase may end, and
    # each phase's skills as the probe last measured them in that phase (at its end, once it has ended).
    hold_margin: float | None = None
    phase_rates: dict[str, dict[str, float]] = field(default_factory=dict)
    # The phases' names in the order they run (a state saved before sft.calls_first has none: PHASES' order).
    names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.names:
            self.names = [name for name, _, _, _ in PHASES]
        if not self.ends:
            total, self.ends = 0, []
            for length in self.lengths:
                total += length
                self.ends.append(total)
        if not self.ended_early_at:
            self.ended_early_at = [None] * len(self.lengths)

    @classmethod
    def from_config(cls, sft: SftConfig, saved: dict[str, Any] | None = None) -> "SftSchedule":
        if saved:
            return cls(**saved)
        order = [_PHASE[name] for name in CALLS_FIRST_ORDER] if getattr(sft, "calls_first", False) else list(PHASES)
        return cls(lengths=[int(getattr(sft, length_key)) for _, length_key, _, _ in order],
                   targets=[getattr(sft, target_key) for _, _, target_key, _ in order],
                   names=[name for name, _, _, _ in order],
                   direct_answer_fraction=float(sft.direct_answer_fraction),
                   calls_alongside=bool(sft.calls_alongside_answers),
                   mixture_target=getattr(sft, MIXTURE_TARGET_KEY), hold_margin=getattr(sft, "hold_earlier_skills", None))

    def state(self) -> dict[str, Any]:
        return asdict(self)

    def _index(self, step: int) -> int | None:
        """The phase step `step` (0-based) belongs to; None for the mixture."""
        for index, end in enumerate(self.ends):
            if step < end:
                return index
        return None

    def phase(self, step: int) -> str:
        index = self._index(step)
        return MIXTURE if index is None else self.names[index]

    def after_tool(self, step: int) -> bool:
        """Whether step `step` (0-based) trains only the turns that follow a tool result."""
        return self.phase(step) == "answers_after_tool"

    def calls_without_images(self, step: int) -> bool:
        """Whether step `step` (0-based) trains only the tool calls, their images left out."""
        return self.phase(step) == "calls_without_images"

    def direct_share(self, step: int) -> float:
        """The share of direct answers in step `step`'s batch: none before the mixture starts."""
        return self.direct_answer_fraction if self._index(step) is None else 0.0

    def finished(self, steps_done: int) -> bool:
        """Whether SFT is over after `steps_done` steps because the probe ended the mixture
        (sft.steps and the time cap end it too; the trainer checks those)."""
        return self.mixture_ended_at is not None and steps_done >= self.mixture_ended_at

    def wants_probe_decision(self, steps_done: int) -> bool:
        """Whether a probe after `steps_done` steps can end a phase (every rank asks at the same steps)."""
        index = self._index(steps_done)
        if index is None:
            return self.mixture_target is not None and not self.finished(steps_done)
        return self.targets[index] is not None

    def reached(self, steps_done: int, probe: dict[str, float]) -> bool:
        """Whether the probe taken after `steps_done` steps meets the current phase's target. The
        mixture's target reads the choice probe; a probe without that rate (a run whose held-out
        tasks have no direct answers) never ends it."""
        index = self._index(steps_done)
        phase = MIXTURE if index is None else self.names[index]
        skills = {skill: float(probe[skill]) for skill in PHASE_SKILLS.get(phase, ()) if skill in probe}
        if skills:
            self.phase_rates[phase] = skills
        if index is None:
            return (self.mixture_target is not None and probe.get(MIXTURE_RATE, -1.0) >= float(self.mixture_target)
                    and not self.eroded(phase, probe))
        if self.targets[index] is None:
            return False
        target = float(self.targets[index])  # type: ignore[arg-type]
        if phase == "answers_after_tool" and self.calls_alongside and probe.get("sft/probe_call_without_images_acc", 0.0) < target:
            return False
        return probe.get(_PHASE[phase][3], 0.0) >= target and not self.eroded(phase, probe)

    def eroded(self, phase: str, probe: dict[str, float]) -> list[str]:
        """With a hold margin: the earlier phases' skills that this probe measures more than the margin
        below their rates at the end of their own phase (empty: they held, or no margin is set)."""
        if self.hold_margin is None:
            return []
        return [skill for earlier, rates in self.phase_rates.items() if earlier != phase
                for skill, rate in rates.items() if skill in probe and float(probe[skill]) < rate - float(self.hold_margin) - 1e-9]

    def end_phase(self, steps_done: int) -> str:
        """End the current phase now: the next step is the next phase's first, and every later phase
        keeps its length; ending the mixture ends SFT. Returns the phase ended."""
        index = self._index(steps_done)
        if index is None:
            self.mixture_ended_at = steps_done
            return MIXTURE
        self.ends[index] = steps_done
        self.ended_early_at[index] = steps_done
        for later in range(index + 1, len(self.ends)):
            self.ends[later] = self.ends[later - 1] + self.lengths[later]
        return self.names[index]
