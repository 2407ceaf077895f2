"""Benchmark of the trigger layer's per-query verdict: how often it passes, fails or stays
inconclusive at a true firing rate, and how many runs ``-k auto`` takes, computed exactly.

Every binomial outcome of the runs is enumerated and judged by the layer's own functions
(:func:`skilltest.triggers.verdict.interval_verdict`, the plan ``-k auto`` gets by default, and
:data:`~skilltest.triggers.verdict.DECIDED`, the verdicts that end a query's looks): a fixed K
judges K runs once; the adaptive plan judges after each run from ``min_k`` on, and every path of
runs that is still undecided carries on to the next look until ``max_k``. The chances of the
outcomes judged ``pass`` add up to the pass rate: at a true rate of 0.3 for a should-trigger
query (0.7 for a should-not one) every pass is false, and the interval rule keeps it at most
2.5%. Beside it, the point-estimate rule (the observed rate at or above the threshold passes a
should-trigger query) on the same outcomes.

Run: ``python scripts/bench_trigger_verdicts.py`` (no CLI, no network; a second or two).
"""

from __future__ import annotations

from math import comb

from skilltest.repetitions import DEFAULT_MIN_K, TRIGGERS_MAX_K, Repetitions, plan_for
from skilltest.triggers.suite import DEFAULT_THRESHOLD
from skilltest.triggers.verdict import DECIDED, FAIL, INCONCLUSIVE, PASS, interval_verdict

THRESHOLD = DEFAULT_THRESHOLD
CASES = (
    (0.3, True, "should-trigger, true rate 0.3", "false"),
    (0.7, False, "should-not, true rate 0.7", "false"),
    (0.9, True, "should-trigger, true rate 0.9", "right"),
    (1.0, True, "should-trigger, true rate 1.0", "right"),
    (0.0, False, "should-not, true rate 0.0", "right"),
)
"""(true rate, should trigger, label, what a pass is there)."""


def fixed(rate: float, k: int, should: bool) -> tuple[dict[str, float], float]:
    """The chance of each verdict at a fixed K, and the point-estimate rule's pass rate."""
    chances = dict.fromkeys((PASS, FAIL, INCONCLUSIVE), 0.0)
    point = 0.0
    for fired in range(k + 1):
        chance = comb(k, fired) * rate**fired * (1 - rate) ** (k - fired)
        chances[interval_verdict(fired, k, THRESHOLD, should, Repetitions(k))] += chance
        observed = fired / k
        if (observed >= THRESHOLD) if should else (observed < THRESHOLD):
            point += chance
    return chances, point


def adaptive(rate: float, should: bool, plan: Repetitions) -> tuple[dict[str, float], float]:
    """The chance of each verdict under ``plan``, and the mean runs it takes."""
    alive = {0: 1.0}  # fired -> chance of reaching this many runs undecided
    chances = dict.fromkeys((PASS, FAIL, INCONCLUSIVE), 0.0)
    runs = 0.0
    for n in range(1, plan.most + 1):
        grown: dict[int, float] = {}
        for fired, chance in alive.items():
            grown[fired + 1] = grown.get(fired + 1, 0.0) + chance * rate
            grown[fired] = grown.get(fired, 0.0) + chance * (1 - rate)
        alive = {fired: chance for fired, chance in grown.items() if chance > 0}
        if n < plan.first:
            continue
        undecided = {}
        for fired, chance in alive.items():
            verdict = interval_verdict(fired, n, THRESHOLD, should, plan)
            if verdict not in DECIDED and plan.more_after(n):
                undecided[fired] = chance
                continue
            runs += chance * n
            chances[verdict] += chance
        alive = undecided
    return chances, runs


def main() -> None:
    auto = plan_for("auto", None, min_k=DEFAULT_MIN_K, max_k=TRIGGERS_MAX_K)
    plans = (Repetitions(3), Repetitions(6), Repetitions(10), auto)
    print(
        f"trigger verdicts, exact over every binomial outcome, threshold {THRESHOLD}: the chance "
        "of each verdict and the mean runs; 'point' is the point-estimate rule's pass rate"
    )
    print(
        f"{'query':<31}{'plan':<13}{'pass':>8}{'fail':>8}{'inconcl.':>10}{'runs':>7}"
        f"{'point':>8}  pass is"
    )
    for rate, should, label, kind in CASES:
        for plan in plans:
            if plan.adaptive:
                chances, runs = adaptive(rate, should, plan)
                point = "-"
            else:
                chances, passed = fixed(rate, plan.most, should)
                runs, point = float(plan.most), f"{passed:.4f}"
            print(
                f"{label:<31}{plan.describe():<13}{chances[PASS]:>8.4f}{chances[FAIL]:>8.4f}"
                f"{chances[INCONCLUSIVE]:>10.4f}{runs:>7.2f}{point:>8}  {kind}"
            )
    print(
        "a query that always (or never) fires: pass needs n runs with 0.025 ** (1/n) >= 0.5 at "
        f"a fixed K (n = 6); under {auto.describe()}, the first look whose share of 2.5% "
        "0.5 ** n is within (n = 8)"
    )


if __name__ == "__main__":
    main()
