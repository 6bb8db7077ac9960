"""How a batch of sequences is cut into micro-batches (one forward/backward each, gradients
accumulating over the step): by count (`micro_batch_size` sequences), or by a token budget as
veRL's `use_dynamic_bsz` does (`ppo_max_token_len_per_gpu`).

Batches here are left-padded to their longest row, so what a forward holds in memory is
rows × longest row, not the sum of the lengths (veRL removes padding and budgets the sum): the
budget is on padded tokens. Sorting by length before packing keeps rows of similar length
together, which is what makes a token budget pay. A sequence longer than the budget gets a
micro-batch of its own (it cannot be cut: its tokens attend to each other).

Pure: lengths in, index lists out. The loss weights each micro-batch by its share of the global
token or sequence count, so how a batch is cut changes the sum's rounding, not its value.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MicroBatching:
    """`size` sequences per micro-batch (None: all in one), or — when `max_tokens` is set — as many
    as fit in that many padded tokens."""

    size: int | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.size is not None and self.size < 1:
            raise ValueError(f"micro-batch size must be at least 1, got {self.size}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"micro-batch token budget must be at least 1, got {self.max_tokens}")

    def split(self, lengths: list[int]) -> list[list[int]]:
        if self.max_tokens is not None:
            return by_padded_tokens(lengths, self.max_tokens)
        return by_count(len(lengths), self.size)


def by_count(count: int, size: int | None) -> list[list[int]]:
    """[[0..size-1], [size..2·size-1], ...] in order; one micro-batch of everything when size is None."""
    if count == 0:
        return []
    step = size or count
    return [list(range(start, min(start + step, count))) for start in range(0, count, step)]


def by_padded_tokens(lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Micro-batches of indices whose padded size (rows × longest row) stays within `max_tokens`.

    Longest first, each micro-batch a run of the sorted order filled as far as the budget allows:
    with the padded cost, a run of sorted lengths is never worse than any other grouping, and
    filling greedily gives the fewest micro-batches. Ties keep the input order (a stable sort), so
    the result is a pure function of the lengths."""
    order = sorted(range(len(lengths)), key=lambda index: -lengths[index])
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        length = lengths[index]
        if current and (len(current) + 1) * max(longest, length) > max_tokens:
            batches.append(current)
            current, longest = [], 0
        current.append(index)
        longest = max(longest, length)
    if current:
        batches.append(current)
    return batches


def padded_tokens(lengths: list[int], batches: list[list[int]]) -> list[int]:
    """Rows × longest row of each micro-batch: what a left-padded forward holds."""
    return [len(batch) * max((lengths[i] for i in batch), default=0) for batch in batches]
