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
    of a table at least as extreme as the one observed. Tables are ordered by the score
    statistic under ``d`` itself (Miettinen & Nurminen 1985, Statistics in Medicine 4:213; the
    Chan-Zhang construction), closed to a monotone region (more passes in A, fewer in B, is
    never less extreme) so that the largest chance lies on the line ``A - B = d``; the interval
    is the set of differences not rejected. Ordering by the statistic under each ``d``, not
    only at 0 (the pooled score), is what lets ties inform: 10/10 against 10/10 gives
    [-0.31, +0.31] and 5/10 against 5/10 [-0.46, +0.46], and two arms that always pass are
    ``neutral`` at 75 runs per arm (with the pooled ordering every tie gave the same interval,
    and it took about 1000). No table of 2 runs per arm is extreme enough: 2/2
    against 0/2 has a chance of 1/16 under rates of 0.5 and 0.5, so K=2 decides nothing at 95%;
    3/3 against 0/3 has at most (1/4)^3 = 1.6% when nothing differs, and at most 2.1% when the
    true difference is +0.05.

The sum over tables is one binomial sum per row (the region is, for each count of A, every
count of B up to a limit), so one p-value costs O(K) per nuisance value once the region is
known: exact at every K up to the tool's limit of 1000 runs per arm (about 0.1 s per interval
at 10 runs per arm, tens of seconds at 1000). The nuisance rate is maximised over a grid of 64
points refined by two finer grids around the best two.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from skilltest.stats.interval import CONFIDENCE, EMPTY, Interval, clip

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

GRID = 64
"""Nuisance rates tried before the search refines the best ones."""
SCAN = 0.01
"""The step of the scan for the first difference not rejected."""
BISECTIONS = 16
"""Halvings of a scan step when inverting a test: a bound to within 2e-7, rounded outwards."""


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


def _score_z(n1: int, n2: int, delta: float | NDArray[np.float64]) -> NDArray[np.float64]:
    """The score statistic of every table (x of n1, y of n2) for "A - B = ``delta``"
    (Miettinen & Nurminen 1985): the observed difference minus ``delta``, over its standard
    error at the rates most likely under that difference. At ``delta`` 0 it is the pooled
    score statistic; 0 where the standard error vanishes (every run of both arms alike at 0)."""
    import numpy as np

    p1 = np.arange(n1 + 1, dtype=float)[:, None] / n1
    p2 = np.arange(n2 + 1, dtype=float)[None, :] / n2
    if np.ndim(delta):
        delta = np.asarray(delta, dtype=float)[:, None, None]
    if np.all(np.abs(delta) < 1e-15):
        pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
        rate_a = rate_b = pooled
    else:
        # The constrained maximum-likelihood rates, in closed form (Farrington & Manning 1990).
        theta = n2 / n1
        a = 1 + theta
        b = -(1 + theta + p1 + theta * p2 + delta * (theta + 2))
        c = delta * delta + delta * (2 * p1 + theta + 1) + p1 + theta * p2
        d = -p1 * delta * (1 + delta)
        v = b**3 / (27 * a**3) - b * c / (6 * a**2) + d / (2 * a)
        u = np.sign(v) * np.sqrt(np.maximum(b * b / (9 * a * a) - c / (3 * a), 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            cosine = np.where(u != 0, v / np.where(u != 0, u**3, 1.0), 1.0)
        w = (np.pi + np.arccos(np.clip(cosine, -1.0, 1.0))) / 3
        rate_a = np.clip(2 * u * np.cos(w) - b / (3 * a), 0.0, 1.0)
        rate_b = np.clip(rate_a - delta, 0.0, 1.0)
        # At a difference of 0 the constrained rates are the pooled rate.
        zero = np.abs(delta) < 1e-15
        if np.any(zero):
            pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
            rate_a = np.where(zero, pooled, rate_a)
            rate_b = np.where(zero, pooled, rate_b)
    spread = np.sqrt(rate_a * (1 - rate_a) / n1 + rate_b * (1 - rate_b) / n2)
    gap = p1 - p2 - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(spread > 1e-15, gap / np.where(spread > 1e-15, spread, 1.0), 0.0)
    return np.asarray(z, dtype=float)


@functools.lru_cache(maxsize=65536)
def _region(x1: int, n1: int, x2: int, n2: int, delta: float) -> tuple[int, ...]:
    """The tables at least as extreme as (x1, x2) in favour of "A - B > ``delta``", by the score
    statistic under ``delta``: for each count x of A, every count of B up to the returned limit
    (-1: none). Non-decreasing in x, so the region only grows with more passes in A and fewer
    in B."""
    import numpy as np

    z = _score_z(n1, n2, delta)
    extreme = z >= z[x1, x2] - 1e-9
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


def _nuisance_range(delta: float) -> tuple[float, float]:
    return max(0.0, -delta), min(1.0, 1.0 - delta)


def _scan_p_values(
    x1: int, n1: int, x2: int, n2: int, deltas: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The p-value at each of ``deltas`` (all in (-1, 1)), maximised over the grid of nuisance
    rates only: never above the exact one."""
    import numpy as np
    from scipy.special import bdtr, gammaln, xlog1py, xlogy

    z = _score_z(n1, n2, deltas)
    extreme = z >= z[:, x1, x2][:, None, None] - 1e-9
    limits = np.where(extreme.any(axis=2), n2 - np.argmax(extreme[:, :, ::-1], axis=2), -1)
    limits = np.maximum.accumulate(limits, axis=1)
    steps = np.linspace(0.0, 1.0, GRID + 1)[None, :]
    low, high = np.maximum(0.0, -deltas)[:, None], np.minimum(1.0, 1.0 - deltas)[:, None]
    rate_b = low + (high - low) * steps
    rate_a = np.clip(rate_b + deltas[:, None], 0.0, 1.0)[:, :, None]
    counts = np.arange(n1 + 1, dtype=float)[None, None, :]
    log_pmf = (
        gammaln(n1 + 1)
        - gammaln(counts + 1)
        - gammaln(n1 - counts + 1)
        + xlogy(counts, rate_a)
        + xlog1py(n1 - counts, -rate_a)
    )
    below = np.where(
        limits[:, None, :] >= 0,
        bdtr(np.maximum(limits, 0)[:, None, :], n2, rate_b[:, :, None]),
        0.0,
    )
    return np.asarray((np.exp(log_pmf) * below).sum(axis=2).max(axis=1), dtype=float)


@functools.lru_cache(maxsize=65536)
def difference_p_value(x1: int, n1: int, x2: int, n2: int, delta: float) -> float:
    """The exact unconditional p-value of "rate A - rate B <= ``delta``" given x1 of n1 and x2
    of n2 passes: the largest chance, over the nuisance rate, of a table at least as extreme by
    the score statistic under ``delta``."""
    import numpy as np

    if delta >= 1:
        return 1.0
    if delta <= -1:
        # Only 0 of n1 against n2 of n2 can happen, the least extreme table of all.
        return 1.0 if (x1, x2) == (0, n2) else 0.0
    limits = np.asarray(_region(x1, n1, x2, n2, delta), dtype=np.int64)
    low, high = _nuisance_range(delta)
    grid = np.linspace(low, high, GRID + 1)
    values = _chance(limits, n1, n2, delta, grid)
    best = float(values.max())
    step = (high - low) / GRID
    # Zoom in twice around the two best rates: 1/512 of the grid step, then 1/16384.
    for index in np.argsort(values)[-2:]:
        centre = float(grid[index])
        for width in (step, step / 32):
            local = np.linspace(max(low, centre - width), min(high, centre + width), 65)
            found = _chance(limits, n1, n2, delta, local)
            centre = float(local[int(np.argmax(found))])
            best = max(best, float(found.max()))
    return min(1.0, best)


FULL_SCAN = 2500
"""Up to this many tables (50 runs per arm) the scan starts at -1; above it, a few steps below
an approximate bound at a tenth of the level, where the p-value has long been negligible."""


def _guess_step(x1: int, n1: int, x2: int, n2: int, tail: float) -> int:
    """The scan step of Newcombe's approximate lower bound at a fifth of ``tail``."""
    from skilltest.stats.classic import newcombe, wilson

    confidence = 1 - 2 * tail / 5
    guess = newcombe(wilson(x1, n1, confidence), wilson(x2, n2, confidence)).low
    return int(((guess if guess is not None else -1.0) + 1) / SCAN)


def _lower_bound(x1: int, n1: int, x2: int, n2: int, tail: float) -> float:
    """The smallest difference not rejected at one-sided level ``tail`` (rounded down).

    The ordering changes with the difference tested, so the p-value need not grow with it:
    differences are scanned upwards in steps of :data:`SCAN` (nuisance grid only, which never
    overstates a p-value) to the first one kept, then the step below it is bisected with the
    full maximisation."""
    import numpy as np

    if difference_p_value(x1, n1, x2, n2, -1.0) > tail:
        return -1.0
    value = x1 / n1 - x2 / n2
    steps = math.floor((value + 1) / SCAN + 1e-9)
    kept_step = steps
    first = 1 if n1 * n2 <= FULL_SCAN else max(1, _guess_step(x1, n1, x2, n2, tail) - 2)
    chunk = max(1, min(steps + 1 - first, 2_000_000 // ((n1 + 1) * (n2 + 1))))
    for begin in range(first, steps + 1, chunk):
        indices = np.arange(begin, min(steps + 1, begin + chunk))
        kept_at = np.flatnonzero(
            _scan_p_values(x1, n1, x2, n2, np.asarray(-1.0 + indices * SCAN, dtype=np.float64))
            > tail
        )
        if kept_at.size:
            kept_step = int(indices[kept_at[0]])
            break
    kept = round(-1.0 + kept_step * SCAN, 12) if kept_step < steps else value
    rejected = round(-1.0 + (kept_step - 1) * SCAN, 12)
    # The grid may understate a p-value: step back while the full maximisation keeps the step below.
    while rejected > -1.0 and difference_p_value(x1, n1, x2, n2, rejected) > tail:
        kept, rejected = rejected, round(rejected - SCAN, 12)
    if rejected <= -1.0:
        rejected = -1.0
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
