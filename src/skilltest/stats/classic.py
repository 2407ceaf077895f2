"""Classic intervals: Wilson, Newcombe, Welch and Student t, the median, and pass@k.

``wilson``
    The Wilson score interval (Wilson 1927) of a rate: an approximation, kept for reports that
    show a rate beside a verdict decided elsewhere (trigger firing rates, precision and recall)
    and for readers of older results files.
``newcombe``
    The difference of two such rates, by Newcombe's hybrid score method (Newcombe 1998,
    "Interval estimation for the difference between independent proportions", Statistics in
    Medicine 17:873-890, method 10).
``welch``
    The Welch t interval of a difference of means with exact quantiles of Student's t, for
    reference: it assumes scores that are roughly normal, which bounded scores at small K are
    not (runs that all score the same give it zero width), so verdicts do not use it.

Verdicts read exact intervals for pass rates (:mod:`skilltest.stats.exact`) and confidence
sequences by betting for mean scores (:mod:`skilltest.stats.betting`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from skilltest.stats.interval import CONFIDENCE, DIGITS, EMPTY, Interval, clip, t_value, z_value


def wilson(successes: float, n: int, confidence: float = CONFIDENCE) -> Interval:
    """A rate (or a mean of scores in [0, 1]) with its Wilson score interval.

    Args:
        successes: Runs that passed, or the sum of scores in [0, 1].
        n: Runs.
        confidence: The interval's confidence level.
    """
    if n <= 0:
        return EMPTY
    z = z_value(confidence)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / denom
    return Interval(p, clip(centre - half, 0.0, 1.0), clip(centre + half, 0.0, 1.0))


def newcombe(a: Interval, b: Interval) -> Interval:
    """``a - b`` for two Wilson intervals, by Newcombe's hybrid score method; within [-1, 1]."""
    return difference(a, b, bounds=(-1.0, 1.0))


def mean_interval(
    values: Sequence[float],
    bounds: tuple[float, float] | None = None,
    confidence: float = CONFIDENCE,
) -> Interval:
    """A mean with its Student t interval, clipped to ``bounds`` (one value has no width estimate).

    For figures that are not bounded scores (tool calls, cost); scores use
    :func:`skilltest.stats.betting.bounded_mean`.
    """
    n = len(values)
    if n == 0:
        return EMPTY
    mean = sum(values) / n
    low_bound, high_bound = bounds if bounds else (-math.inf, math.inf)
    if n == 1:
        return Interval(mean, low_bound, high_bound)
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = t_value(n - 1, confidence) * math.sqrt(variance / n)
    return Interval(mean, max(low_bound, mean - half), min(high_bound, mean + half))


def welch(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """``mean(a) - mean(b)`` with a Welch t interval (exact t quantile), clipped to [-1, 1]."""
    if not a or not b:
        return EMPTY
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
    half = t_value(df, confidence) * math.sqrt(se2)
    return Interval(diff, max(-1.0, diff - half), min(1.0, diff + half))


def median(values: Sequence[float]) -> float | None:
    """The median, or ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


# Consistency over k runs. A mean says how often a run passes; these say what a user who runs the
# skill k times sees: pass@k, that at least one of the k runs passes (best of k), and pass^k,
# that all k pass (every time). With n >= k judged runs of which c passed, both are estimated
# without bias by counting the k-subsets of the n runs (Chen et al. 2021, "Evaluating Large
# Language Models Trained on Code", for pass@k; the same argument gives pass^k):
#   pass@k = 1 - C(n-c, k) / C(n, k)      pass^k = C(c, k) / C(n, k)
# With n == k they are simply "some run passed" and "every run passed".


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"need 0 <= c <= n and k >= 1 (n={n}, c={c}, k={k})")


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The chance that at least one of ``k`` runs passes, from ``c`` passes in ``n`` runs.

    Args:
        n: Judged runs.
        c: Runs among them that passed.
        k: Runs a user makes; estimated from ``min(k, n)`` when fewer runs were judged.

    Returns:
        The unbiased estimate, or ``None`` without runs.
    """
    _check_counts(n, c, k)
    if n == 0:
        return None
    k = min(k, n)
    return round(1 - math.comb(n - c, k) / math.comb(n, k), DIGITS)


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """The chance that all of ``k`` runs pass, from ``c`` passes in ``n`` runs (see
    :func:`pass_at_k` for the arguments)."""
    _check_counts(n, c, k)
    if n == 0:
        return None
    k = min(k, n)
    return round(math.comb(c, k) / math.comb(n, k), DIGITS)


def consistency(n: int, c: int, k: int) -> dict[str, float | int | None]:
    """``k``, ``pass_at_k`` and ``pass_hat_k`` as a results file stores them per arm (``k`` is
    the one used: at most ``n``)."""
    return {
        "k": min(k, n) if n else k,
        "pass_at_k": pass_at_k(n, c, k),
        "pass_hat_k": pass_hat_k(n, c, k),
    }


def difference(a: Interval, b: Interval, bounds: tuple[float, float] = (-2.0, 2.0)) -> Interval:
    """``a - b`` for two estimates that are themselves differences (a lift in one results file
    minus the lift in another), by the same square-and-add recovery of variance estimates that
    Newcombe's method uses for two rates (Zou and Donner 2008, "Construction of confidence
    limits about effect measures", Statistics in Medicine 27:1693-1702), clipped to
    ``bounds``."""
    if a.empty or b.empty:
        return EMPTY
    assert a.value is not None and a.low is not None and a.high is not None
    assert b.value is not None and b.low is not None and b.high is not None
    diff = a.value - b.value
    below = math.hypot(a.value - a.low, b.high - b.value)
    above = math.hypot(a.high - a.value, b.value - b.low)
    return Interval(diff, clip(diff - below, *bounds), clip(diff + above, *bounds))
