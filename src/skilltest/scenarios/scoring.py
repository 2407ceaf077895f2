"""Which scoring a scenario suite's runs are scored with, and how a file shows it. Pure.

``skilltest`` (the default) leaves out a rubric section the scenario leaves empty and
renormalises the weights of the others (:func:`skilltest.scenarios.rubric.score`).
``honeycomb`` scores as Honeycomb's agent-skill evaluator does
(``tests/scenarios/evaluator.py`` of github.com/honeycombio/agent-skill): the five sections at
their fixed weights (0.30, 0.25, 0.20, 0.15, 0.10), a section left empty counting as full
credit, nothing renormalised; a run that took no action earns the anti-patterns' share all the
same, and a ``Skill`` entry in a tool list is a tool the run must call, scored like any other.

A suite chooses with ``scoring:``; a file without the key that has the shape of Honeycomb's
scenario files (:func:`has_honeycomb_shape`) is scored the honeycomb way, and the run says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Scoring = Literal["skilltest", "honeycomb"]
"""The scorings a suite can ask for."""

SCORINGS: tuple[Scoring, ...] = ("skilltest", "honeycomb")
"""Every scoring, the default first."""

DESCRIPTIONS: dict[Scoring, str] = {
    "skilltest": "empty sections left out, the others' weights renormalised",
    "honeycomb": "empty sections count as full credit, fixed weights, as honeycomb's evaluator",
}
"""What each scoring does, in the words the output uses."""

HONEYCOMB_TOP_KEYS = frozenset({"name", "description", "scenarios"})
"""The top-level keys of Honeycomb's scenario files."""

HONEYCOMB_SCENARIO_KEYS = frozenset(
    {"id", "name", "description", "prompt", "expected", "expected_skills", "config", "canary"}
    | {"comparison"}
)
"""The keys a scenario of Honeycomb's files has."""

HONEYCOMB_SECTIONS = frozenset(
    {"required_tools", "required_patterns", "anti_patterns", "tool_ordering", "recommended_tools"}
)
"""The five rubric sections Honeycomb's evaluator scores."""

HONEYCOMB_CONFIG_KEYS = frozenset({"max_turns", "timeout_ms", "allowed_tools"})
"""The run settings a scenario of Honeycomb's files has."""


@dataclass(frozen=True)
class SuiteScoring:
    """The scoring a suite's runs get, and whether the file asked for it or its shape did."""

    scoring: Scoring = "skilltest"
    """The scoring."""
    detected: bool = False
    """Chosen from the file's shape (no ``scoring:`` key): the run announces it."""

    @property
    def label(self) -> str:
        """``scoring: NAME (what it does)``, as the terminal, reports and results say it."""
        return f"scoring: {self.scoring} ({DESCRIPTIONS[self.scoring]})"

    @property
    def announcement(self) -> str | None:
        """What the run says about the scoring before it starts; ``None`` for the default
        chosen by default (nothing to say)."""
        if self.detected:
            return (
                f"{self.label}; chosen from the file's shape (Honeycomb's agent-skill scenarios): "
                "write `scoring: skilltest` in the suite to leave empty sections out instead"
            )
        if self.scoring != "skilltest":
            return self.label
        return None


def has_honeycomb_shape(data: Any) -> bool:
    """Whether a suite document is shaped as Honeycomb's scenario files are: only ``name``,
    ``description`` and ``scenarios`` at the top (no skill, no weights, no checks), each scenario
    with only the keys those files use, its ``expected`` only the five sections, its ``config``
    only ``max_turns``, ``timeout_ms`` and ``allowed_tools``."""
    if not isinstance(data, Mapping) or not set(data) <= HONEYCOMB_TOP_KEYS:
        return False
    scenarios = data.get("scenarios")
    if not isinstance(scenarios, list) or not scenarios:
        return False
    for raw in scenarios:
        if not isinstance(raw, Mapping) or not set(raw) <= HONEYCOMB_SCENARIO_KEYS:
            return False
        expected, config = raw.get("expected") or {}, raw.get("config") or {}
        if not isinstance(expected, Mapping) or not set(expected) <= HONEYCOMB_SECTIONS:
            return False
        if not isinstance(config, Mapping) or not set(config) <= HONEYCOMB_CONFIG_KEYS:
            return False
        anti = expected.get("anti_patterns") or []
        if not isinstance(anti, list) or not all(isinstance(p, str) for p in anti):
            return False
    # The skills under test are named by the scenarios, as Honeycomb's files name them.
    return any(isinstance(raw, Mapping) and raw.get("expected_skills") for raw in scenarios)


def suite_scoring(data: Mapping[str, Any]) -> SuiteScoring:
    """The scoring of a validated suite document: its ``scoring:``, else ``honeycomb`` when the
    file has Honeycomb's shape, else the default."""
    chosen = data.get("scoring")
    if chosen in SCORINGS:
        return SuiteScoring(scoring=chosen)
    if has_honeycomb_shape(data):
        return SuiteScoring(scoring="honeycomb", detected=True)
    return SuiteScoring()
