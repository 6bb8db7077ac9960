"""How one RL step's kept rollouts become optimizer steps, composed as veRL's actor composes them
(docs/ALGORITHMS.md, "The update schedule"): the mini-batch split, Dr. GRPO's constant, and how
per-micro-batch metrics become one logged number. What each micro-batch's loss weighs belongs to
the loss aggregation (loss_aggregation.agg_loss, which owns `micro_batch_weight`; it is named here
too because the schedule's tests check it beside the split).

Pure functions of counts and floats: no model, no tensors, no I/O. trainers/grpo.py calls them.
"""
from __future__ import annotations

from collections.abc import Sequence

from .loss_aggregation import LOSS_AGG_SCOPES, micro_batch_weight

__all__ = ["LOSS_AGG_SCOPES", "dr_grpo_constant", "mean_over_micro_batches", "micro_batch_weight", "mini_batch_ranges", "split_ranges"]


def split_ranges(total: int, size: int) -> list[range]:
    """veRL's `DataProto.split(size)`: fixed-size chunks in order, the last takes what is left."""
    if size < 1:
        raise ValueError(f"a split size must be at least 1; got {size}")
    return [range(start, min(start + size, total)) for start in range(0, total, size)]


def mini_batch_ranges(rollouts: int, group_size: int, groups_per_mini_batch: int | None, count: int | None = None,
                      world: int = 1) -> list[range]:
    """Rollout index ranges of one rank's mini-batches.

    One process: `DataProto.split(ppo_mini_batch_size × group_size)` as `dp_actor.update_policy`
    calls it — chunks of `groups_per_mini_batch` whole groups, the last one takes the rest
    (`None`: one mini-batch). With `world` processes each rank splits its own groups (every
    world-th prompt) into chunks of ⌈groups_per_mini_batch / world⌉ groups, as veRL divides
    `ppo_mini_batch_size` by the data-parallel size; when `groups_per_mini_batch` is a multiple of
    `world`, chunk k of every rank together is exactly the one process's mini-batch k. `count`
    pads with empty ranges so every rank takes as many optimizer steps as the busiest one."""
    if groups_per_mini_batch is None:
        parts = [range(0, rollouts)]
    else:
        per_rank = -(-groups_per_mini_batch // world)
        parts = split_ranges(rollouts, per_rank * group_size) if rollouts else []
    if count is not None:
        if len(parts) > count:
            raise ValueError(f"{rollouts} rollouts make {len(parts)} mini-batches on this rank, more than the {count} asked")
        parts += [range(rollouts, rollouts)] * (count - len(parts))
    return parts or [range(0, 0)]


def dr_grpo_constant(loss_scale_factor: float | None, max_new_tokens: int, max_turns: int) -> float:
    """The constant `seq-mean-token-sum-norm` divides by: `rl.loss_scale_factor` when set, else the
    most policy tokens a rollout can hold (max_new_tokens per turn × max_turns), the analogue of
    veRL's default, the padded response length (`loss_mask.shape[-1]`, the response budget)."""
    if loss_scale_factor is not None:
        if loss_scale_factor <= 0:
            raise ValueError(f"rl.loss_scale_factor must be positive; got {loss_scale_factor}")
        return float(loss_scale_factor)
    return float(max(1, max_new_tokens) * max(1, max_turns))


def mean_over_micro_batches(values: Sequence[float]) -> float:
    """A logged actor metric as veRL reports it: every micro-batch's value (a token mean over that
    micro-batch), appended over mini-batches and epochs, then the plain mean (`reduce_metrics`)."""
    return sum(values) / len(values) if values else 0.0
