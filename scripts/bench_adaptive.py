"""Benchmark of adaptive repetitions (-k auto) against fixed K=10: prints figures, asserts nothing.

Two parts, side by side in one run:

1. **Emulated suites through the whole pipeline.** A pressure suite of scenarios whose answers
   the emulator picks with set probabilities (``pick: random`` over good and bad replies): clear
   wins, clear losses, no effect, a small effect. Each simulated suite gets its own emulator
   seed and runs twice through ``run_suites`` and the real SDK on loopback: with ``-k auto`` and
   with ``-k 10``. Both see the same answers for the same repetition, so the comparison is
   paired: does stopping early change the decision, and how many runs does it save?
2. **200 simulated suites per layer** through the same decision rules (the verdict functions
   and the same looks and confidence levels), drawing run outcomes directly: the error rate on
   scenarios without an effect (called improved or regressed, or ``steers``), and the decisions
   and runs on the clear ones.

    .venv/bin/python scripts/bench_adaptive.py [--suites 12] [--simulated 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.emulator.per_run import PerRunModel
from skilltest.pressure.runs import run_suites
from skilltest.pressure.suite import load_pressure_suite
from skilltest.pressure.verdict import INCONCLUSIVE, _decide
from skilltest.repetitions import Repetitions
from skilltest.runners.anthropic_api import AnthropicRunner
from skilltest.scenarios.verdict import Verdict, delta_verdict
from skilltest.stats import bounded_mean, newcombe, wilson

FIXED = Repetitions(10)
AUTO = Repetitions(None, 3, 10)
GOOD, BAD = "aggregate first, then sample", "grep the raw logs"


@dataclass(frozen=True)
class Kind:
    """A scenario with known behaviour: pass probabilities with and without the skill."""

    name: str
    with_pass: float
    without_pass: float
    clear: bool
    no_effect: bool = False


PRESSURE_KINDS = (
    Kind("clear-win", 1.0, 0.0, clear=True),
    Kind("clear-win-noisy", 0.95, 0.05, clear=True),
    Kind("clear-loss", 0.0, 0.0, clear=True),
    Kind("clear-loss-noisy", 0.1, 0.05, clear=True),
    Kind("no-effect", 0.5, 0.5, clear=False, no_effect=True),
    Kind("small-effect", 0.7, 0.5, clear=False),
)


# --- part 1: emulated suites through the pipeline ------------------------------------------


def _replies(p: float) -> list[dict[str, str]]:
    good = round(p * 20)
    return [{"text": GOOD}] * good + [{"text": BAD}] * (20 - good)


def write_suite(folder: Path, seed: int) -> Path:
    """A pressure suite with one scenario per kind and a model script with its probabilities."""
    (folder / "skills" / "bench").mkdir(parents=True, exist_ok=True)
    (folder / "skills" / "bench" / "SKILL.md").write_text("BENCH SKILL: aggregate first.")
    rules = []
    for kind in PRESSURE_KINDS:
        for arm, p in (("with", kind.with_pass), ("without", kind.without_pass)):
            when: dict[str, str] = {"user": f"scenario {kind.name}$"}
            if arm == "with":
                when["system"] = "BENCH SKILL"
            rules.append(
                {"id": f"{kind.name}-{arm}", "when": when, "pick": "random", "replies": _replies(p)}
            )
    # Rules are tried in order: each scenario's with-skill rule (which needs the skill in the
    # system prompt) comes before its without-skill rule.
    script = {"schema_version": 1, "seed": seed, "rules": rules}
    (folder / "model.yaml").write_text(yaml.safe_dump(script, sort_keys=False))
    suite = {
        "skill": "bench",
        "model_script": "model.yaml",
        "scenarios": [
            {
                "id": kind.name,
                "prompt": f"scenario {kind.name}",
                "with_skill": {"required_patterns": ["aggregate first"]},
            }
            for kind in PRESSURE_KINDS
        ],
    }
    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


async def run_once(path: Path, plan: Repetitions) -> dict[str, tuple[str, int]]:
    suite = load_pressure_suite(path)
    script = ModelScript.load(path.parent / "model.yaml")
    with EmulatorServer(PerRunModel(script)) as server:
        runner = AnthropicRunner(
            backend="emulator", api_key="sk-bench", base_url=server.base_url, name_runs=True
        )
        try:
            results = await run_suites(
                [suite], lambda _: runner, jobs=16, plan=lambda scenario: plan
            )
        finally:
            await runner.aclose()
    return {r.scenario.id: (r.verdict, len(r.runs)) for r in results}


def pipeline(suites: int, seed: int) -> None:
    outcomes: dict[str, list[tuple[tuple[str, int], tuple[str, int]]]] = defaultdict(list)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for index in range(suites):
            path = write_suite(Path(folder) / str(index), seed * 1000 + index)
            auto = asyncio.run(run_once(path, AUTO))
            fixed = asyncio.run(run_once(path, FIXED))
            for name in auto:
                outcomes[name].append((auto[name], fixed[name]))
    wall = time.perf_counter() - started
    print(
        f"1. {suites} emulated pressure suites through the pipeline (SDK -> emulator), "
        f"-k auto (3-10) vs -k 10, {wall:.1f} s"
    )
    _report(outcomes, {k.name: k for k in PRESSURE_KINDS}, false_calls=("steers",))


# --- part 2: simulated suites through the decision rules ---------------------------------------


Draw = Callable[[random.Random], float]


def bernoulli(p: float) -> Draw:
    return lambda rng: 1.0 if rng.random() < p else 0.0


def choice(*values: float) -> Draw:
    return lambda rng: rng.choice(values)


@dataclass(frozen=True)
class ScoreKind:
    """A scenario-layer scenario with known score distributions per arm."""

    name: str
    with_score: Draw
    without_score: Draw
    clear: bool
    no_effect: bool = False


SCENARIO_KINDS = (
    ScoreKind("clear-win", bernoulli(1.0), bernoulli(0.0), clear=True),
    ScoreKind(
        "clear-win-noisy", choice(*[1.0] * 19, 0.5), choice(*[0.0] * 18, 0.5, 0.25), clear=True
    ),
    ScoreKind("clear-loss", bernoulli(0.0), bernoulli(1.0), clear=True),
    ScoreKind("no-effect-pass-fail", bernoulli(0.5), bernoulli(0.5), clear=False, no_effect=True),
    ScoreKind(
        "no-effect-partial",
        choice(0.25, 0.5, 0.75),
        choice(0.25, 0.5, 0.75),
        clear=False,
        no_effect=True,
    ),
    ScoreKind("no-effect-high", bernoulli(0.9), bernoulli(0.9), clear=False, no_effect=True),
    ScoreKind("small-effect", bernoulli(0.6), bernoulli(0.5), clear=False),
)


def sequential(decide: Callable[[int, float], str], plan: Repetitions) -> tuple[str, int]:
    """The verdict and runs per arm, looking after each round as the runners do."""
    k = plan.first
    while True:
        verdict = decide(k, plan.confidence_at(k))
        if verdict != INCONCLUSIVE or not plan.more_after(k):
            return verdict, k
        k += 1


def simulate_scenarios(suites: int, seed: int) -> None:
    outcomes: dict[str, list[tuple[tuple[str, int], tuple[str, int]]]] = defaultdict(list)
    rng = random.Random(seed)
    for _ in range(suites):
        for kind in SCENARIO_KINDS:
            with_scores = [kind.with_score(rng) for _ in range(FIXED.most)]
            without_scores = [kind.without_score(rng) for _ in range(FIXED.most)]

            def decide(
                k: int, confidence: float, with_scores=with_scores, without_scores=without_scores
            ) -> str:
                delta = newcombe(
                    bounded_mean(with_scores[:k], confidence),
                    bounded_mean(without_scores[:k], confidence),
                )
                verdict = delta_verdict(delta, -0.1)
                return INCONCLUSIVE if verdict == Verdict.INCONCLUSIVE else verdict.value

            auto, fixed = sequential(decide, AUTO), sequential(decide, FIXED)
            outcomes[kind.name].append(((auto[0], auto[1] * 2), (fixed[0], fixed[1] * 2)))
    print(f"2a. {suites} simulated scenario-layer suites (delta of mean scores, Newcombe)")
    _report(outcomes, {k.name: k for k in SCENARIO_KINDS}, false_calls=("improved", "regressed"))


def simulate_pressure(suites: int, seed: int) -> None:
    outcomes: dict[str, list[tuple[tuple[str, int], tuple[str, int]]]] = defaultdict(list)
    rng = random.Random(seed + 1)
    for _ in range(suites):
        for kind in PRESSURE_KINDS:
            passes = [rng.random() < kind.with_pass for _ in range(FIXED.most)]
            base = [rng.random() < kind.without_pass for _ in range(FIXED.most)]

            def decide(k: int, confidence: float, passes=passes, base=base) -> str:
                with_rate = wilson(sum(passes[:k]), k, confidence)
                red = wilson(k - sum(base[:k]), k, confidence)
                return _decide(with_rate, red, 0.8)[0]

            auto, fixed = sequential(decide, AUTO), sequential(decide, FIXED)
            outcomes[kind.name].append(((auto[0], auto[1] * 2), (fixed[0], fixed[1] * 2)))
    print(f"2b. {suites} simulated pressure suites (lift of pass rates, Newcombe; threshold 0.8)")
    _report(outcomes, {k.name: k for k in PRESSURE_KINDS}, false_calls=("steers",))


# --- reporting ----------------------------------------------------------------------------------


def _report(
    outcomes: dict[str, list[tuple[tuple[str, int], tuple[str, int]]]],
    kinds: dict[str, Kind] | dict[str, ScoreKind],
    *,
    false_calls: tuple[str, ...],
) -> None:
    clear_auto = clear_fixed = agree = clear_total = 0
    for name, pairs in outcomes.items():
        kind = kinds[name]
        auto_runs = sum(auto[1] for auto, _ in pairs)
        fixed_runs = sum(fixed[1] for _, fixed in pairs)
        same = sum(1 for auto, fixed in pairs if auto[0] == fixed[0])
        verdicts = Counter(auto[0] for auto, _ in pairs)
        shown = ", ".join(f"{count} {verdict}" for verdict, count in verdicts.most_common())
        line = (
            f"   {name:<20} auto: {shown:<34} runs {auto_runs:>5} vs {fixed_runs:>5} "
            f"({1 - auto_runs / fixed_runs:4.0%} fewer)  same decision as K=10: {same}/{len(pairs)}"
        )
        if kind.no_effect:
            wrong = sum(1 for auto, _ in pairs if auto[0] in false_calls)
            wrong_fixed = sum(1 for _, fixed in pairs if fixed[0] in false_calls)
            line += (
                f"\n   {'':<20} no effect called {' or '.join(false_calls)}: auto "
                f"{wrong}/{len(pairs)} ({wrong / len(pairs):.1%}), K=10 "
                f"{wrong_fixed}/{len(pairs)} ({wrong_fixed / len(pairs):.1%}); "
                f"stated error rate <= 5%"
            )
        print(line)
        if kind.clear:
            clear_auto += auto_runs
            clear_fixed += fixed_runs
            agree += same
            clear_total += len(pairs)
    print(
        f"   clear cases: decision agreement {agree}/{clear_total} ({agree / clear_total:.1%}), "
        f"runs saved {1 - clear_auto / clear_fixed:.1%} (target >= 40%)\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=12, help="emulated suites (part 1)")
    parser.add_argument("--simulated", type=int, default=200, help="simulated suites (part 2)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("adaptive repetitions: -k auto (min 3, max 10, 5% error rate over the looks) vs -k 10\n")
    pipeline(args.suites, args.seed)
    simulate_scenarios(args.simulated, args.seed)
    simulate_pressure(args.simulated, args.seed)


if __name__ == "__main__":
    main()
