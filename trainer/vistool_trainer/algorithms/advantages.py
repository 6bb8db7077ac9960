"""Group-relative advantages, as veRL's core_algos defines them (docs/ALGORITHMS.md).

GRPO: (score − group mean) / (group std + eps), std unbiased, eps 1e-6. A group of one gets
mean 0 and std 1, as in veRL (its advantage is score / (1 + eps)). Dr. GRPO drops the std
division. Pure functions of tensors: no model, no I/O.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import torch

EPSILON = 1e-6


def group_advantages(scores: torch.Tensor, group_ids: Sequence[object], normalize_by_std: bool = True,
                     epsilon: float = EPSILON) -> torch.Tensor:
    """One scalar advantage per trajectory; `group_ids[i]` names the prompt trajectory i answered."""
    if scores.dim() != 1 or scores.shape[0] != len(group_ids):
        raise ValueError(f"scores must be 1-D with one entry per group id; got shape {tuple(scores.shape)} for {len(group_ids)} ids")
    members: dict[object, list[int]] = defaultdict(list)
    for index, group in enumerate(group_ids):
        members[group].append(index)
    advantages = torch.empty_like(scores, dtype=torch.float32)
    for indices in members.values():
        values = scores[indices].float()
        if len(indices) == 1:
            mean, std = torch.tensor(0.0), torch.tensor(1.0)
        else:
            mean, std = values.mean(), values.std(unbiased=True)
        centred = values - mean
        advantages[indices] = centred / (std + epsilon) if normalize_by_std else centred
    return advantages
