"""Suite-wide false decisions with and without Holm, and the runs tied arms need for neutral.

No-effect suites (every arm of every scenario at the same true pass rate 0.5): a scenario's
verdict is read from its exact interval as the scenario layer reads it, and the suite-wide rule
(skilltest.stats.family, Holm at 5% family-wise) from its p-values. Fixed K is exact over each
scenario's outcomes (the per-scenario false-decision chance q, then 1 - (1 - q)^N for N
independent scenarios, without the rule); with the rule, and under -k auto, it is simulated
(seed 0, 2000 suites per row: +-1% at 95%).
"""

from __future__ import annotations

import itertools
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from scipy.stats import binom

from skilltest.stats import exact_difference
from skilltest.stats.family import family_decisions

RATE = 0.5
SUITES = 2000
LIMIT = 1000


def scenario(x: int, y: int, n: int, auto: bool) -> dict[str, object]:
    interval = exact_difference(x, n, y, n)
    assert interval.low is not None and interval.high is not None
    verdict = (
        "improved" if interval.low > 0.05 else "regressed" if interval.high < -0.05 else "neutral"
    )
    return {
        "verdict": verdict,
        "repetitions": {"mode": "auto", "min_k": 3, "max_k": 10} if auto else {"mode": "fixed"},
        "with_skill": {"passes": x, "scored": n},
        "without_skill": {"passes": y, "scored": n},
    }


def per_scenario(n: int) -> tuple[float, float]:
    """The exact chance a no-effect scenario at K=n is improved or regressed, and regressed."""
    any_wrong = regressed = 0.0
    for x, y in itertools.product(range(n + 1), repeat=2):
        chance = binom.pmf(x, n, RATE) * binom.pmf(y, n, RATE)
        verdict = scenario(x, y, n, False)["verdict"]
        any_wrong += chance * (verdict != "neutral")
        regressed += chance * (verdict == "regressed")
    return any_wrong, regressed


def held_rate(count: int, n: int, auto: bool, rng: random.Random) -> float:
    """Simulated chance that any decision holds suite-wide (K=n, or -k auto read at its end)."""
    wrong = 0
    for _ in range(SUITES):
        scenarios = []
        for _ in range(count):
            x = sum(rng.random() < RATE for _ in range(n))
            y = sum(rng.random() < RATE for _ in range(n))
            scenarios.append(scenario(x, y, n, auto))
        family = family_decisions({"scenarios": scenarios})
        wrong += any(row["held"] for row in family["decisions"])
    return wrong / SUITES


def main() -> None:
    start = time.monotonic()
    rng = random.Random(0)
    print(f"no-effect suites (every arm at a true pass rate of {RATE}), per-scenario verdicts")
    print("at 95% against Holm at 5% family-wise (skilltest.stats.family)")
    print(f"{'scenarios':>9} {'K':>6} {'any false':>10} {'false regr.':>12} {'held (Holm)':>12}")
    for n in (3, 10):
        q, r = per_scenario(n)
        for count in (8, 20, 50):
            held = held_rate(count, n, False, rng)
            print(
                f"{count:>9} {n:>6} {1 - (1 - q) ** count:>9.1%} {1 - (1 - r) ** count:>11.1%}"
                f" {held:>11.1%}"
            )
    for count in (8, 20, 50):
        # -k auto read at its largest look (10), paying for its 8 looks.
        held = held_rate(count, 10, True, rng)
        print(f"{count:>9} {'auto':>6} {'':>10} {'':>12} {held:>11.1%}")
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
    print(f"({time.monotonic() - start:.0f} s; seed 0, {SUITES} simulated suites per row)")


if __name__ == "__main__":
    main()
