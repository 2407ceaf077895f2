"""What a trigger run would cost, before anything is called (``--dry-run``), and what each CLI
run is estimated at (``--max-cost-usd``). Pure; see :mod:`skilltest.cost.estimate` for what the
estimate assumes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from skilltest.cost.estimate import (
    CLI_CONTEXT_TOKENS,
    DEFAULT_CLI_MODEL,
    REQUESTS_PER_TRIGGER_RUN,
    Conversation,
    Tokens,
    conversation,
    listing,
    tokens,
)
from skilltest.cost.prices import price_of
from skilltest.cost.render import SuiteEstimate
from skilltest.repetitions import Repetitions, plan_for
from skilltest.triggers.suite import TriggerQuery, TriggerSuite


def run_estimate(
    suite: TriggerSuite, query: TriggerQuery, description: str | None = None, *, warm: bool = True
) -> Tokens:
    """One run of ``query``, the skill (with ``description``, else its own) and the suite's
    distractors installed; it ends at the call that decides it."""
    skills = [(suite.skill.name, description or suite.description or suite.skill.description)]
    skills += [(skill.name, skill.description) for skill in suite.distractors]
    first = CLI_CONTEXT_TOKENS + listing(skills) + tokens(query.query)
    run = Conversation(first=first, requests=REQUESTS_PER_TRIGGER_RUN)
    return conversation(run, model=suite.model, warm=warm)


def estimate_suites(
    suites: Sequence[TriggerSuite],
    descriptions: Sequence[str | None],
    plan: Callable[[TriggerSuite], Repetitions] | None = None,
) -> list[SuiteEstimate]:
    """Per suite: its runs (every query under each description, the fewest and the most its
    plan can take: ``-k auto`` stops once the verdict is decided), their requests, tokens and
    cost."""
    plan_of = plan or (lambda suite: plan_for(None, suite.repetitions))
    estimates = []
    for suite in suites:
        repetitions = plan_of(suite)
        least = most = Tokens()
        runs = [0, 0]
        for description in descriptions:
            for place, query in enumerate(suite.queries):
                one = run_estimate(suite, query, description, warm=place > 0)
                warm = run_estimate(suite, query, description)
                least += one + warm.times(repetitions.first - 1)
                most += one + warm.times(repetitions.most - 1)
                runs[0] += repetitions.first
                runs[1] += repetitions.most
        model = suite.model or DEFAULT_CLI_MODEL
        estimates.append(
            SuiteEstimate(
                "triggers",
                str(suite.path),
                len(suite.queries),
                (runs[0], runs[1]),
                least,
                most,
                () if price_of(model)[1] else (model,),
            )
        )
    return estimates
