"""How a [batch, tokens] loss matrix becomes the number that is backpropagated: veRL's `agg_loss`
(core_algos.py), the one owner of every normalisation (docs/ALGORITHMS.md, "Loss aggregation").

`agg_loss(loss, mask, aggregation)` aggregates one micro-batch's per-token loss with the mode
(`rl.loss_agg_mode`) and weighs it by its share of the mini-batch (`rl.loss_agg_scope`), so that
the micro-batches' values summed are the mini-batch's loss:

- token-mean (DAPO): every response token in the mini-batch weighs the same;
- seq-mean-token-sum: sum per sequence, mean over the sequences that have a loss token;
- seq-mean-token-mean (original GRPO): mean per sequence, mean over those sequences;
- seq-mean-token-sum-norm (Dr. GRPO): the sum over everything divided by a constant.

Callers multiply nothing: the policy loss and the KL term go through here with the same
`LossAggregation`. Pure tensor math: no model, no collectives (the totals arrive already summed
over every process).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..config import RlConfig

AGGREGATION_MODES = ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm")

# rl.loss_agg_scope: over what the loss mean is taken. "mini_batch": one mean over every token (or
# sequence) of the optimizer step's mini-batch, across micro-batches and processes — DAPO's global
# token mean, which veRL's engine workers compute. "micro_batch": each micro-batch's own mean, then
# the plain mean over the mini-batch's micro-batches — veRL's default FSDP worker (dp_actor).
LOSS_AGG_SCOPES = ("mini_batch", "micro_batch")


@dataclass(frozen=True)
class MiniBatchTotals:
    """The mini-batch a micro-batch belongs to, counted over every process: its loss tokens, its
    sequences with at least one loss token, and its micro-batches (veRL's `batch_num_tokens`,
    `global_batch_size` and gradient-accumulation count)."""
    tokens: float
    sequences: float
    micro_batches: int


@dataclass(frozen=True)
class LossAggregation:
    """How `agg_loss` normalises: the mode, the scope, Dr. GRPO's constant (update_schedule's
    `dr_grpo_constant`; None: the mask's width) and the mini-batch's totals (None: the loss matrix
    is the whole mini-batch, and is aggregated on its own)."""
    mode: str = RlConfig.loss_agg_mode
    scope: str = RlConfig.loss_agg_scope
    constant: float | None = None
    totals: MiniBatchTotals | None = None


def agg_loss(loss: torch.Tensor, mask: torch.Tensor, aggregation: LossAggregation = LossAggregation()) -> torch.Tensor:
    """One micro-batch's loss: its own aggregate under `aggregation.mode`, times its weight in the
    mini-batch (`micro_batch_weight`) when `aggregation.totals` says what the mini-batch holds."""
    local = aggregate_loss(loss, mask, aggregation.mode, aggregation.constant)
    totals = aggregation.totals
    if totals is None:
        return local
    weight = micro_batch_weight(aggregation.mode, aggregation.scope, float(mask.sum().item()), float((mask.sum(-1) > 0).sum().item()),
                                totals.tokens, totals.sequences, totals.micro_batches)
    return local * weight


def aggregate_loss(loss: torch.Tensor, mask: torch.Tensor, mode: str, normalizer: float | None = None) -> torch.Tensor:
    """The matrix's own aggregate under `mode`, as if it were the whole mini-batch."""
    mask = mask.to(loss.dtype)
    if mode == "token-mean":
        return (loss * mask).sum() / mask.sum().clamp_min(1e-8)
    # A sequence with no loss token (fully masked) is left out of the mean over sequences, as in
    # current veRL: counting it would shrink every other sequence's weight.
    present = (mask.sum(-1) > 0).to(loss.dtype)
    if mode == "seq-mean-token-sum":
        return ((loss * mask).sum(-1) * present).sum() / present.sum().clamp_min(1.0)
    if mode == "seq-mean-token-mean":
        per_sequence = (loss * mask).sum(-1) / mask.sum(-1).clamp_min(1e-8)
        return (per_sequence * present).sum() / present.sum().clamp_min(1.0)
    if mode == "seq-mean-token-sum-norm":
        scale = float(normalizer) if normalizer is not None else float(mask.shape[-1])
        return (loss * mask).sum() / scale
    raise ValueError(f"loss_agg_mode {mode!r} is unknown: use one of {', '.join(AGGREGATION_MODES)}")


def micro_batch_weight(mode: str, scope: str, tokens: float, sequences: float, total_tokens: float, total_sequences: float,
                       micro_batches: int) -> float:
    """What a micro-batch's own aggregate (`aggregate_loss` over its tokens) is multiplied by, so
    that the mini-batch's gradient is the mean `scope` asks for.

    mini_batch: token-mean weighs a micro-batch by its share of the mini-batch's tokens, the
    sequence means by its share of the sequences, Dr. GRPO's sum over a constant by 1 (the sum
    over the whole mini-batch); the totals are global (every process's). micro_batch: 1 / the
    number of micro-batches in the mini-batch (every process's), whatever the mode."""
    if scope == "micro_batch":
        return 1.0 / max(micro_batches, 1)
    if scope != "mini_batch":
        raise ValueError(f"rl.loss_agg_scope {scope!r} is not one of {', '.join(LOSS_AGG_SCOPES)}")
    if mode == "token-mean":
        return tokens / max(total_tokens, 1.0)
    if mode == "seq-mean-token-sum-norm":
        return 1.0
    if mode in ("seq-mean-token-sum", "seq-mean-token-mean"):
        return sequences / max(total_sequences, 1.0)
    raise ValueError(f"loss_agg_mode {mode!r} is unknown")


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp_min(1e-8)
