"""What a scenario run would cost, before anything is called (``--dry-run``), and what each CLI
run is estimated at (``--max-cost-usd``). Pure; see :mod:`skilltest.cost.estimate` for what the
estimate assumes."""

from __future__ import annotations

from collections.abc import Sequence

from skilltest.cost.estimate import (
    CLI_CONTEXT_TOKENS,
    DEFAULT_CLI_MODEL,
    REQUESTS_PER_PROMPT,
    Conversation,
    Tokens,
    conversation,
    listing,
    tokens,
)
from skilltest.cost.prices import price_of
from skilltest.cost.render import SuiteEstimate
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.runs import Planned
from skilltest.scenarios.suite import Scenario


def run_estimate(scenario: Scenario, arm: Arm, *, warm: bool = True) -> Tokens:
    """One CLI run of ``scenario`` in ``arm``; ``warm``: the CLI's own context is in the prompt
    cache already."""
    installed = () if arm == Arm.WITHOUT_SKILL else (scenario.skills or (scenario.skill,))
    first = (
        CLI_CONTEXT_TOKENS
        + listing([(skill.name, skill.description) for skill in installed])
        + tokens(scenario.prompt)
    )
    run = Conversation(
        first=first,
        requests=REQUESTS_PER_PROMPT * (1 + len(scenario.turns)),
        skill_body=0 if arm == Arm.WITHOUT_SKILL else tokens(scenario.skill.text),
        later_turns=tuple(tokens(turn) for turn in scenario.turns),
    )
    return conversation(run, model=scenario.config.model, warm=warm)


def estimate_planned(planned: Sequence[Planned]) -> list[SuiteEstimate]:
    """Per suite: its CLI runs (the fewest and the most, with ``-k auto``), their requests,
    tokens and cost."""
    estimates: dict[str, SuiteEstimate] = {}
    warmed: set[tuple[str, Arm]] = set()  # the first run of a suite's arm writes the cache
    for entry in planned:
        scenario = entry.scenario
        if scenario.skip:
            continue
        path = str(entry.suite.path)
        least = most = Tokens()
        runs = [0, 0]
        for arm in entry.arms:
            first = entry.repetitions.first
            last = first if scenario.canary else entry.repetitions.most
            one = run_estimate(scenario, arm, warm=(path, arm) in warmed)
            warmed.add((path, arm))
            warm = run_estimate(scenario, arm)
            least += one + warm.times(first - 1)
            most += one + warm.times(last - 1)
            runs[0] += first
            runs[1] += last
        model = scenario.config.model or DEFAULT_CLI_MODEL
        here = SuiteEstimate(
            "scenarios",
            path,
            1,
            (runs[0], runs[1]),
            least,
            most,
            () if price_of(model)[1] else (model,),
        )
        before = estimates.get(path)
        estimates[path] = here if before is None else _added(before, here)
    return list(estimates.values())


def _added(before: SuiteEstimate, more: SuiteEstimate) -> SuiteEstimate:
    total = before + more
    return SuiteEstimate(
        before.layer, before.suite, total.units, total.runs, total.least, total.most, total.models
    )
