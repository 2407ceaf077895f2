"""Intervals against published reference values and against scipy's own computations."""

import pytest
import scipy.stats

from skilltest.stats import (
    mean_interval,
    median,
    newcombe,
    t_value,
    welch,
    wilson,
    z_value,
)


@pytest.mark.parametrize(
    ("successes", "n", "value", "low", "high"),
    [
        (0, 3, 0.0, 0.0, 0.5615),
        (3, 3, 1.0, 0.4385, 1.0),
        (8, 10, 0.8, 0.4902, 0.9433),
        (1, 2, 0.5, 0.0945, 0.9055),
    ],
)
def test_wilson_interval_matches_reference_values(successes, n, value, low, high):
    interval = wilson(successes, n)
    assert interval.value == pytest.approx(value)
    assert interval.low == pytest.approx(low, abs=1e-4)
    assert interval.high == pytest.approx(high, abs=1e-4)


def test_wilson_matches_scipy_binomtest():
    for successes, n in [(0, 4), (3, 7), (10, 10), (17, 30)]:
        reference = scipy.stats.binomtest(successes, n).proportion_ci(0.95, method="wilson")
        interval = wilson(successes, n)
        assert interval.low == pytest.approx(reference.low, abs=1e-9)
        assert interval.high == pytest.approx(reference.high, abs=1e-9)


def test_wilson_of_no_runs_is_empty():
    assert wilson(0, 0).empty


@pytest.mark.parametrize(
    ("a", "b", "low", "high"),
    [
        # Newcombe (1998), Statistics in Medicine 17:873, table II, method 10.
        ((56, 70), (48, 80), 0.0524, 0.3339),
        ((9, 10), (3, 10), 0.1705, 0.8090),
        ((5, 56), (0, 29), -0.0381, 0.1926),
    ],
)
def test_newcombe_matches_the_published_examples(a, b, low, high):
    interval = newcombe(wilson(*a), wilson(*b))
    assert interval.low == pytest.approx(low, abs=1e-4)
    assert interval.high == pytest.approx(high, abs=1e-4)


def test_quantiles_are_exact_at_fractional_degrees_of_freedom():
    # df 1.5 used to be floored to 1 (12.71); the exact quantile is 6.02.
    assert t_value(1.5) == pytest.approx(scipy.stats.t.ppf(0.975, 1.5))
    assert t_value(1.5) == pytest.approx(6.0167, abs=1e-4)
    assert t_value(37.2, 0.99) == pytest.approx(scipy.stats.t.ppf(0.995, 37.2))
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert z_value(1 - 0.05 / 14) == pytest.approx(scipy.stats.norm.ppf(1 - 0.05 / 28))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([0.9, 1.0, 0.8, 0.95], [0.2, 0.4, 0.3]),
        ([0.5, 0.7], [0.1, 0.6, 0.2, 0.2, 0.3]),  # df about 1.5
        ([1.0, 0.0, 1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
    ],
)
def test_welch_matches_scipy(a, b):
    reference = scipy.stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    interval = welch(a, b)
    assert interval.low == pytest.approx(max(-1.0, reference.low), abs=1e-9)
    assert interval.high == pytest.approx(min(1.0, reference.high), abs=1e-9)


def test_mean_interval_uses_exact_student_t():
    values = [0.5, 0.7, 0.9]
    reference = scipy.stats.ttest_1samp(values, 0.0).confidence_interval(0.95)
    interval = mean_interval(values)
    assert interval.value == pytest.approx(0.7)
    assert (interval.low, interval.high) == pytest.approx((reference.low, reference.high))


def test_mean_interval_is_clipped_to_bounds():
    interval = mean_interval([0.0, 1.0, 1.0], bounds=(0.0, 1.0))
    assert interval.low == 0.0 and interval.high == 1.0


def test_median():
    assert median([3, 1, 2]) == 2
    assert median([1, 2, 3, 4]) == 2.5
    assert median([]) is None
