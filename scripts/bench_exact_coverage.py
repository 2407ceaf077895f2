"""The exact interval's error rate, exactly: for each number of runs per arm, every table's
95% interval (``stats.exact_difference``) and, over a 41 x 41 grid of true pass rates, the chance
that the lower bound lies above the true difference and that the upper bound lies below it.
Each is built to be at most 2.5%.

    .venv/bin/python scripts/bench_exact_coverage.py [N1,N2 ...]
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np
from scipy.stats import binom

from skilltest.stats import exact_difference

SIZES = ((2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (8, 8), (10, 10), (12, 12), (3, 10), (5, 8))
RATES = np.round(np.linspace(0.0, 1.0, 41), 4)


def worst(n1: int, n2: int) -> tuple[float, float, tuple[float, float]]:
    lows = np.zeros((n1 + 1, n2 + 1))
    highs = np.zeros((n1 + 1, n2 + 1))
    for x, y in itertools.product(range(n1 + 1), range(n2 + 1)):
        interval = exact_difference(x, n1, y, n2)
        assert interval.low is not None and interval.high is not None
        lows[x, y], highs[x, y] = interval.low, interval.high
    above = below = 0.0
    at = (0.0, 0.0)
    for a, b in itertools.product(RATES, RATES):
        chance = (
            binom.pmf(np.arange(n1 + 1), n1, a)[:, None]
            * binom.pmf(np.arange(n2 + 1), n2, b)[None, :]
        )
        true = a - b
        up = float((chance * (lows > true + 1e-12)).sum())
        down = float((chance * (highs < true - 1e-12)).sum())
        if max(up, down) > max(above, below):
            at = (float(a), float(b))
        above, below = max(above, up), max(below, down)
    return above, below, at


def main() -> None:
    sizes = [tuple(int(v) for v in arg.split(",")) for arg in sys.argv[1:]] or SIZES
    print("exact interval of a difference of pass rates, 95%: worst error of each bound over")
    print("a 41 x 41 grid of true rates (each at most 2.5% by construction)")
    print(f"{'runs per arm':>13} {'low above':>10} {'high below':>11}  worst at (A, B)")
    for n1, n2 in sizes:
        start = time.monotonic()
        above, below, at = worst(n1, n2)
        print(
            f"{f'{n1}, {n2}':>13} {above:>9.2%} {below:>10.2%}  ({at[0]:.3f}, {at[1]:.3f})"
            f"  [{time.monotonic() - start:.0f} s]"
        )


if __name__ == "__main__":
    main()
