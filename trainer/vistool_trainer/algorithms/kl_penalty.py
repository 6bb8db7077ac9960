"""Per-token KL estimators between the policy and a reference, as veRL's `kl_penalty` (docs/ALGORITHMS.md).

k1: logp − ref; abs: |logp − ref|; k2: ½(logp − ref)²; k3 (low_var_kl): exp(ref − logp) − (ref − logp) − 1,
with the log-ratio clamped to ±20 and the result to ±10.
"""
from __future__ import annotations

import torch

KL_ESTIMATORS = ("k1", "abs", "k2", "k3")
_ALIASES = {"kl": "k1", "mse": "k2", "low_var_kl": "k3"}


def kl_penalty(log_probs: torch.Tensor, ref_log_probs: torch.Tensor, estimator: str = "k3") -> torch.Tensor:
    name = _ALIASES.get(estimator, estimator)
    difference = log_probs - ref_log_probs
    if name == "k1":
        return difference
    if name == "abs":
        return difference.abs()
    if name == "k2":
        return 0.5 * difference.square()
    if name == "k3":
        log_ratio = torch.clamp(ref_log_probs - log_probs, min=-20.0, max=20.0)
        return torch.clamp(torch.exp(log_ratio) - log_ratio - 1.0, min=-10.0, max=10.0)
    raise ValueError(f"KL estimator {estimator!r} is unknown: use one of {', '.join(KL_ESTIMATORS)} (or kl, mse, low_var_kl)")
