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
  out (what `sft.calls_alongside_answers` trains: the copy before it is used with the images);
- `sft/probe_first_turn_direct_rate` and `sft/probe_first_turn_call_rate`: the call-or-answer choice
  itself. For each held-out task with both a gold tool trajectory and a gold direct answer (the
  same prompt, tools on), the two first turns are compared token by token; at the first token where
  they differ the prefix is still the same, so the model's most likely token there is the choice
  greedy decoding makes: the direct answer's token, the call's, or neither (the two rates then
  sum to less than 1). The warm-up's mixture ends on it (sft_schedule.py).

The micro model learns each of these skills after a plateau whose length varies with the seed
(docs/DEMO.md); the probe shows which one a run is missing without spending an evaluation, and
the warm-up's phases end on it (sft_schedule.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
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


def first_difference(call: EncodedConversation, direct: EncodedConversation) -> int | None:
    """The token index where a call's first turn and a direct answer's first turn to the same prompt
    part: inside both first turns, after a shared prefix. None when the two encodings are not such a
    pair (another prompt, or the same first turn)."""
    if 1 not in call.loss_mask or 1 not in direct.loss_mask:
        return None
    start = call.loss_mask.index(1)
    if direct.loss_mask.index(1) != start or call.input_ids[:start] != direct.input_ids[:start]:
        return None
    for position in range(start, min(len(call.input_ids), len(direct.input_ids))):
        if not (call.loss_mask[position] and direct.loss_mask[position]):
            return None
        if call.input_ids[position] != direct.input_ids[position]:
            return position
    return None


@dataclass
class ChoicePoint:
    """One held-out task's call-or-answer choice: which probe segments hold its two first turns, and
    the token index where they part."""

    call_segment: int
    direct_segment: int
    position: int


@dataclass
class SftProbe:
    """The held-out gold conversations, encoded once."""

    segments: list[list[EncodedConversation]]
    kinds: list[list[str]]
    choices: list[ChoicePoint] = field(default_factory=list)

    @classmethod
    def build(cls, policy: Policy, conversations: list[Conversation],
              choice_pairs: list[tuple[int, int]] | None = None) -> "SftProbe":
        """`choice_pairs`: (index of a tool trajectory, index of the direct answer to the same task)
        in `conversations`, for the call-or-answer choice; a pair whose first turns do not part
        inside both (see first_difference) is refused."""
        segments = [policy.encoder.training_segments(conversation) for conversation in conversations]
        kinds = [turn_kinds(conversation) for conversation in conversations]
        choices = []
        for call_index, direct_index in choice_pairs or []:
            if kinds[call_index][:1] != ["call"] or kinds[direct_index][:1] != ["direct_answer"]:
                raise ValueError(f"probe choice pair ({call_index}, {direct_index}): the first conversation must open with a tool call "
                                 f"and the second with a direct answer; they open with {kinds[call_index][:1]} and {kinds[direct_index][:1]}")
            position = first_difference(segments[call_index][0], segments[direct_index][0])
            if position is None:
                raise ValueError(f"probe choice pair ({call_index}, {direct_index}): the two first turns do not answer the same prompt "
                                 "or do not differ; pair each task's tool trajectory with its own direct answer")
            choices.append(ChoicePoint(call_index, direct_index, position))
        for conversation in conversations:
            without = policy.encoder.call_segments_without_images(conversation)
            if without:
                segments.append(without)
                kinds.append(["call_without_images"] * len(without))
        return cls(segments, kinds, choices)

    def measure(self, policy: Policy, chunk: int = 16) -> dict[str, float]:
        """The reproduced share of each kind of turn present; a kind the probe holds no turn of is absent."""
        flat = [(index, segment) for index, segments in enumerate(self.segments) for segment in segments]
        outcomes: dict[int, list[bool]] = {index: [] for index in range(len(self.segments))}
        # Whether the model's most likely token at each choice point is the call's / the direct answer's.
        first_matches: dict[int, bool] = {}
        wanted = {choice.call_segment: choice.position for choice in self.choices}
        wanted.update({choice.direct_segment: choice.position for choice in self.choices})
        was_training = policy.model.training
        policy.model.eval()
        try:
            for offset in range(0, len(flat), chunk):
                part = flat[offset:offset + chunk]
                inputs = policy.batch([segment for _, segment in part])
                matches, mask = greedy_token_matches(policy.model, inputs)
                for row, (index, segment) in enumerate(part):
                    outcomes[index].extend(reproduced_turns(matches[row].tolist(), mask[row].tolist()))
                    if index in wanted and segment is self.segments[index][0]:
                        # Left-padded rows: the segment's token p sits at column pad + p, and
                        # matches[j] judges the token at column j + 1.
                        pad = inputs["input_ids"].shape[1] - len(segment.input_ids)
                        first_matches[index] = bool(matches[row, pad + wanted[index] - 1])
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
        rates = {f"sft/probe_{kind}_acc": hits / total for kind, (hits, total) in counts.items() if total}
        if self.choices:
            rates["sft/probe_first_turn_direct_rate"] = sum(first_matches[c.direct_segment] for c in self.choices) / len(self.choices)
            rates["sft/probe_first_turn_call_rate"] = sum(first_matches[c.call_segment] for c in self.choices) / len(self.choices)
        return rates


def split_probe(items: list[Any], probe_tasks: int) -> tuple[list[Any], list[Any]]:
    """(what SFT trains on, what the probe holds out): the last `probe_tasks` items are the probe's."""
    if probe_tasks <= 0:
        return items, []
    if probe_tasks >= len(items):
        raise ValueError(f"sft.probe_tasks {probe_tasks} would hold out all {len(items)} training tasks; "
                         "use fewer probe tasks than training tasks")
    return items[:-probe_tasks], items[-probe_tasks:]

