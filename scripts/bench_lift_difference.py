"""The error rate of the difference-of-lifts interval across two cells, exactly.

For K runs per arm in each of two cells (four binomial arms), every table's interval on
``(pA1 - pB1) - (pA2 - pB2)`` (``skilltest.matrix.compare.difference_of_lifts``: two exact lift
intervals at 97.5%, combined by Bonferroni) is computed once; then, over a grid of true pass
rates for the four arms, the chance that the lower bound lies above the true difference and
that the upper bound lies below it are summed over every table. Each is built to be at most
2.5% (95% two-sided).

    .venv/bin/python scripts/bench_lift_difference.py [K ...]
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np
from scipy.stats import binom

from skilltest.matrix.compare import Arms, difference_of_lifts
from skilltest.stats import EMPTY

SIZES = (3, 5, 8, 12)
RATES = np.round(np.linspace(0.0, 1.0, 11), 4)
"""Eleven true rates per arm: 11^4 = 14,641 configurations of the four arms per K."""


def _arms(x: int, y: int, k: int) -> Arms:
    return Arms(x, k, y, k, EMPTY, 0.95, False, "")


def worst(k: int) -> tuple[float, float, tuple[float, ...]]:
    tables = list(itertools.product(range(k + 1), range(k + 1)))
    count = len(tables)
    lows = np.zeros((count, count))
    highs = np.zeros((count, count))
    for i, (x1, y1) in enumerate(tables):
        for j, (x2, y2) in enumerate(tables):
            interval, _ = difference_of_lifts(_arms(x1, y1, k), _arms(x2, y2, k))
            assert interval.low is not None and interval.high is not None
            lows[i, j], highs[i, j] = interval.low, interval.high
    xs = np.array([t[0] for t in tables])
    ys = np.array([t[1] for t in tables])
    above = below = 0.0
    at: tuple[float, ...] = ()
    for a1, b1, a2, b2 in itertools.product(RATES, repeat=4):
        one = binom.pmf(xs, k, a1) * binom.pmf(ys, k, b1)
        two = binom.pmf(xs, k, a2) * binom.pmf(ys, k, b2)
        chance = one[:, None] * two[None, :]
        true = (a1 - b1) - (a2 - b2)
        up = float((chance * (lows > true + 1e-9)).sum())
        down = float((chance * (highs < true - 1e-9)).sum())
        if max(up, down) > max(above, below):
            at = (float(a1), float(b1), float(a2), float(b2))
        above, below = max(above, up), max(below, down)
    return above, below, at


def main() -> None:
    sizes = [int(arg) for arg in sys.argv[1:]] or SIZES
    print("difference of lifts between two cells, 95% (two exact 97.5% lift intervals,")
    print("Bonferroni): worst error of each bound over an 11^4 grid of true pass rates")
    print("(each at most 2.5% by construction)")
    print(f"{'K per arm':>10} {'low above':>10} {'high below':>11}  worst at (A1, B1, A2, B2)")
    for k in sizes:
        start = time.monotonic()
        above, below, at = worst(k)
        shown = ", ".join(f"{rate:.1f}" for rate in at) if at else "-"
        print(
            f"{k:>10} {above:>9.2%} {below:>10.2%}  ({shown})  [{time.monotonic() - start:.0f} s]"
        )


if __name__ == "__main__":
    main()
