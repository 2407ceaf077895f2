"""What a pressure run would cost, before anything is called (``--dry-run``), and what each of
its requests is estimated at (``--max-cost-usd``). Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from skilltest.cost.estimate import Tokens, one_turn
from skilltest.cost.prices import price_of
from skilltest.cost.render import SuiteEstimate
from skilltest.pressure.suite import PressureScenario, PressureSuite
from skilltest.repetitions import Repetitions


def request_estimate(system: str | None, prompt: str, *, max_tokens: int, model: str) -> Tokens:
    """One request, its system prompt not read from the cache (what a run is held to before
    it starts)."""
    return one_turn(system, prompt, max_tokens=max_tokens, model=model)


def estimate_suites(
    suites: Sequence[PressureSuite],
    plan: Callable[[PressureScenario], Repetitions],
    *,
    arms: int,
    default_model: str,
) -> list[SuiteEstimate]:
    """Per suite: its runs (the fewest and the most, with ``-k auto``), their requests, tokens
    and cost. ``arms``: 1 (with the skill only), 2, or one more per ``--against`` REF (the
    skill at REF is taken to be as long as the current one)."""
    estimates = []
    for suite in suites:
        least = most = Tokens()
        runs = [0, 0]
        unknown = set()
        cached = False
        for scenario in suite.scenarios:
            if scenario.skip:
                continue
            repetitions = plan(scenario)
            model = scenario.model or default_model
            if not price_of(model)[1]:
                unknown.add(model)
            systems = [suite.skill.text, None, *[suite.skill.text] * (arms - 2)][:arms]
            for system in systems:
                first = one_turn(
                    system,
                    scenario.message,
                    max_tokens=scenario.max_tokens,
                    model=model,
                    cached=cached and system is not None,
                )
                rest = one_turn(
                    system,
                    scenario.message,
                    max_tokens=scenario.max_tokens,
                    model=model,
                    cached=system is not None,
                )
                cached = cached or system is not None
                least += first + rest.times(repetitions.first - 1)
                most += first + rest.times(repetitions.most - 1)
                runs[0] += repetitions.first
                runs[1] += repetitions.most
        estimates.append(
            SuiteEstimate(
                "pressure",
                str(suite.path),
                sum(1 for s in suite.scenarios if not s.skip),
                (runs[0], runs[1]),
                least,
                most,
                tuple(sorted(unknown)),
            )
        )
    return estimates
