"""Exact intervals for pass rates, against published values and independent computations."""

import itertools

import numpy as np
import pytest
import scipy.optimize
import scipy.stats

from skilltest.stats import (
    clopper_pearson,
    difference_p_value,
    exact_difference,
    most_extreme_difference,
)


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion",
        # Statistics in Medicine 17:857, table I, method 5 (Clopper-Pearson).
        (15, 148, 0.0578, 0.1617),
        (0, 20, 0.0, 0.1684),
        (1, 29, 0.0009, 0.1776),
    ],
)
def test_clopper_pearson_matches_published_values(successes, n, low, high):
    interval = clopper_pearson(successes, n)
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-4)


def test_clopper_pearson_matches_scipy():
    for successes, n in [(0, 3), (3, 3), (2, 3), (11, 11), (17, 30), (500, 1000)]:
        reference = scipy.stats.binomtest(successes, n).proportion_ci(0.95, method="exact")
        interval = clopper_pearson(successes, n)
        assert (interval.low, interval.high) == pytest.approx(
            (reference.low, reference.high), abs=1e-9
        )
    # All passing: the lower bound is (alpha/2) ** (1/n); 11 runs are the first to reach 0.7.
    assert clopper_pearson(11, 11).low == pytest.approx(0.025 ** (1 / 11))
    assert clopper_pearson(10, 10).low < 0.7 < clopper_pearson(11, 11).low


@pytest.mark.parametrize(
    "table", [(3, 3, 0, 3), (2, 2, 0, 2), (7, 10, 2, 10), (5, 8, 1, 9), (10, 12, 4, 15)]
)
def test_the_difference_p_value_at_zero_is_barnards_test(table):
    # Barnard's exact unconditional test with the pooled score statistic, as scipy computes it.
    x1, n1, x2, n2 = table
    reference = scipy.stats.barnard_exact(
        [[x1, x2], [n1 - x1, n2 - x2]], alternative="greater", pooled=True, n=200
    )
    assert difference_p_value(x1, n1, x2, n2, 0.0) == pytest.approx(reference.pvalue, rel=1e-9)


def _score(x, n1, y, n2, delta):
    """The Miettinen-Nurminen score statistic under "A - B = delta", its constrained rates found
    by maximising the likelihood numerically (not the closed form the module uses)."""
    low, high = max(0.0, -delta), min(1.0, 1.0 - delta)

    def minus_log_likelihood(rate):
        return -(
            scipy.stats.binom.logpmf(x, n1, min(1.0, rate + delta))
            + scipy.stats.binom.logpmf(y, n2, rate)
        )

    rate = scipy.optimize.minimize_scalar(
        minus_log_likelihood, bounds=(low, high), method="bounded", options={"xatol": 1e-12}
    ).x
    spread = np.sqrt((rate + delta) * (1 - rate - delta) / n1 + rate * (1 - rate) / n2)
    return 0.0 if spread < 1e-9 else (x / n1 - y / n2 - delta) / spread


def _brute_p_value(x1, n1, x2, n2, delta):
    """The p-value by enumerating every table and a grid of 20001 nuisance rates."""
    scores = {
        (x, y): _score(x, n1, y, n2, delta)
        for x, y in itertools.product(range(n1 + 1), range(n2 + 1))
    }
    observed = scores[x1, x2]
    region = {
        (x, y)
        for x, y in scores
        # the monotone closure: some table at most as far right and at least as far down
        if any(scores[a, b] >= observed - 1e-6 for a in range(x + 1) for b in range(y, n2 + 1))
    }
    rates = np.linspace(max(0, -delta), min(1, 1 - delta), 20001)
    total = np.zeros_like(rates)
    for x, y in region:
        total += scipy.stats.binom.pmf(x, n1, rates + delta) * scipy.stats.binom.pmf(y, n2, rates)
    return float(total.max())


@pytest.mark.parametrize(
    ("table", "delta"),
    [((3, 3, 0, 3), 0.05), ((4, 5, 1, 4), -0.05), ((6, 7, 2, 6), 0.2), ((2, 4, 3, 4), -0.3)],
)
def test_the_difference_p_value_matches_a_brute_force_computation(table, delta):
    assert difference_p_value(*table, delta) == pytest.approx(
        _brute_p_value(*table, delta), rel=1e-4
    )


def test_the_interval_is_the_set_of_differences_not_rejected():
    interval = exact_difference(9, 10, 1, 10)
    assert interval.value == pytest.approx(0.8)
    assert difference_p_value(9, 10, 1, 10, interval.low) <= 0.025
    assert difference_p_value(9, 10, 1, 10, interval.low + 1e-6) > 0.025
    # Every difference below the bound is rejected.
    below = np.linspace(-0.999, interval.low, 200)
    assert max(difference_p_value(9, 10, 1, 10, d) for d in below) <= 0.025


@pytest.mark.parametrize(
    ("table", "bounds"),
    [
        # The intervals the gate and the reports print in their tests and in the README.
        ((6, 8, 8, 8), (-0.6509, 0.1746)),
        ((3, 4, 4, 4), (-0.8059, 0.3886)),
        ((8, 8, 8, 8), (-0.3694, 0.3694)),
        ((2, 8, 8, 8), (-0.9681, -0.2919)),
    ],
)
def test_printed_intervals_agree_with_enumerating_every_table(table, bounds):
    interval = exact_difference(*table)
    assert (interval.low, interval.high) == pytest.approx(bounds, abs=1e-4)
    x1, n1, x2, n2 = table
    # The lower bound is the first difference the brute-force test keeps; by symmetry the upper
    # bound is the lower bound of B - A.
    assert _brute_p_value(x1, n1, x2, n2, interval.low) <= 0.025 + 1e-9
    assert _brute_p_value(x1, n1, x2, n2, interval.low + 1e-3) > 0.025
    assert _brute_p_value(x2, n2, x1, n1, -interval.high) <= 0.025 + 1e-9
    assert _brute_p_value(x2, n2, x1, n1, -interval.high + 1e-3) > 0.025


def test_ties_carry_information():
    # Ten passes of ten in both arms rule out more than five of ten in both: the ordering is by
    # the score statistic under each tested difference, not only at 0.
    always = exact_difference(10, 10, 10, 10)
    half = exact_difference(5, 10, 5, 10)
    assert (always.low, always.high) == pytest.approx((-0.3085, 0.3085), abs=1e-4)
    assert (half.low, half.high) == pytest.approx((-0.4561, 0.4561), abs=1e-4)
    # Tied arms that always pass become neutral (within +-0.05) at 75 runs per arm.
    assert exact_difference(75, 75, 75, 75).low >= -0.05
    assert exact_difference(74, 74, 74, 74).low < -0.05


def _coverage_errors(n1, n2, rate_a, rate_b):
    """The exact chance that the interval's lower bound lies above the true difference, and the
    chance that its upper bound lies below it, summed over every table."""
    true = rate_a - rate_b
    above = below = 0.0
    for x, y in itertools.product(range(n1 + 1), range(n2 + 1)):
        chance = scipy.stats.binom.pmf(x, n1, rate_a) * scipy.stats.binom.pmf(y, n2, rate_b)
        interval = exact_difference(x, n1, y, n2)
        above += chance * (interval.low > true + 1e-12)
        below += chance * (interval.high < true - 1e-12)
    return above, below


@pytest.mark.parametrize(("n1", "n2"), [(3, 3), (5, 5), (4, 6)])
def test_each_bound_errs_at_most_2_5_percent_at_every_pair_of_rates(n1, n2):
    rates = [0.0, 0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95, 1.0]
    worst = max(max(_coverage_errors(n1, n2, a, b)) for a, b in itertools.product(rates, rates))
    assert worst <= 0.025


@pytest.mark.parametrize("table", [(3, 3, 0, 3), (2, 5, 4, 6), (7, 9, 7, 9), (0, 4, 1, 2)])
def test_swapping_the_arms_mirrors_the_interval(table):
    x1, n1, x2, n2 = table
    forward, backward = exact_difference(x1, n1, x2, n2), exact_difference(x2, n2, x1, n1)
    assert (backward.low, backward.high) == pytest.approx((-forward.high, -forward.low))


def test_three_runs_decide_a_consistent_separation_two_cannot():
    assert most_extreme_difference(0.0, 3) == pytest.approx(0.25**3)  # 1.6% with no effect
    assert most_extreme_difference(0.05, 3) == pytest.approx(0.525**6)  # 2.1% at +0.05
    assert exact_difference(3, 3, 0, 3).low > 0.05
    assert exact_difference(0, 3, 3, 3).high < -0.05
    # 2/2 vs 0/2 happens 6.25% of the time with no effect: not even 0 is excluded.
    assert most_extreme_difference(0.0, 2) == pytest.approx(0.0625)
    assert exact_difference(2, 2, 0, 2).low < 0
    assert exact_difference(0, 2, 2, 2).high > 0


def test_one_thousand_runs_per_arm_stay_exact_and_fast():
    interval = exact_difference(700, 1000, 600, 1000)
    # Near the normal approximation's 0.1 -+ 0.042 at this size.
    assert interval.low == pytest.approx(0.0567, abs=1e-3)
    assert interval.high == pytest.approx(0.1418, abs=1e-3)
