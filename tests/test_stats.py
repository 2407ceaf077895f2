import math

import pytest

from skilltest.stats import difference_interval, mean_interval, median, wilson


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


def test_wilson_of_no_runs_is_empty():
    assert wilson(0, 0).value is None


def test_mean_interval_uses_student_t():
    interval = mean_interval([0.5, 0.7, 0.9])
    # mean 0.7, sd 0.2, t(2) = 4.303: half width 4.303 * 0.2 / sqrt(3)
    assert interval.value == pytest.approx(0.7)
    assert interval.high - interval.value == pytest.approx(4.303 * 0.2 / math.sqrt(3), rel=1e-3)


def test_mean_interval_is_clipped_to_bounds():
    interval = mean_interval([0.0, 1.0, 1.0], bounds=(0.0, 1.0))
    assert interval.low == 0.0 and interval.high == 1.0


def test_difference_interval_is_welch():
    same = difference_interval([0.5, 0.5], [0.5, 0.5])
    assert (same.value, same.low, same.high) == (0.0, 0.0, 0.0)
    lift = difference_interval([0.9, 1.0, 0.8], [0.2, 0.4, 0.3])
    assert lift.value == pytest.approx(0.6)
    assert 0.3 < lift.low < 0.6 < lift.high < 0.9


def test_median():
    assert median([3, 1, 2]) == 2
    assert median([1, 2, 3, 4]) == 2.5
    assert median([]) is None
