"""The interval type every method returns, the confidence level, and the quantiles they share."""

from __future__ import annotations

import math
from dataclasses import dataclass

CONFIDENCE = 0.95
"""The confidence level of every interval skilltest reports: each verdict's claim is wrong at most
2.5% of the time in each direction."""

DIGITS = 10
"""Rates, scores and deltas are rounded to this many digits before they meet a threshold, so
that floating-point noise (0.7 * 3 / 3 == 0.6999999999999998) never flips a verdict."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with an interval."""

    value: float | None
    """The estimate; ``None`` when there is no data."""
    low: float | None
    """Lower bound of the interval."""
    high: float | None
    """Upper bound of the interval."""

    @property
    def empty(self) -> bool:
        """Whether there was no data to estimate from."""
        return self.value is None or self.low is None or self.high is None


EMPTY = Interval(None, None, None)


def level(confidence: float) -> str:
    """A confidence level as people write it: ``95%``, ``99.64%``."""
    return f"{confidence * 100:.2f}".rstrip("0").rstrip(".") + "%"


def z_value(confidence: float = CONFIDENCE) -> float:
    """The two-sided standard normal quantile of ``confidence`` (1.96 for 0.95)."""
    from scipy.special import ndtri

    return float(ndtri(1 - (1 - confidence) / 2))


def t_value(df: float, confidence: float = CONFIDENCE) -> float:
    """The two-sided quantile of Student's t with ``df`` (possibly fractional) degrees of freedom.

    Exact for every ``df`` > 0 (4.303 for df 2 at 0.95, 6.017 for df 1.5); infinite below that.
    """
    if not df > 0:
        return math.inf
    from scipy.special import stdtrit

    return float(stdtrit(df, 1 - (1 - confidence) / 2))


def clip(value: float, low: float, high: float) -> float:
    """``value`` rounded to :data:`DIGITS` and held within [``low``, ``high``]."""
    return min(high, max(low, round(value, DIGITS)))
