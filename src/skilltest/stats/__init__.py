"""Honest statistics over K repetitions: intervals for pass rates and mean scores, and their gaps.

Every score skilltest averages lies in [0, 1]: a run passes or not (a pass rate), or scores in
between (a rubric's mean score). Each kind gets the interval that is right for it:

* :mod:`~skilltest.stats.exact`: pass rates are binomial, so their intervals are exact
  (Clopper-Pearson for one rate, an exact unconditional test inverted for the difference of
  two): never below the stated level, at any K.
* :mod:`~skilltest.stats.betting`: mean scores are bounded, not binomial; their intervals are
  confidence sequences by betting (Waudby-Smith & Ramdas 2024), valid for every distribution on
  [0, 1] and at every number of runs at once, as narrow as the runs allow (close to the
  two-point limit when runs agree) and never of zero width.
* :mod:`~skilltest.stats.classic`: Wilson, Newcombe, Welch and Student t intervals, the median
  and pass@k, for figures that are shown rather than decided on.

The confidence level is a parameter everywhere, because adaptive repetitions spend a pass-rate
claim's error rate over their looks (see :mod:`skilltest.repetitions`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilltest.stats.betting import bounded_mean, mean_difference, two_point_limit
    from skilltest.stats.classic import (
        consistency,
        difference,
        mean_interval,
        median,
        newcombe,
        pass_at_k,
        pass_hat_k,
        welch,
        wilson,
    )
    from skilltest.stats.exact import (
        clopper_pearson,
        difference_p_value,
        exact_difference,
        most_extreme_difference,
        most_extreme_rate,
    )
    from skilltest.stats.interval import (
        CONFIDENCE,
        DIGITS,
        EMPTY,
        Interval,
        clip,
        level,
        t_value,
        z_value,
    )

_NAMES = {
    "bounded_mean": "betting",
    "mean_difference": "betting",
    "two_point_limit": "betting",
    "consistency": "classic",
    "difference": "classic",
    "mean_interval": "classic",
    "median": "classic",
    "newcombe": "classic",
    "pass_at_k": "classic",
    "pass_hat_k": "classic",
    "welch": "classic",
    "wilson": "classic",
    "clopper_pearson": "exact",
    "difference_p_value": "exact",
    "exact_difference": "exact",
    "most_extreme_difference": "exact",
    "most_extreme_rate": "exact",
    "CONFIDENCE": "interval",
    "DIGITS": "interval",
    "EMPTY": "interval",
    "Interval": "interval",
    "clip": "interval",
    "level": "interval",
    "t_value": "interval",
    "z_value": "interval",
}
"""Where each name of the package lives: a module is imported when one of its names is first
asked for, so that a reader of a constant (``DIGITS``) does not import every interval."""

__all__ = [
    "CONFIDENCE",
    "DIGITS",
    "EMPTY",
    "Interval",
    "bounded_mean",
    "clip",
    "clopper_pearson",
    "consistency",
    "difference",
    "difference_p_value",
    "exact_difference",
    "level",
    "mean_difference",
    "mean_interval",
    "median",
    "most_extreme_difference",
    "most_extreme_rate",
    "newcombe",
    "pass_at_k",
    "pass_hat_k",
    "t_value",
    "two_point_limit",
    "welch",
    "wilson",
    "z_value",
]


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'skilltest.stats' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"skilltest.stats.{module}"), name)
