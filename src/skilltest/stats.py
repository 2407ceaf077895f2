"""Honest statistics over K repetitions: rates with Wilson intervals, means with t intervals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z_95 = 1.959963984540054

DIGITS = 10
"""Rates, scores and deltas are rounded to this many digits before they meet a threshold, so
that floating-point noise (0.7 * 3 / 3 == 0.6999999999999998) never flips a verdict."""

# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom.
_T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_quantile_975(df: float) -> float:
    """The 0.975 quantile of Student's t (normal beyond 30 degrees of freedom)."""
    if df < 1:
        return math.inf
    whole = math.floor(df)
    if whole <= 30:
        return _T_975[whole - 1]
    return Z_95 + 2.4 / df  # close to the exact value (<0.3% off) from 30 up


@dataclass(frozen=True)
class Interval:
    """A point estimate with a 95% interval."""

    value: float | None
    """The estimate; ``None`` when there is no data."""
    low: float | None
    """Lower bound of the 95% interval."""
    high: float | None
    """Upper bound of the 95% interval."""


def wilson(successes: int, n: int, z: float = Z_95) -> Interval:
    """A proportion with its Wilson score interval; honest at small n and at 0 or 1."""
    if n <= 0:
        return Interval(None, None, None)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low, high = round(centre - half, DIGITS), round(centre + half, DIGITS)
    return Interval(p, max(0.0, low), min(1.0, high))


def mean_interval(values: Sequence[float], bounds: tuple[float, float] | None = None) -> Interval:
    """A mean with its t interval, clipped to ``bounds`` (a single value has no width estimate)."""
    n = len(values)
    if n == 0:
        return Interval(None, None, None)
    mean = sum(values) / n
    if n == 1:
        low, high = bounds if bounds else (-math.inf, math.inf)
        return Interval(mean, low, high)
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = t_quantile_975(n - 1) * math.sqrt(variance / n)
    low, high = mean - half, mean + half
    if bounds:
        low, high = max(bounds[0], low), min(bounds[1], high)
    return Interval(mean, low, high)


def difference_interval(a: Sequence[float], b: Sequence[float]) -> Interval:
    """``mean(a) - mean(b)`` with a Welch t interval; clipped to [-1, 1] for scores."""
    if not a or not b:
        return Interval(None, None, None)
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    diff = mean_a - mean_b
    if len(a) < 2 or len(b) < 2:
        return Interval(diff, -1.0, 1.0)
    var_a = sum((v - mean_a) ** 2 for v in a) / (len(a) - 1)
    var_b = sum((v - mean_b) ** 2 for v in b) / (len(b) - 1)
    se2 = var_a / len(a) + var_b / len(b)
    if se2 == 0:
        return Interval(diff, diff, diff)
    df = se2**2 / ((var_a / len(a)) ** 2 / (len(a) - 1) + (var_b / len(b)) ** 2 / (len(b) - 1))
    half = t_quantile_975(df) * math.sqrt(se2)
    return Interval(diff, max(-1.0, diff - half), min(1.0, diff + half))


def median(values: Sequence[float]) -> float | None:
    """The median, or ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
