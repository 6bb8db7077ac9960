"""The SFT probe: which gold turns of held-out training tasks the warming-up policy would write.

`sft.probe_tasks` training tasks are kept out of every SFT batch. Every `sft.probe_every` steps
their gold conversations are scored teacher-forced, and an assistant turn counts as reproduced
when every token after its first is the model's most likely next token. The first token is left
out on purpose: it is the choice between calling a tool and answering, which the warm-up's
mixture of tool trajectories and direct answers leaves open for RL. The probe asks whether a policy
that starts the turn as the gold one does also writes the rest of it. One rate per kind of turn:

- `sft/probe_call_acc`: tool calls (the tool's name and arguments, e.g. the label copied from the
  question);
- `sft/probe_answer_after_tool_acc`: answers written after a tool result (the edited image read);
- `sft/probe_direct_answer_acc`: direct answers (the raw image read);
- `sft/probe_call_without_images_acc`: the tool calls again, with the images in their context left
  out (what `sft.calls_alongside_answers` trains: the copy before it is used with the images).

The micro model learns each of these skills after a plateau whose length varies with the seed
(docs/DEMO.md); the probe shows which one a run is missing without spending an evaluation, and
the warm-up's phases end on it (sft_schedule.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.conversation import Conversation
from ..model.conversation_encoding import EncodedConversation, is_tool_call_turn
from ..model.policy import Policy, greedy_token_matches

TURN_KINDS = ("call", "answer_after_tool", "direct_answer", "call_without_images")


def turn_kinds(conversation: Conversation) -> list[str]:
    """The kind of each assistant turn of a conversation, in order."""
    kinds = []
    for prompt, reply in conversation.turns():
        if prompt and prompt[-1].get("role") == "tool":
            kinds.append("answer_after_tool")
        elif is_tool_call_turn(reply):
            kinds.append("call")
        else:
            kinds.append("direct_answer")
    return kinds


def trained_runs(mask: list[bool]) -> list[tuple[int, int]]:
    """[start, end) of each maximal run of True: one run per trained turn (observation tokens separate them)."""
    runs, start = [], None
    for position, value in enumerate(mask + [False]):
        if value and start is None:
            start = position
        elif not value and start is not None:
            runs.append((start, position))
            start = None
    return runs


def reproduced_turns(matches: list[bool], mask: list[bool]) -> list[bool]:
    """Per trained turn of one scored sequence: every token after the turn's first matched."""
    return [all(matches[start + 1:end]) for start, end in trained_runs(mask)]


@dataclass
class SftProbe:
    """The held-out gold conversations, encoded once."""

    segments: list[list[EncodedConversation]]
    kinds: list[list[str]]

    @classmethod
    def build(cls, policy: Policy, conversations: list[Conversation]) -> "SftProbe":
        segments = [policy.encoder.training_segments(conversation) for conversation in conversations]
        kinds = [turn_kinds(conversation) for conversation in conversations]
        for conversation in conversations:
            without = policy.encoder.call_segments_without_images(conversation)
            if without:
                segments.append(without)
                kinds.append(["call_without_images"] * len(without))
        return cls(segments, kinds)

    def measure(self, policy: Policy, chunk: int = 16) -> dict[str, float]:
        """The reproduced share of each kind of turn present; a kind the probe holds no turn of is absent."""
        flat = [(index, segment) for index, segments in enumerate(self.segments) for segment in segments]
        outcomes: dict[int, list[bool]] = {index: [] for index in range(len(self.segments))}
        was_training = policy.model.training
        policy.model.eval()
        try:
            for offset in range(0, len(flat), chunk):
                part = flat[offset:offset + chunk]
                inputs = policy.batch([segment for _, segment in part])
                matches, mask = greedy_token_matches(policy.model, inputs)
                for row, (index, _) in enumerate(part):
                    outcomes[index].extend(reproduced_turns(matches[row].tolist(), mask[row].tolist()))
        finally:
            if was_training:
                policy.model.train()
        counts = {kind: [0, 0] for kind in TURN_KINDS}
        for index, kinds in enumerate(self.kinds):
            if len(kinds) != len(outcomes[index]):
                raise RuntimeError(f"probe conversation {index}: {len(kinds)} assistant turns but {len(outcomes[index])} trained runs")
            for kind, reproduced in zip(kinds, outcomes[index]):
                counts[kind][0] += int(reproduced)
                counts[kind][1] += 1
        return {f"sft/probe_{kind}_acc": hits / total for kind, (hits, total) in counts.items() if total}


def split_probe(items: list[Any], probe_tasks: int) -> tuple[list[Any], list[Any]]:
    """(what SFT trains on, what the probe holds out): the last `probe_tasks` items are the probe's."""
    if probe_tasks <= 0:
        return items, []
    if probe_tasks >= len(items):
        raise ValueError(f"sft.probe_tasks {probe_tasks} would hold out all {len(items)} training tasks; "
                         "use fewer probe tasks than training tasks")
    return items[:-probe_tasks], items[-probe_tasks:]

