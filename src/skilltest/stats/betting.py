"""Confidence sequences by betting for means of scores in [0, 1], and for their differences.

A mean score is bounded but not binomial: a run scores 0.45 or 0.9, not only 0 or 1. The
intervals here hold for *every* distribution on [0, 1] and at *every* number of runs at once
(they are confidence sequences: Waudby-Smith & Ramdas, "Estimating means of bounded random
variables by betting", J. R. Stat. Soc. B 86:1, 2024). So adaptive repetitions may look after
every round and stop whenever the interval decides, with no share of the error rate spent per
look; a fixed K reads the same interval once.

**How.** To test "the mean is at most m", a gambler starts with 1 and, before each run,
stakes a fraction of its wealth on the run scoring above m: after a run scoring x its wealth is
multiplied by ``1 + lam * (x - m)``. If the mean really is at most m, the expected factor is at
most 1, so (Ville's inequality) the wealth ever reaches ``1 / tail`` with chance at most
``tail``. The lower bound is the smallest m whose wealth never got there; the upper bound is
the same for ``1 - x``; each side uses half of ``1 - confidence``.

**Which bets.** The gambler here is a mixture of fixed fractions ``u`` of the largest safe stake
``1 / m``: half of its wealth on ``u = 1`` and the rest shared by ``u = 1/2, 1/4, 1/8, 1/16``.
The all-in part is what makes runs that all score the same decide almost as fast as anything
can: n runs at ``a`` multiply it by ``(a / m) ** n``, the two-point limit (no method valid for
every distribution on [0, 1] can exclude m sooner, because a distribution on {0, a} with mean m
gives the same runs with chance ``(m / a) ** n``), at the cost of the factor 2 it starts with.
One run below m ends that part, and the smaller fractions carry the noisy case: a mixture over
fractions earns nearly what the best fixed fraction would have (the variance-adaptive part;
Waudby-Smith & Ramdas section 5, Cover's universal portfolio). Each fraction is fixed in
advance, so every factor falls as m rises: the wealth is monotone in m, the set of means not
rejected is an interval, and the bisection that finds its ends is exact. The interval never has
zero width: after n runs at ``a`` it is about ``[a / (2 / tail) ** (1/n), ...]``.

**Differences.** For arm A minus arm B, the i-th scored run of each arm form a pair, and the bet
on "A - B <= d" is the product ``(1 + lam * (x - m)) * (1 + lam * (m - d - y))`` with
``m = c + d / 2``: its expectation is ``(1 + lam * s) * (1 - lam * t)`` with ``s <= t`` under
the null, which is at most ``1 - lam**2 s**2 <= 1``, whatever the two distributions are. The
centre ``c`` is chosen before the pair from the pairs before it (the all-in part uses the
median of the two arms' means and 1/2, where the two-point optimum lies; the others the
midpoint of the two means), never from d, and ``lam`` is a fixed fraction of its safe largest
value ``2 / (1 + |2c - 1| + d)``: each factor then falls as d rises, so the difference's
sequence is an interval too. Constant runs at 0.90 against 0.60 exclude +0.05 after 14 pairs
where the two-point limit is 12. Unpaired runs (an arm with more scored runs than the other)
move the estimate, not the bounds.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skilltest.stats.interval import CONFIDENCE, EMPTY, Interval, clip

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

FRACTIONS: tuple[tuple[float, float], ...] = (
    (1.0, 0.5),
    (0.5, 0.125),
    (0.25, 0.125),
    (0.125, 0.125),
    (0.0625, 0.125),
)
"""(fraction of the largest safe stake, share of the starting wealth) of each bettor."""
BISECTIONS = 24
"""Halvings of the search range when finding a bound: to within 1.2e-7, rounded outwards."""


def _log_weights() -> NDArray[np.float64]:
    import numpy as np

    return np.log(np.array([share for _, share in FRACTIONS]))[:, None]


def _fractions() -> NDArray[np.float64]:
    import numpy as np

    return np.array([fraction for fraction, _ in FRACTIONS])[:, None]


def _log_factors(factors: NDArray[np.float64]) -> NDArray[np.float64]:
    import numpy as np

    with np.errstate(divide="ignore"):
        return np.log(np.maximum(factors, 0.0))


def _crossed(log_factors: NDArray[np.float64], tail: float) -> bool:
    """Whether the mixture's wealth (one row of log-factors per bettor) ever reached 1/tail."""
    import numpy as np
    from scipy.special import logsumexp

    paths = np.cumsum(log_factors, axis=1) + _log_weights()
    wealth = logsumexp(paths, axis=0)
    return bool(np.max(wealth) >= math.log(1 / tail))


def _mean_rejected(values: NDArray[np.float64], bound: float, tail: float) -> bool:
    """Whether "mean <= bound" is rejected: the bettors' wealth reached 1/tail."""
    if bound <= 0:
        return bool((values > 0).any())
    factors = 1 + _fractions() * (values[None, :] / bound - 1)
    return _crossed(_log_factors(factors), tail)


def _mean_lower(values: NDArray[np.float64], tail: float) -> float:
    """The smallest mean not rejected (rounded down)."""
    rejected, kept = 0.0, 1.0
    if not _mean_rejected(values, 1e-12, tail):
        return 0.0
    for _ in range(BISECTIONS):
        middle = (rejected + kept) / 2
        if _mean_rejected(values, middle, tail):
            rejected = middle
        else:
            kept = middle
    return rejected


@functools.lru_cache(maxsize=16384)
def _bounded_mean(values: tuple[float, ...], confidence: float) -> Interval:
    import numpy as np

    data = np.clip(np.array(values, dtype=float), 0.0, 1.0)
    tail = (1 - confidence) / 2
    mean = float(data.mean())
    low = _mean_lower(data, tail)
    high = 1 - _mean_lower(1 - data, tail)
    return Interval(mean, clip(min(low, mean), 0.0, 1.0), clip(max(high, mean), 0.0, 1.0))


def bounded_mean(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """The mean of scores in [0, 1] with its betting confidence sequence at ``confidence``.

    Valid at every number of runs at once (see the module docstring); empty without values.
    """
    if not values:
        return EMPTY
    return _bounded_mean(tuple(float(v) for v in values), confidence)


def _centres(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each bettor's centre before each pair, from the pairs before it (never from d)."""
    import numpy as np

    n = len(x)
    before = np.arange(n, dtype=float)
    sum_x = np.concatenate(([0.0], np.cumsum(x)[:-1]))
    sum_y = np.concatenate(([0.0], np.cumsum(y)[:-1]))
    # The all-in bettor: where the two-point optimum lies, the median of the two means and 1/2
    # (1/2 before any pair).
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_x = np.where(before > 0, sum_x / np.maximum(before, 1), 0.5)
        mean_y = np.where(before > 0, sum_y / np.maximum(before, 1), 0.5)
    all_in = np.median(np.stack([mean_x, mean_y, np.full(n, 0.5)]), axis=0)
    # The others: the midpoint of the two means, each started from a pseudo-run at 1/2.
    midpoint = ((sum_x + 0.5) / (before + 1) + (sum_y + 0.5) / (before + 1)) / 2
    rows = [all_in if fraction == 1.0 else midpoint for fraction, _ in FRACTIONS]
    return np.stack(rows)


def _difference_rejected(
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    centres: NDArray[np.float64],
    d: float,
    tail: float,
) -> bool:
    """Whether "mean(x) - mean(y) <= d" is rejected by the paired product bets."""
    import numpy as np

    if d <= -1:
        return True
    if d >= 1:
        return False
    stake = _fractions() * 2 / (1 + np.abs(2 * centres - 1) + d)
    centre = centres + d / 2
    factors = (1 + stake * (x[None, :] - centre)) * (1 + stake * (centre - d - y[None, :]))
    return _crossed(_log_factors(factors), tail)


def _difference_lower(x: NDArray[np.float64], y: NDArray[np.float64], tail: float) -> float:
    """The smallest difference not rejected (rounded down)."""
    centres = _centres(x, y)
    rejected, kept = -1.0, 1.0
    if not _difference_rejected(x, y, centres, rejected + 1e-12, tail):
        return -1.0
    for _ in range(BISECTIONS):
        middle = (rejected + kept) / 2
        if _difference_rejected(x, y, centres, middle, tail):
            rejected = middle
        else:
            kept = middle
    return rejected


@functools.lru_cache(maxsize=16384)
def _mean_difference(a: tuple[float, ...], b: tuple[float, ...], confidence: float) -> Interval:
    import numpy as np

    pairs = min(len(a), len(b))
    x = np.clip(np.array(a[:pairs], dtype=float), 0.0, 1.0)
    y = np.clip(np.array(b[:pairs], dtype=float), 0.0, 1.0)
    tail = (1 - confidence) / 2
    value = sum(a) / len(a) - sum(b) / len(b)
    low = _difference_lower(x, y, tail)
    # The upper bound is the lower bound with the arms swapped: mirror images by construction.
    high = -_difference_lower(y, x, tail)
    return Interval(value, clip(min(low, value), -1.0, 1.0), clip(max(high, value), -1.0, 1.0))


def mean_difference(
    a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE
) -> Interval:
    """``mean(a) - mean(b)`` for scores in [0, 1], with its betting confidence sequence.

    The i-th values of ``a`` and ``b`` are paired (runs in the order they were made); values
    beyond the shorter arm count in the estimate only. Empty when an arm has no value.
    """
    if not a or not b:
        return EMPTY
    return _mean_difference(tuple(float(v) for v in a), tuple(float(v) for v in b), confidence)


def two_point_limit(a: float, b: float, edge: float, confidence: float = CONFIDENCE) -> float:
    """The fewest pairs (fractional) after which runs all at ``a`` against runs all at ``b``
    can exclude a difference of ``edge`` by any method valid for every pair of distributions on
    [0, 1]: the chance of the runs under the least favourable two-point distributions with
    ``mean_a - mean_b = edge`` falls below the one-sided level only then.

    That chance per pair is ``max over mu - nu <= edge of P(X = a) * P(Y = b)``, where
    ``P(X = a)`` is at most ``min(mu / a, (1 - mu) / (1 - a))`` and ``P(Y = b)`` at most
    ``min(nu / b, (1 - nu) / (1 - b))``; it is maximised here on a fine grid of ``nu``.
    """
    import numpy as np

    tail = (1 - confidence) / 2
    nu = np.linspace(0.0, 1.0, 200001)
    mu = np.clip(nu + edge, 0.0, 1.0)

    def most(mean: NDArray[np.float64], at: float) -> NDArray[np.float64]:
        with np.errstate(divide="ignore", invalid="ignore"):
            up = mean / at if at > 0 else np.ones_like(mean)
            down = (1 - mean) / (1 - at) if at < 1 else np.ones_like(mean)
        return np.asarray(np.clip(np.minimum(up, down), 0.0, 1.0), dtype=float)

    chance = float((most(mu, a) * most(nu, b)).max())
    if chance >= 1:
        return math.inf
    return math.log(tail) / math.log(chance)
