"""Exact intervals for pass rates: one rate (Clopper-Pearson), and the difference of two rates.

A pass rate is binomial: K runs, each passing or not, independently. For binomial data an
interval can be *exact*: its error rate is at most the stated one at every true rate and every
K, not only for large K. Both intervals here are, and both are read at the two-sided level
``confidence`` as two one-sided bounds of ``(1 - confidence) / 2`` each, so a claim that a rate
lies above (or below) a value is wrong at most 2.5% of the time at 95%.

``clopper_pearson``
    One rate, by inverting the two one-sided binomial tests (Clopper & Pearson 1934,
    Biometrika 26:404). K runs that all pass give a lower bound of ``(alpha/2) ** (1/K)``: 11
    passing runs of 11 are needed to show a rate of at least 0.7 at 95%.
``exact_difference``
    Rate A minus rate B, by inverting two exact unconditional one-sided tests (Chan & Zhang
    1999, "Test-based exact confidence intervals for the difference of two binomial
    proportions", Biometrics 55:1202; Agresti & Min 2001, Biometrics 57:963). For each
    candidate difference ``d``, the p-value of "A - B <= d" is the largest chance, over every
    pair of true rates with ``A - B = d`` (the nuisance rate, maximised as in Barnard's test),
    of a table at least as extreme as the one observed. Tables are ordered by the pooled score
    statistic (Suissa & Shuster 1985, J. R. Stat. Soc. A 148:317), closed to a monotone region
    (more passes in A, fewer in B, is never less extreme) so that the largest chance lies on the
    line ``A - B = d`` and grows with ``d``: the p-value is monotone and the interval is exactly
    the set of differences not rejected. No table of 2 runs per arm is extreme enough: 2/2
    against 0/2 has a chance of 1/16 under rates of 0.5 and 0.5, so K=2 decides nothing at 95%;
    3/3 against 0/3 has at most (1/4)^3 = 1.6% when nothing differs, and at most 2.1% when the
    true difference is +0.05.

The sum over tables is one binomial sum per row (the region is, for each count of A, every
count of B up to a limit), so one p-value costs O(K) per nuisance value: exact at every K up to
the tool's limit of 1000 runs per arm. The nuisance rate is maximised over a grid of 64 points
refined by a bounded scalar search around the best ones.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from skilltest.stats.interval import CONFIDENCE, EMPTY, Interval, clip

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

GRID = 64
"""Nuisance rates tried before the search refines the best ones."""
BISECTIONS = 26
"""Halvings of [-1, 1] when inverting a test: a bound to within 3e-8, rounded outwards."""


def clopper_pearson(successes: int, n: int, confidence: float = CONFIDENCE) -> Interval:
    """A rate with its exact Clopper-Pearson interval.

    Args:
        successes: Runs that passed.
        n: Runs.
        confidence: The two-sided level; each bound is one-sided at half the rest.
    """
    if n <= 0:
        return EMPTY
    from scipy.special import betaincinv

    tail = (1 - confidence) / 2
    low = 0.0 if successes == 0 else float(betaincinv(successes, n - successes + 1, tail))
    high = 1.0 if successes == n else float(betaincinv(successes + 1, n - successes, 1 - tail))
    return Interval(successes / n, clip(low, 0.0, 1.0), clip(high, 0.0, 1.0))


def _pooled_z(n1: int, n2: int) -> NDArray[np.float64]:
    """The pooled score statistic of every table (x of n1, y of n2), 0 where it is undefined."""
    import numpy as np

    x = np.arange(n1 + 1, dtype=float)[:, None]
    y = np.arange(n2 + 1, dtype=float)[None, :]
    pooled = (x + y) / (n1 + n2)
    spread = np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(spread > 0, (x / n1 - y / n2) / np.where(spread > 0, spread, 1.0), 0.0)
    return z


@functools.lru_cache(maxsize=4096)
def _region(x1: int, n1: int, x2: int, n2: int) -> tuple[int, ...]:
    """The tables at least as extreme as (x1, x2) in favour of A: for each count x of A, every
    count of B up to the returned limit (-1: none). Non-decreasing in x, so the region only
    grows with more passes in A and fewer in B."""
    import numpy as np

    z = _pooled_z(n1, n2)
    extreme = z >= z[x1, x2] - 1e-12
    limits = np.where(extreme.any(axis=1), n2 - np.argmax(extreme[:, ::-1], axis=1), -1)
    return tuple(int(v) for v in np.maximum.accumulate(limits))


def _chance(
    limits: NDArray[np.int64], n1: int, n2: int, delta: float, rates: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The chance of the region for each rate of B in ``rates``, A's rate being ``B + delta``."""
    import numpy as np
    from scipy.special import bdtr, gammaln, xlog1py, xlogy

    rate_a = np.clip(rates + delta, 0.0, 1.0)[:, None]
    rate_b = np.clip(rates, 0.0, 1.0)[:, None]
    counts = np.arange(n1 + 1, dtype=float)[None, :]
    log_pmf = (
        gammaln(n1 + 1)
        - gammaln(counts + 1)
        - gammaln(n1 - counts + 1)
        + xlogy(counts, rate_a)
        + xlog1py(n1 - counts, -rate_a)
    )
    below = np.where(limits[None, :] >= 0, bdtr(np.maximum(limits, 0)[None, :], n2, rate_b), 0.0)
    return np.asarray((np.exp(log_pmf) * below).sum(axis=1), dtype=float)


@functools.lru_cache(maxsize=65536)
def difference_p_value(x1: int, n1: int, x2: int, n2: int, delta: float) -> float:
    """The exact unconditional p-value of "rate A - rate B <= ``delta``" given x1 of n1 and x2
    of n2 passes: the largest chance of a table at least as extreme, over the nuisance rate."""
    import numpy as np
    from scipy.optimize import minimize_scalar

    if delta <= -1:
        return 0.0 if _region(x1, n1, x2, n2)[0] < n2 else 1.0
    if delta >= 1:
        return 1.0
    limits = np.asarray(_region(x1, n1, x2, n2), dtype=np.int64)
    low, high = max(0.0, -delta), min(1.0, 1.0 - delta)
    grid = np.linspace(low, high, GRID + 1)
    values = _chance(limits, n1, n2, delta, grid)
    best = float(values.max())
    step = (high - low) / GRID
    for index in np.argsort(values)[-2:]:
        centre = float(grid[index])
        found = minimize_scalar(
            lambda rate: -float(_chance(limits, n1, n2, delta, np.array([rate]))[0]),
            bounds=(max(low, centre - step), min(high, centre + step)),
            method="bounded",
            options={"xatol": 1e-8},
        )
        best = max(best, -float(found.fun))
    return min(1.0, best)


def _lower_bound(x1: int, n1: int, x2: int, n2: int, tail: float) -> float:
    """The smallest difference not rejected at one-sided level ``tail`` (rounded down)."""
    rejected, kept = -1.0, 1.0
    if difference_p_value(x1, n1, x2, n2, rejected + 1e-12) > tail:
        return -1.0
    for _ in range(BISECTIONS):
        middle = (rejected + kept) / 2
        if difference_p_value(x1, n1, x2, n2, middle) <= tail:
            rejected = middle
        else:
            kept = middle
    return rejected


@functools.lru_cache(maxsize=16384)
def exact_difference(
    x1: int, n1: int, x2: int, n2: int, confidence: float = CONFIDENCE
) -> Interval:
    """Rate A minus rate B with its exact unconditional interval (see the module docstring).

    Args:
        x1: Runs of A that passed.
        n1: Runs of A.
        x2: Runs of B that passed.
        n2: Runs of B.
        confidence: The two-sided level; each bound is one-sided at half the rest.
    """
    if n1 <= 0 or n2 <= 0:
        return EMPTY
    tail = (1 - confidence) / 2
    low = _lower_bound(x1, n1, x2, n2, tail)
    # The upper bound is the lower bound with the arms swapped: the two directions are mirror
    # images by construction.
    high = -_lower_bound(x2, n2, x1, n1, tail)
    value = x1 / n1 - x2 / n2
    return Interval(value, clip(min(low, value), -1.0, 1.0), clip(max(high, value), -1.0, 1.0))


def most_extreme_difference(edge: float, n: int) -> float:
    """The p-value of n/n against 0/n for "A - B <= ``edge``": ``((1 + edge) / 2) ** (2n)``, the
    smallest any runs can give (3/3 against 0/3: 1.6% at 0, 2.1% at +0.05)."""
    return ((1 + edge) / 2) ** (2 * n) if -1 < edge < 1 else float(edge >= 1)


def most_extreme_rate(bound: float, n: int) -> float:
    """The p-value of n passes of n for "rate <= ``bound``": ``bound ** n`` (mirror it with
    ``1 - bound`` for "rate >= bound")."""
    return min(1.0, max(0.0, bound)) ** n
