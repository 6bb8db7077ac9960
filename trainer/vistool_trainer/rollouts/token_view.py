"""Per-token statistics of a rollout's assistant turns for the viewer's token view: each sampled
token, its log-probability under the policy that sampled it (at the sampling temperature, as the
update's ratio uses it), the entropy of that next-token distribution, and whether the loss reads
the token (docs/CONTRACTS.md, "token_view").

The numbers come from the update's own old-log-prob pass (grpo._sampling_log_probs), so they cost
one entropy per scored position and nothing else. They are matched back to the turns by token id:
the scored positions of a rollout's training sequences, in order, must spell its assistant turns'
sampled tokens. When they do not (a context view that trains a turn twice, an encoder that adds a
token), nothing is recorded rather than numbers put on the wrong tokens."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

DIGITS = 4


@dataclass
class ScoredPositions:
    """One training sequence's loss positions, in order: the token ids there and their statistics."""
    token_ids: list[int]
    log_probs: list[float]
    entropies: list[float]


def token_view(messages: Sequence[dict[str, Any]], trajectory_turns: Sequence[dict[str, Any]], scored: Sequence[ScoredPositions]
               ) -> list[dict[str, Any]] | None:
    """One entry per assistant turn ({turn, token_ids, logprob, entropy, mask}), `turn` indexing the
    trajectory's turns; None when the scored positions do not spell the sampled turns. Token text
    is left to `with_token_text`, for the few records written: decoding every rollout's tokens
    every step would cost a tokenizer call per token on the update's path."""
    ids = [token for part in scored for token in part.token_ids]
    log_probs = [value for part in scored for value in part.log_probs]
    entropies = [value for part in scored for value in part.entropies]
    assistant_turns = [index for index, turn in enumerate(trajectory_turns) if turn.get("role") == "assistant"]
    sampled = [message["token_ids"] for message in messages if message.get("role") == "assistant" and "token_ids" in message]
    if len(sampled) != len(assistant_turns):
        return None
    view: list[dict[str, Any]] = []
    at = 0
    for turn_index, turn_ids in zip(assistant_turns, sampled):
        if ids[at:at + len(turn_ids)] != list(turn_ids):
            return None
        span = slice(at, at + len(turn_ids))
        view.append({"turn": turn_index, "token_ids": list(turn_ids),
                     "logprob": [round(value, DIGITS) for value in log_probs[span]],
                     "entropy": [round(value, DIGITS) for value in entropies[span]],
                     "mask": [1] * len(turn_ids)})
        at += len(turn_ids)
    return view if at == len(ids) else None


def with_token_text(view: Sequence[dict[str, Any]], decode: Callable[[int], str]) -> list[dict[str, Any]]:
    """The record's form of a token view: each entry's token ids as their text (`tokens`)."""
    return [{"turn": entry["turn"], "tokens": [decode(token) for token in entry["token_ids"]],
             **{key: entry[key] for key in ("logprob", "entropy", "mask")}} for entry in view]
