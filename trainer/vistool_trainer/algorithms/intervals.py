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
