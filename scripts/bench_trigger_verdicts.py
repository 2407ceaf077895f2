"""Benchmark of the trigger layer's per-query verdict: its false pass rate, computed exactly.

A should-trigger query whose true firing rate is 0.3 (threshold 0.5) should never pass, and a
should-not query whose true rate is 0.7 should never pass either. Every binomial outcome of K
runs is enumerated and judged by :func:`skilltest.triggers.verdict.interval_verdict`; the
chances of the outcomes judged ``pass`` add up to the false pass rate. The adaptive plan
(3 to 10 runs, a look after each run from the third) is enumerated the same way: the chance of
every path of runs that stops at a look with ``pass``. Beside it, the point-estimate rule
(``passed``: the observed rate at or above the threshold) on the same outcomes.

Run: ``python scripts/bench_trigger_verdicts.py`` (no CLI, no network; well under a second).
"""

from __future__ import annotations

from math import comb

from skilltest.repetitions import Repetitions
from skilltest.triggers.verdict import PASS, interval_verdict

THRESHOLD = 0.5


def fixed(rate: float, k: int, should: bool) -> tuple[float, float]:
    """(interval false pass rate, point-estimate false pass rate) at a fixed K."""
    interval = point = 0.0
    for fired in range(k + 1):
        chance = comb(k, fired) * rate**fired * (1 - rate) ** (k - fired)
        if interval_verdict(fired, k, THRESHOLD, should) == PASS:
            interval += chance
        observed = fired / k
        if (observed >= THRESHOLD) if should else (observed < THRESHOLD):
            point += chance
    return interval, point


def adaptive(rate: float, should: bool, plan: Repetitions) -> tuple[float, float]:
    """(false pass rate, mean runs) under ``plan``: undecided paths carry on to the next look."""
    alive = {0: 1.0}  # fired -> chance of reaching this many runs undecided
    false_pass = runs = 0.0
    for n in range(1, plan.max_k + 1):
        grown: dict[int, float] = {}
        for fired, chance in alive.items():
            grown[fired + 1] = grown.get(fired + 1, 0.0) + chance * rate
            grown[fired] = grown.get(fired, 0.0) + chance * (1 - rate)
        alive = grown
        if n < plan.min_k:
            continue
        undecided = {}
        for fired, chance in alive.items():
            verdict = interval_verdict(fired, n, THRESHOLD, should, plan)
            if verdict == "inconclusive" and n < plan.max_k:
                undecided[fired] = chance
                continue
            runs += chance * n
            if verdict == PASS:
                false_pass += chance
        alive = undecided
    return false_pass, runs


def main() -> None:
    plan = Repetitions(None, 3, 10)
    print("trigger verdict: false pass rate (exact), threshold 0.5")
    print(f"{'query':<26}{'plan':<14}{'interval':>10}{'point':>10}{'mean runs':>11}")
    for rate, should, name in (
        (0.3, True, "should-trigger, rate 0.3"),
        (0.7, False, "should-not, rate 0.7"),
    ):
        for k in (3, 10):
            interval, point = fixed(rate, k, should)
            print(f"{name:<26}{f'K={k}':<14}{interval:>10.4f}{point:>10.4f}{k:>11.2f}")
        false_pass, runs = adaptive(rate, should, plan)
        print(f"{name:<26}{plan.describe():<14}{false_pass:>10.4f}{'':>10}{runs:>11.2f}")


if __name__ == "__main__":
    main()
