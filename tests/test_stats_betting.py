"""Confidence sequences by betting: an independent computation, the two-point limit, coverage."""

import math
import random

import pytest

from skilltest.stats import bounded_mean, mean_difference, two_point_limit
from skilltest.stats.betting import FRACTIONS


def _wealth_reaches(values, m, threshold):
    """The mixture of fixed-fraction bettors, one plain loop per bettor."""
    best = 0.0
    wealth = [share for _, share in FRACTIONS]
    for x in values:
        wealth = [w * (1 + u * (x / m - 1)) for w, (u, _) in zip(wealth, FRACTIONS, strict=True)]
        best = max(best, sum(wealth))
    return best >= threshold


def _independent_lower(values, tail=0.025, step=1e-4):
    """The smallest m on a grid of ``step`` that the bettors do not reject."""
    m = step
    while m < 1 and _wealth_reaches(values, m, 1 / tail):
        m += step
    return m - step


@pytest.mark.parametrize(
    "values",
    [[0.9] * 10, [1.0, 1.0], [0.2, 0.9, 0.7, 0.8, 0.6, 1.0], [0.5] * 3, [0.0, 0.3, 0.1]],
)
def test_the_mean_lower_bound_matches_an_independent_computation(values):
    assert bounded_mean(values).low == pytest.approx(_independent_lower(values), abs=1.5e-4)
    mirror = [1 - v for v in values]
    assert bounded_mean(values).high == pytest.approx(1 - _independent_lower(mirror), abs=1.5e-4)


def test_runs_that_all_agree_never_give_a_zero_width_interval():
    two = bounded_mean([1.0, 1.0])
    assert (two.value, two.high) == (1.0, 1.0)
    assert two.low == pytest.approx(0.1187, abs=1e-4)  # (1/80) ** (1/2): half the wealth all in
    middle = bounded_mean([0.5, 0.5, 0.5])
    assert middle.low < 0.5 < middle.high
    constant = mean_difference([0.9] * 30, [0.6] * 30)
    assert constant.low < 0.3 < constant.high


def test_constant_runs_decide_close_to_the_two_point_limit():
    # n runs all at 0.88 cannot exclude a mean of 0.5 while (0.5 / 0.88) ** n > 2.5%: 7 runs.
    limit = math.ceil(math.log(0.025) / math.log(0.5 / 0.88))
    assert limit == 7
    first = next(n for n in range(1, 40) if bounded_mean([0.88] * n).low > 0.5)
    assert limit <= first <= 1.25 * limit
    # The difference: 0.90 against 0.60 at the edge +0.05.
    limit = math.ceil(two_point_limit(0.9, 0.6, 0.05))
    assert limit == 12
    first = next(n for n in range(1, 40) if mean_difference([0.9] * n, [0.6] * n).low > 0.05)
    assert limit <= first <= 1.25 * limit
    # Clean pass/fail: 1.0 against 0.0.
    assert math.ceil(two_point_limit(1.0, 0.0, 0.05)) == 3
    assert next(n for n in range(1, 40) if mean_difference([1.0] * n, [0.0] * n).low > 0.05) == 4


@pytest.mark.parametrize(
    ("a", "b"),
    [([0.9, 0.8, 1.0, 0.7], [0.2, 0.4, 0.1, 0.3]), ([1.0] * 5, [0.0] * 5), ([0.5, 0.6], [0.7])],
)
def test_swapping_the_arms_mirrors_the_difference(a, b):
    forward, backward = mean_difference(a, b), mean_difference(b, a)
    assert (backward.low, backward.high) == pytest.approx((-forward.high, -forward.low))


def _two_point(mean, top, rng):
    return top if rng.random() < mean / top else 0.0


def test_the_least_favourable_distributions_are_excluded_at_most_as_often_as_stated():
    # Runs from two-point distributions whose means differ by exactly +0.05 (the hardest case
    # for a claim of "improved"), looked at after every pair up to 20: the lower bound ever
    # rising above +0.05 must happen at most 2.5% of the time (300 trials: a bound of about
    # 2.5% + 3 standard errors).
    rng = random.Random(5)
    false = 0
    for _ in range(300):
        a = [_two_point(0.55, 0.9, rng) for _ in range(20)]
        b = [_two_point(0.5, 0.6, rng) for _ in range(20)]
        if mean_difference(a, b).low > 0.05:
            false += 1
    assert false / 300 <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / 300)
