"""How a [batch, tokens] loss matrix becomes one number: veRL's four `loss_agg_mode`s.

token-mean (DAPO): every response token in the batch weighs the same.
seq-mean-token-sum: sum per sequence, mean over the sequences that have a loss token.
seq-mean-token-mean (original GRPO): mean per sequence, mean over the sequences that have a loss token.
seq-mean-token-sum-norm (Dr. GRPO): sum over everything divided by a constant (the max length).
"""
from __future__ import annotations

import torch

AGGREGATION_MODES = ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm")


def aggregate_loss(loss: torch.Tensor, mask: torch.Tensor, mode: str, normalizer: float | None = None) -> torch.Tensor:
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


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp_min(1e-8)
