"""The clipped policy-gradient loss with DAPO's clip-higher and dual clip, as in veRL
(`compute_policy_loss`, docs/ALGORITHMS.md).

ratio = exp(clamp(logp − logp_old, ±20)); per token loss = max(−A·ratio, −A·clip(ratio, 1−ε_low,
1+ε_high)), and for A < 0 also capped at −A·c (dual clip). The defaults are the run config's
(RlConfig, read from schemas/run-config.schema.json). Pure tensor math.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..config import RlConfig
from .loss_aggregation import LossAggregation, agg_loss, masked_mean

LOG_RATIO_LIMIT = 20.0


@dataclass
class PolicyLossResult:
    loss: torch.Tensor
    clipfrac: torch.Tensor
    clipfrac_lower: torch.Tensor
    approx_kl: torch.Tensor
    per_token: torch.Tensor


def clipped_policy_loss(
    log_probs: torch.Tensor,
    old_log_probs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip_low: float = RlConfig.clip_ratio_low,
    clip_high: float = RlConfig.clip_ratio_high,
    clip_ratio_c: float = RlConfig.clip_ratio_c,
    aggregation: str | LossAggregation = RlConfig.loss_agg_mode,
    normalizer: float | None = None,
    token_weights: torch.Tensor | None = None,
) -> PolicyLossResult:
    """`advantages` is [B, T] (or [B], broadcast over tokens); every tensor shares `mask`'s shape.
    The loss is aggregated by loss_aggregation.agg_loss: `aggregation` is a LossAggregation (a
    micro-batch's mode, scope and mini-batch totals), or a mode name with Dr. GRPO's `normalizer`
    for a matrix that is the whole batch. `token_weights` (mask's shape, no gradient) multiplies each
    token's loss after the clip: the rollout correction's importance weights (rollout_correction.py)."""
    if isinstance(aggregation, str):
        aggregation = LossAggregation(mode=aggregation, constant=normalizer)
    if clip_ratio_c <= 1.0:
        raise ValueError(f"clip_ratio_c must be > 1 for the dual clip to be a lower bound; got {clip_ratio_c}")
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(-1).expand_as(log_probs)
    log_ratio = torch.clamp(log_probs - old_log_probs, min=-LOG_RATIO_LIMIT, max=LOG_RATIO_LIMIT)
    ratio = torch.exp(log_ratio)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)
    upper = torch.maximum(unclipped, clipped)
    dual = -advantages * clip_ratio_c
    capped = torch.minimum(dual, upper)
    per_token = torch.where(advantages < 0, capped, upper)
    if token_weights is not None:
        per_token = per_token * token_weights.detach()
    return PolicyLossResult(
        loss=agg_loss(per_token, mask, aggregation),
        clipfrac=masked_mean(torch.gt(clipped, unclipped).float(), mask),
        clipfrac_lower=masked_mean((torch.gt(upper, dual) & (advantages < 0)).float(), mask),
        approx_kl=masked_mean(-log_ratio, mask),
        per_token=per_token,
    )
