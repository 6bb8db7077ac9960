"""DAPO's dynamic sampling: drop groups whose metric (reward or accuracy) has zero spread — they
carry no gradient under group-relative advantages — and keep generating until enough groups
survive or `max_num_gen_batches` batches were drawn (docs/ALGORITHMS.md). A group of one is kept.

The same loop replaces groups that must not be trained at all (`usable`: a group with an episode
the env server failed, under rl.failed_groups 'drop'), with dynamic sampling on or off.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..config import RlConfig

Group = TypeVar("Group")


def has_spread(values: Sequence[float], tolerance: float = 1e-9) -> bool:
    """True when the group's values are not all equal (a group of one never has spread)."""
    return len(values) > 1 and max(values) - min(values) > tolerance


def is_informative(values: Sequence[float]) -> bool:
    """Whether dynamic sampling keeps the group: its values differ, or it is a group of one (DAPO's
    recipe keeps those: with mean 0 and std 1 its advantage is its score, never zero by construction)."""
    return len(values) == 1 or has_spread(values)


@dataclass
class SamplingOutcome(Generic[Group]):
    kept: list[Group] = field(default_factory=list)
    generated_groups: int = 0
    generation_batches: int = 0
    # Dropped by dynamic sampling: no spread in their metric.
    dropped_groups: int = 0
    # Refused by `usable`, in the order drawn; never counted in dropped_groups.
    unusable: list[Group] = field(default_factory=list)
    reached_target: bool = False


def sample_informative_groups(
    generate_batch: Callable[[int], list[Group]],
    metric_of: Callable[[Group], Sequence[float]],
    target_groups: int,
    max_num_gen_batches: int,
    enabled: bool = RlConfig.dynamic_sampling,
    usable: Callable[[Group], bool] | None = None,
) -> SamplingOutcome[Group]:
    """Call `generate_batch(batch_index)` until `target_groups` groups with spread are kept.

    With `enabled` false every group is kept after one batch (plain GRPO). A group `usable` refuses
    is never kept, whether or not `enabled` is on, and a batch that leaves the target unmet is
    followed by another (None: every group is usable). When the limit is hit first, the groups kept
    so far are returned with `reached_target` false; the caller trains on them (or skips the step if
    none) and says so in a warning.
    """
    if max_num_gen_batches < 1:
        raise ValueError(f"max_num_gen_batches must be at least 1; got {max_num_gen_batches}")
    outcome: SamplingOutcome[Group] = SamplingOutcome()
    while outcome.generation_batches < max_num_gen_batches:
        batch = generate_batch(outcome.generation_batches)
        outcome.generation_batches += 1
        outcome.generated_groups += len(batch)
        refused_before = len(outcome.unusable)
        for group in batch:
            if usable is not None and not usable(group):
                outcome.unusable.append(group)
            elif not enabled or is_informative(metric_of(group)):
                if len(outcome.kept) < target_groups:
                    outcome.kept.append(group)
            else:
                outcome.dropped_groups += 1
        # Plain GRPO draws again only to replace refused groups.
        if len(outcome.kept) >= target_groups or (not enabled and len(outcome.unusable) == refused_before):
            break
    outcome.reached_target = len(outcome.kept) >= target_groups
    return outcome
