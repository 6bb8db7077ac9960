"""The Wilson interval, checked against its definition (solved numerically here, independently of
the closed form under test) and against published values."""
import math

import pytest

from vistool_trainer.algorithms.intervals import wilson_interval

Z = 1.959963984540054


def _score_bound(successes, n, lower):
    """The p0 where the score statistic |p̂ − p0| / sqrt(p0(1 − p0)/n) equals z, by bisection."""
    p_hat = successes / n
    lo, hi = (0.0, p_hat) if lower else (p_hat, 1.0)
    for _ in range(200):
        mid = (lo + hi) / 2
        inside = abs(p_hat - mid) <= Z * math.sqrt(mid * (1 - mid) / n) if 0 < mid < 1 else False
        if lower:
            lo, hi = (lo, mid) if inside else (mid, hi)
        else:
            lo, hi = (mid, hi) if inside else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("successes, n", [(1, 10), (5, 10), (50, 100), (273, 300), (97, 300), (299, 300), (3, 7)])
def test_bounds_are_where_the_score_test_stops_rejecting(successes, n):
    low, high = wilson_interval(successes, n)
    assert low == pytest.approx(_score_bound(successes, n, lower=True), abs=1e-9)
    assert high == pytest.approx(_score_bound(successes, n, lower=False), abs=1e-9)


def test_published_values():
    assert wilson_interval(50, 100) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0, abs=1e-12)


def test_nothing_observed_is_the_whole_range_and_impossible_counts_are_errors():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="0..n"):
        wilson_interval(11, 10)


def test_no_successes_or_all_successes_put_the_bound_exactly_at_0_or_1():
    # The formula's own rounding gave 3.4e-17 for 0 of 6, so the accuracy 0.0 fell outside its interval.
    for n in (1, 6, 7, 300, 1001):
        low, high = wilson_interval(0, n)
        assert low == 0.0 and 0 < high < 1
        low, high = wilson_interval(n, n)
        assert high == 1.0 and 0 < low < 1


def test_newcombe_hybrid_reproduces_the_papers_examples():
    # Newcombe (1998), independent proportions, method 10: 56/70 − 48/80 and 9/10 − 3/10.
    from vistool_trainer.algorithms.intervals import newcombe_hybrid
    diff, low, high = newcombe_hybrid(56, 70, 48, 80)
    assert abs(diff - 0.2) < 1e-12 and abs(low - 0.0524) < 1e-4 and abs(high - 0.3339) < 1e-4
    _, low, high = newcombe_hybrid(9, 10, 3, 10)
    assert abs(low - 0.1705) < 1e-4 and abs(high - 0.8090) < 1e-4


def test_newcombe_paired_reproduces_the_papers_example():
    # Newcombe (1998), paired proportions, method 10: the table 36, 12, 2, 0 → [0.0569, 0.3404].
    from vistool_trainer.algorithms.intervals import newcombe_paired
    diff, low, high = newcombe_paired(36, 12, 2, 0)
    assert abs(diff - 0.2) < 1e-12 and abs(low - 0.0569) < 1e-4 and abs(high - 0.3404) < 1e-4


def test_newcombe_paired_takes_method_10s_continuity_corrected_phi():
    # Values from an independent computation of Newcombe (1998) method 10 from its definition.
    from vistool_trainer.algorithms.intervals import newcombe_paired, paired_phi
    # Concordant pairs only (the tool changed no answer on 300 tasks): a narrow interval, never zero-wide.
    diff, low, high = newcombe_paired(150, 0, 0, 150)
    assert diff == 0.0 and abs(low + 0.006491782298810898) < 1e-12 and abs(high - 0.006491782298810898) < 1e-12
    # A > n/2 (the numerator loses n/2): Cavo et al. (2012), the paired-table textbook example.
    diff, low, high = newcombe_paired(59, 6, 16, 80)
    assert abs(diff + 0.06211180124223603) < 1e-12
    assert abs(low + 0.11862119563870992) < 1e-12 and abs(high + 0.004625113933050061) < 1e-12
    # 0 ≤ A ≤ n/2: phi is 0 (1·12 − 1·7 = 5 ≤ 10.5); A < 0 keeps its value; an empty margin gives 0.
    assert paired_phi(1, 1, 7, 12) == 0.0
    assert abs(paired_phi(36, 12, 2, 0) - (-24 / (48 * 2 * 38 * 12) ** 0.5)) < 1e-15
    assert paired_phi(5, 0, 3, 0) == 0.0
