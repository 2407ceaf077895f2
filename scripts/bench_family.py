"""Suite-wide false decisions with and without Holm, exactly, and the runs tied arms need for
neutral.

A no-effect suite has every arm of every scenario at the same true pass rate. Each scenario's
verdict is read as the scenario layer reads it (``scenarios.verdict.pass_interval`` against the
bands of ``decision.delta_verdict``), and the suite-wide rule (``stats.family``: Holm at 5%
family-wise over two claims per compared scenario) from the p-values ``decision_p_value`` gives.

Everything is computed exactly, by enumeration, for independent scenarios:

* fixed K: every table (x of K against y of K) with its binomial chance;
* ``-k auto`` (3 to 10 runs per arm): every path of the adaptive plan, a scenario stopping at the
  first look whose verdict decides (improved, neutral or regressed), by dynamic programming over
  the tables still open after each look.

From one scenario's chance ``q`` of a false improved or regressed, a suite of N shows at least
one with chance ``1 - (1 - q)^N``. Under every null hypothesis at once, Holm keeps a decision only
when the smallest of the 2N p-values is at most 5% / 2N, so its family-wise rate is exactly
``1 - (1 - h)^N`` with ``h`` the chance that a scenario's decision has a p-value at most
5% / 2N.

    .venv/bin/python scripts/bench_family.py
"""

from __future__ import annotations

import itertools
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from scipy.stats import binom

from skilltest.decision import MIN_DELTA, Verdict, delta_verdict
from skilltest.repetitions import Repetitions
from skilltest.scenarios.verdict import pass_interval
from skilltest.stats import exact_difference
from skilltest.stats.family import FAMILY_LEVEL, decision_p_value

RATES = (0.5, 0.9)
COUNTS = (8, 20, 50)
AUTO = Repetitions(None, 3, 10)
LIMIT = 1000
DECIDED = (Verdict.IMPROVED, Verdict.NEUTRAL, Verdict.REGRESSED)


def verdict(x: int, y: int, k: int, plan: Repetitions) -> Verdict:
    return delta_verdict(pass_interval(x, k, y, k, plan, k, MIN_DELTA), MIN_DELTA)


def family_p(x: int, y: int, k: int, plan: Repetitions, made: Verdict) -> float | None:
    return decision_p_value(
        {
            "verdict": made.value,
            "repetitions": plan.to_dict(),
            "with_skill": {"passes": x, "scored": k},
            "without_skill": {"passes": y, "scored": k},
        }
    )


def outcomes(rate: float, plan: Repetitions) -> list[tuple[float, Verdict, float | None]]:
    """Every way one no-effect scenario can end: its chance, its verdict, and the p-value of
    its improved or regressed decision (``None`` for other verdicts)."""
    ends: list[tuple[float, Verdict, float | None]] = []
    first = plan.first
    open_tables: dict[tuple[int, int], float] = {
        (x, y): float(binom.pmf(x, first, rate) * binom.pmf(y, first, rate))
        for x, y in itertools.product(range(first + 1), repeat=2)
    }
    k = first
    while open_tables:
        following: dict[tuple[int, int], float] = defaultdict(float)
        for (x, y), chance in open_tables.items():
            made = verdict(x, y, k, plan)
            if made in DECIDED or not plan.more_after(k):
                p = family_p(x, y, k, plan, made) if made in DECIDED else None
                ends.append((chance, made, p))
                continue
            for dx, dy in itertools.product((0, 1), repeat=2):
                step = (rate if dx else 1 - rate) * (rate if dy else 1 - rate)
                following[x + dx, y + dy] += chance * step
        open_tables, k = dict(following), k + 1
    return ends


def main() -> None:
    start = time.monotonic()
    print("no-effect suites (every arm of every scenario at the same true pass rate), exactly:")
    print("per-scenario verdicts at 95% against Holm at 5% family-wise (skilltest.stats.family)")
    print(
        f"{'rate':>5} {'scenarios':>9} {'K':>6} {'any false':>10} {'false regr.':>12}"
        f" {'held (Holm)':>12} {'level':>6}"
    )
    for rate in RATES:
        for plan in (Repetitions(3), Repetitions(10), AUTO):
            ends = outcomes(rate, plan)
            wrong = sum(c for c, v, _ in ends if v in (Verdict.IMPROVED, Verdict.REGRESSED))
            regressed = sum(c for c, v, _ in ends if v == Verdict.REGRESSED)
            for count in COUNTS:
                cut = FAMILY_LEVEL / (2 * count)
                held = sum(c for c, _, p in ends if p is not None and p <= cut)
                name = "auto" if plan.adaptive else str(plan.fixed)
                print(
                    f"{rate:>5.1f} {count:>9} {name:>6} {1 - (1 - wrong) ** count:>9.1%}"
                    f" {1 - (1 - regressed) ** count:>11.1%} {1 - (1 - held) ** count:>11.2%}"
                    f" {FAMILY_LEVEL:>6.0%}"
                )
    print()
    print("runs per arm for `neutral` (interval within +-0.05) when both arms agree:")
    for rate in (1.0, 0.9, 0.5):
        n = 10
        while n <= LIMIT:
            x = round(rate * n)
            interval = exact_difference(x, n, x, n)
            assert interval.low is not None and interval.high is not None
            if interval.low >= -0.05 and interval.high <= 0.05:
                break
            n = n + max(1, n // 10)
        if n > LIMIT:
            print(f"  {rate:.1f} vs {rate:.1f}: more than {LIMIT} runs per arm (the tool's limit)")
            continue
        lower = n - max(1, (n - 1) // 11)
        while lower < n:
            x = round(rate * lower)
            interval = exact_difference(x, lower, x, lower)
            assert interval.low is not None and interval.high is not None
            if interval.low >= -0.05 and interval.high <= 0.05:
                n = lower
                break
            lower += 1
        print(f"  {rate:.1f} vs {rate:.1f}: {n} runs per arm")
    timed = time.monotonic()
    exact_difference(7, 10, 4, 10, 0.9)
    print(f"\none exact interval at K=10 (uncached): {time.monotonic() - timed:.2f} s")
    print(f"({time.monotonic() - start:.0f} s, exact: no simulation)")


if __name__ == "__main__":
    main()
