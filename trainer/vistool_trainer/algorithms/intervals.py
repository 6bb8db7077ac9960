"""Confidence intervals for accuracies: the Wilson score interval, which stays inside [0, 1] and
keeps its coverage near 0 and 1 and at small n, where the normal approximation does not."""
from __future__ import annotations

import math

Z_95 = 1.959963984540054  # the standard normal's 97.5th percentile


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """(low, high) for `successes` out of `n`; (0, 1) when there is nothing to go on (n = 0)."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"successes must lie in 0..n; got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    # At 0 or n successes the bound is exactly 0 or 1; the formula leaves rounding dust there.
    low = 0.0 if successes == 0 else max(0.0, (centre - spread) / denominator)
    high = 1.0 if successes == n else min(1.0, (centre + spread) / denominator)
    return low, high


def newcombe_hybrid(x1: int, n1: int, x2: int, n2: int, z: float = Z_95) -> tuple[float, float, float]:
    """p1 − p2 of two independent samples and its 95% interval: Newcombe's hybrid score interval
    (Newcombe 1998, Statistics in Medicine 17:873, method 10), from each side's Wilson interval.
    The panels compute the same (protocol/eval-summary.ts)."""
    p1 = x1 / n1 if n1 else 0.0
    p2 = x2 / n2 if n2 else 0.0
    l1, u1 = wilson_interval(x1, n1, z)
    l2, u2 = wilson_interval(x2, n2, z)
    diff = p1 - p2
    return diff, max(-1.0, diff - math.hypot(p1 - l1, u2 - p2)), min(1.0, diff + math.hypot(u1 - p1, p2 - l2))


def newcombe_paired(both: int, only_first: int, only_second: int, neither: int, z: float = Z_95) -> tuple[float, float, float]:
    """p1 − p2 on the same tasks (the 2×2 table of right/wrong in each) and its 95% interval:
    Newcombe's paired score interval (Newcombe 1998, Statistics in Medicine 17:2635, method 10):
    the hybrid interval with the correlation phi of the pairs, continuity-corrected as method 10
    defines it (paired_phi). Uncorrected, a table of concordant pairs only (every answer the same
    both ways) has phi 1 and a zero-width interval, as if 300 tasks proved the difference exactly 0."""
    n = both + only_first + only_second + neither
    if n == 0:
        return 0.0, -1.0, 1.0
    p1, p2 = (both + only_first) / n, (both + only_second) / n
    l1, u1 = wilson_interval(both + only_first, n, z)
    l2, u2 = wilson_interval(both + only_second, n, z)
    phi = paired_phi(both, only_first, only_second, neither)
    diff = p1 - p2
    down = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    up = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return diff, max(-1.0, diff - down), min(1.0, diff + up)


def paired_phi(both: int, only_first: int, only_second: int, neither: int) -> float:
    """Method 10's correlation of the pairs: with A = both·neither − only_first·only_second, phi's
    numerator is A − n/2 when A > n/2, 0 when 0 ≤ A ≤ n/2, and A when A < 0; 0 when a margin is empty."""
    n = both + only_first + only_second + neither
    margins = (both + only_first) * (only_second + neither) * (both + only_second) * (only_first + neither)
    if margins == 0:
        return 0.0
    cross = both * neither - only_first * only_second
    numerator = cross - n / 2 if cross > n / 2 else (0.0 if cross >= 0 else cross)
    return numerator / math.sqrt(margins)
