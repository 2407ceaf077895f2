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
