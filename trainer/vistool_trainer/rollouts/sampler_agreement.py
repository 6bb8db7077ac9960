"""How far the rollout engine's probabilities are from the trainer's, on the tokens it sampled:
veRL's `training/rollout_probs_diff_{max,mean,std}` (|p_rollout − p_trainer| per token).

The trainer's numbers are the update's old log-probs (the policy that sampled, before the
update); the engine's are those it returned with each turn (vLLM does; the transformers sampler
returns none, and then there is no metric). With the same weights and the same context the two
agree to float rounding, so a jump here means the engine is not sampling the policy being
trained: weights not pushed, a prompt read differently, another dtype. docs/VLLM.md has what
was measured. Both sides leave the control tokens out of the distribution (the update scores
with them suppressed, as both samplers sample).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .token_view import ScoredPositions


def sampled_and_scored(messages: Sequence[dict[str, Any]], scored: Sequence[ScoredPositions]) -> tuple[list[float], list[float]] | None:
    """(the engine's log-probs, the trainer's) for one rollout's sampled tokens, in order; None
    when a turn has no engine log-probs or the scored positions do not spell the sampled turns."""
    turns = [message for message in messages if message.get("role") == "assistant" and "token_ids" in message]
    if not turns or any("sampler_log_probs" not in turn for turn in turns):
        return None
    sampled_ids = [token for turn in turns for token in turn["token_ids"]]
    engine = [value for turn in turns for value in turn["sampler_log_probs"]]
    scored_ids = [token for part in scored for token in part.token_ids]
    trainer = [value for part in scored for value in part.log_probs]
    if scored_ids != sampled_ids or len(engine) != len(sampled_ids):
        return None
    return engine, trainer


def rollout_probs_diff(pairs: Sequence[tuple[list[float], list[float]]]) -> dict[str, float]:
    """veRL's three statistics over every token of `pairs`; {} when there is none."""
    engine = torch.tensor([value for pair in pairs for value in pair[0]], dtype=torch.float64)
    trainer = torch.tensor([value for pair in pairs for value in pair[1]], dtype=torch.float64)
    if engine.numel() == 0:
        return {}
    diff = (engine.exp() - trainer.exp()).abs()
    return {"training/rollout_probs_diff_max": float(diff.max()),
            "training/rollout_probs_diff_mean": float(diff.mean()),
            "training/rollout_probs_diff_std": float(diff.std(unbiased=False))}


def sampler_agreement(rollouts_messages: Sequence[Sequence[dict[str, Any]]], owners: Sequence[int],
                      scored: Sequence[ScoredPositions]) -> dict[str, float]:
    """The metrics for a step: `scored[j]` is training sequence j, which belongs to rollout `owners[j]`."""
    return agreement_of(engine_log_probs_per_sequence(rollouts_messages, owners, scored), scored)


def agreement_of(engine: Sequence[list[float] | None], scored: Sequence[ScoredPositions]) -> dict[str, float]:
    """rollout_probs_diff over the sequences the engine's values were paired with (engine_log_probs_per_sequence)."""
    return rollout_probs_diff([(values, part.log_probs) for values, part in zip(engine, scored) if values is not None])


def engine_log_probs_per_sequence(rollouts_messages: Sequence[Sequence[dict[str, Any]]], owners: Sequence[int],
                                  scored: Sequence[ScoredPositions]) -> list[list[float] | None]:
    """For each training sequence j (of rollout `owners[j]`), the engine's log-probs of its loss
    tokens, in the order the trainer scored them; None where the engine returned none or the
    rollout's sequences do not spell its sampled turns (then nothing can be paired token by token).
    A rollout's sequences take its sampled tokens in turn order, each as many as it scores."""
    out: list[list[float] | None] = [None] * len(owners)
    for index, messages in enumerate(rollouts_messages):
        mine = [j for j, owner in enumerate(owners) if owner == index]
        pair = sampled_and_scored(messages, [scored[j] for j in mine])
        if pair is None:
            continue
        engine, start = pair[0], 0
        for j in mine:
            count = len(scored[j].token_ids)
            out[j] = engine[start:start + count]
            start += count
    return out
