"""Truncated importance sampling between the rollout engine and the trainer (`rl.rollout_is`),
as veRL's decoupled rollout correction does it (`algorithm.rollout_correction`).

A vLLM engine samples from a copy of the weights that is not the trainer's: bf16 where the
trainer keeps fp32, and with LoRA the adapters folded into bf16 weights, which rounds most of an
early update away (model/merged_weights.py, FoldingLoss). PPO's ratio is taken against the
trainer's old log-probs, so without a correction the gradient is that of a policy nobody sampled
from. Each loss token is weighted by w = min(π_old / π_rollout, threshold), detached:

- "token": w_t from that token's two log-probs;
- "sequence": one w per training sequence, the product of its tokens' ratios (exp of the summed
  log-ratios), the same on every token of it.

Log-ratios are clamped to ±20 before the exponential, as veRL does, so a token the engine gave
(almost) no mass cannot overflow. Pure tensor math: no model, no engine.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

ROLLOUT_IS_LEVELS = ("off", "token", "sequence")
LOG_RATIO_BOUND = 20.0


@dataclass(frozen=True)
class RolloutWeights:
    """One sequence's weights on its loss tokens ([L]) and, for the metrics, the same before the
    threshold cut them."""
    applied: torch.Tensor
    raw: torch.Tensor


def rollout_is_weights(old_log_probs: torch.Tensor, rollout_log_probs: torch.Tensor, level: str, threshold: float) -> RolloutWeights:
    """The weights of one training sequence's loss tokens (both inputs [L], on the same tokens)."""
    if level not in ("token", "sequence"):
        raise ValueError(f"rl.rollout_is must be 'token' or 'sequence' to weigh tokens, got {level!r}")
    if threshold < 1.0:
        raise ValueError(f"rl.rollout_is_threshold must be at least 1 (a weight cap below 1 shrinks every on-policy token), got {threshold}")
    if old_log_probs.shape != rollout_log_probs.shape:
        raise ValueError(f"the trainer scored {tuple(old_log_probs.shape)} tokens and the engine {tuple(rollout_log_probs.shape)}")
    log_ratio = old_log_probs.double() - rollout_log_probs.double()
    if level == "sequence":
        log_ratio = log_ratio.sum().expand_as(log_ratio)
    raw = torch.exp(torch.clamp(log_ratio, -LOG_RATIO_BOUND, LOG_RATIO_BOUND)).float()
    return RolloutWeights(applied=raw.clamp(max=threshold), raw=raw)


def rollout_is_metrics(weights: list[RolloutWeights], threshold: float) -> dict[str, float]:
    """veRL's names for the weights' spread over every corrected token of a step; {} when none.

    fraction_high / fraction_low: the share of raw weights above the threshold / below its
    reciprocal; eff_sample_size: 1 / mean((w / mean w)²) over the applied weights, 1 when every
    weight is equal (no mismatch), towards 0 when a few tokens carry the step."""
    applied = torch.cat([w.applied.double() for w in weights]) if weights else torch.zeros(0, dtype=torch.float64)
    if applied.numel() == 0:
        return {}
    raw = torch.cat([w.raw.double() for w in weights])
    normalised = applied / applied.mean().clamp_min(1e-12)
    return {
        "rollout_corr/rollout_is_mean": float(applied.mean()),
        "rollout_corr/rollout_is_max": float(applied.max()),
        "rollout_corr/rollout_is_min": float(applied.min()),
        "rollout_corr/rollout_is_ratio_fraction_high": float((raw > threshold).double().mean()),
        "rollout_corr/rollout_is_ratio_fraction_low": float((raw < 1.0 / threshold).double().mean()),
        "rollout_corr/rollout_is_eff_sample_size": float(1.0 / normalised.square().mean()),
    }
