"""Suite-wide error control: which scenario decisions still hold when a suite makes many.

Each scenario's ``improved`` or ``regressed`` is wrong at most 2.5% of the time, but a suite of
50 scenarios where nothing differs shows at least one false decision far more often (79.6% at
K=3). This module reads a results document and keeps, by Holm's step-down rule (Holm 1979,
"A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6:65), the
decisions that hold at a family-wise level of :data:`FAMILY_LEVEL`: the chance that any kept
decision of the suite is false is at most 5%, whatever the dependence between scenarios. The
family is two claims (improved, regressed) per scenario that compared its arms, so a suite of
one scenario at a fixed K keeps exactly the decisions the scenario makes.

Each decision's p-value is the one its own claim is tested by:

* pass rates (``decide_by: pass``): the exact unconditional p-value of the claim
  (:func:`~skilltest.stats.exact.difference_p_value` at the band's edge). Under ``-k auto`` it
  is multiplied by the number of looks the plan allows (a union bound over the looks, so
  stopping at the first decisive one stays valid).
* mean scores (``decide_by: mean``): the smallest level at which the betting confidence
  sequence excludes the edge, which is ``1 / wealth`` of the betting e-value (Wang & Ramdas
  2022, "False discovery rate control with e-values", JRSS B 84:822): valid at every number of
  runs, so ``-k auto`` needs no correction.

Per-scenario verdicts are unchanged; this only says which of them hold suite-wide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

FAMILY_LEVEL = 0.05
"""The family-wise error rate of the decisions kept suite-wide."""
IMPROVED_ABOVE = 0.05
DEFAULT_MIN_DELTA = -0.05
METHOD = "holm"
COMPARED = ("improved", "regressed", "neutral", "inconclusive")
"""The verdicts of scenarios that compared their arms: each could have claimed either way."""
_BISECTIONS = 30


@dataclass(frozen=True)
class Decision:
    """One scenario's improved/regressed decision and whether it holds suite-wide."""

    skill: str
    scenario: str
    verdict: str
    p_value: float
    held: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "id": self.scenario,
            "verdict": self.verdict,
            "p_value": self.p_value,
            "held": self.held,
        }


def holm(p_values: Sequence[float], level: float = FAMILY_LEVEL) -> list[bool]:
    """Holm's step-down rule: which hypotheses are rejected at family-wise ``level``."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    held = [False] * len(p_values)
    total = len(p_values)
    for rank, index in enumerate(order):
        if p_values[index] > level / (total - rank):
            break
        held[index] = True
    return held


def _looks(repetitions: Mapping[str, Any] | None) -> int:
    if not repetitions or repetitions.get("mode") != "auto":
        return 1
    return max(1, int(repetitions["max_k"]) - int(repetitions["min_k"]) + 1)


def _mean_p_value(a: Sequence[float], b: Sequence[float], edge: float, above: bool) -> float:
    """The smallest two-sided level (halved: one side) at which the betting sequence for
    ``a - b`` lies wholly above ``edge`` (``above``) or below it."""
    from skilltest.stats.betting import mean_difference

    def excludes(tail: float) -> bool:
        interval = mean_difference(a, b, 1 - 2 * tail)
        if interval.empty:
            return False
        assert interval.low is not None and interval.high is not None
        return interval.low > edge if above else interval.high < edge

    if not excludes(0.5 - 1e-9):
        return 1.0
    kept, rejected = 1e-12, 0.5 - 1e-9
    if excludes(kept):
        return kept
    for _ in range(_BISECTIONS):
        middle = (kept * rejected) ** 0.5
        if excludes(middle):
            rejected = middle
        else:
            kept = middle
    return rejected


def claim_p_value(
    verdict: str,
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    *,
    decide_by: str | None = None,
    min_delta: float | None = None,
    repetitions: Mapping[str, Any] | None = None,
) -> float | None:
    """The p-value of an ``improved`` or ``regressed`` claim that arm ``a`` differs from arm
    ``b``; ``None`` for other verdicts.

    Args:
        verdict: The claim made.
        a: The arm claimed better or worse: ``passes`` (or ``passed``) of ``scored`` (or
            ``runs``) runs, and its ``scores`` when ``decide_by`` is ``mean``.
        b: The arm it is compared with, alike.
        decide_by: ``mean`` for mean scores; pass rates otherwise.
        min_delta: The lower edge of the neutral band (default -0.05).
        repetitions: The plan the runs were made with, as the results file records it.
    """
    from skilltest.stats.exact import difference_p_value

    if verdict not in ("improved", "regressed") or not _readable(a, decide_by):
        return None
    if not _readable(b, decide_by):
        return None
    edge = DEFAULT_MIN_DELTA if min_delta is None else float(min_delta)
    if decide_by == "mean":
        scores_a, scores_b = list(a["scores"]), list(b["scores"])
        if verdict == "improved":
            return _mean_p_value(scores_a, scores_b, IMPROVED_ABOVE, above=True)
        return _mean_p_value(scores_a, scores_b, edge, above=False)
    x, n = _counts(a)
    y, m = _counts(b)
    if verdict == "improved":
        p = difference_p_value(x, n, y, m, IMPROVED_ABOVE)
    else:
        p = difference_p_value(y, m, x, n, -edge)
    return min(1.0, p * _looks(repetitions))


def _min_delta(about: object) -> float | None:
    value = about.get("min_delta") if isinstance(about, Mapping) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _readable(arm: object, decide_by: str | None) -> bool:
    """Whether ``arm`` holds what a claim's p-value is computed from (files of older versions,
    or written by hand, may not)."""
    if not isinstance(arm, Mapping):
        return False
    if decide_by == "mean":
        scores = arm.get("scores")
        return isinstance(scores, list) and all(isinstance(s, int | float) for s in scores)
    pairs = (("passes", "scored"), ("passed", "runs"))
    return any(
        all(isinstance(arm.get(key), int) and not isinstance(arm.get(key), bool) for key in pair)
        for pair in pairs
    )


def _counts(arm: Mapping[str, Any]) -> tuple[int, int]:
    """Passes and judged runs: ``passes``/``scored`` (scenarios) or ``passed``/``runs``
    (pressure, whose ``runs`` are the judged ones)."""
    if isinstance(arm.get("passes"), int) and isinstance(arm.get("scored"), int):
        return int(arm["passes"]), int(arm["scored"])
    return int(arm["passed"]), int(arm["runs"])


def decision_p_value(scenario: Mapping[str, Any]) -> float | None:
    """The p-value of a scenario's with-skill against without-skill ``improved`` or
    ``regressed``; ``None`` for other verdicts."""
    verdict = scenario.get("verdict")
    if verdict not in ("improved", "regressed"):
        return None
    about = scenario.get("scenario") or {}
    return claim_p_value(
        str(verdict),
        scenario.get("with_skill") or {},
        scenario.get("without_skill") or {},
        decide_by=scenario.get("decide_by"),
        min_delta=_min_delta(about),
        repetitions=scenario.get("repetitions"),
    )


def against_views(scenario: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A scenario of a results file as one view per REF of ``--against``: the scenario with
    that revision's arm as ``previous`` and its comparison as ``against``, so that a reader of
    one revision reads each. A file of one REF (or older) is its own single view; a scenario
    run without ``--against`` too (its view has no ``against``)."""
    revisions = scenario.get("revisions")
    if not isinstance(revisions, list) or not revisions:
        return [scenario]
    return [
        {**scenario, "previous": revision.get("previous"), "against": revision.get("against")}
        for revision in revisions
        if isinstance(revision, Mapping)
    ]


def against_p_value(scenario: Mapping[str, Any]) -> float | None:
    """The p-value of a scenario's ``improved`` or ``regressed`` against the previous revision
    (``--against REF``); ``None`` for other verdicts or when the file lacks the previous arm."""
    against = scenario.get("against") or {}
    verdict = against.get("verdict")
    previous = scenario.get("previous")
    if verdict not in ("improved", "regressed") or not isinstance(previous, Mapping):
        return None
    about = scenario.get("scenario") or {}
    return claim_p_value(
        str(verdict),
        scenario.get("with_skill") or {},
        previous,
        decide_by=scenario.get("decide_by"),
        min_delta=_min_delta(about),
        repetitions=scenario.get("repetitions"),
    )


def held_suite_wide(
    p_values: Sequence[float | None], compared: int, level: float = FAMILY_LEVEL
) -> list[bool]:
    """Which of the decisions with ``p_values`` (``None``: no decision) hold by Holm's rule
    over a family of two claims per compared scenario (``compared`` of them)."""
    made = [p for p in p_values if p is not None]
    # Claims not made count with a p-value of 1, which only ever makes the rule stricter.
    family = made + [1.0] * max(0, 2 * compared - len(made))
    held = iter(holm(family, level)[: len(made)])
    return [False if p is None else next(held) for p in p_values]


def family_decisions(results_doc: Mapping[str, Any], level: float = FAMILY_LEVEL) -> dict[str, Any]:
    """The ``family`` block of a scenario results document: the method, the level, and for each
    improved or regressed scenario its p-value and whether it holds suite-wide. The gate blocks
    on a regression that holds suite-wide."""
    scenarios = list(results_doc.get("scenarios") or ())
    p_values = [decision_p_value(s) for s in scenarios]
    compared = sum(1 for s in scenarios if s.get("verdict") in COMPARED)
    held = held_suite_wide(p_values, compared, level)
    rows = [
        Decision(str(s.get("skill")), str(s.get("id")), str(s["verdict"]), p, h)
        for s, p, h in zip(scenarios, p_values, held, strict=True)
        if p is not None
    ]
    return {
        "method": METHOD,
        "level": level,
        "decisions": [row.to_dict() for row in rows],
        "summary": family_summary(rows, level),
    }


def suite_wide_lines(scenarios: Sequence[Mapping[str, Any]]) -> list[str]:
    """The summary lines of which decisions hold suite-wide, for the scenarios of results
    documents (several files read together are one family): one for the with-skill against
    without-skill decisions and one per ``--against`` revision, each only when some decision
    was made."""
    lines = []
    compared = [s for s in scenarios if s.get("verdict") in COMPARED]
    p_values = [decision_p_value(s) for s in compared]
    if any(p is not None for p in p_values):
        held = held_suite_wide(p_values, len(compared))
        rows = [
            Decision(str(s.get("skill")), str(s.get("id")), str(s["verdict"]), p, h)
            for s, p, h in zip(compared, p_values, held, strict=True)
            if p is not None
        ]
        lines.append(family_summary(rows) + f" over {len(compared)} compared scenarios")
    scenarios = [view for s in scenarios for view in against_views(s)]
    refs = dict.fromkeys(
        str(s["against"].get("ref")) for s in scenarios if isinstance(s.get("against"), Mapping)
    )
    for ref in refs:
        against = [
            s
            for s in scenarios
            if isinstance(s.get("against"), Mapping) and str(s["against"].get("ref")) == ref
        ]
        p_values = [against_p_value(s) for s in against]
        if not any(p is not None for p in p_values):
            continue
        held = held_suite_wide(p_values, len(against))
        rows = [
            Decision(str(s.get("skill")), str(s.get("id")), str(s["against"]["verdict"]), p, h)
            for s, p, h in zip(against, p_values, held, strict=True)
            if p is not None
        ]
        lines.append(f"against {ref}: " + family_summary(rows) + f" over {len(against)} scenarios")
    return lines


def family_summary(rows: Sequence[Decision], level: float = FAMILY_LEVEL) -> str:
    """``2 of 3 improved, 1 of 1 regressed hold suite-wide (Holm, 5% family-wise)``."""
    parts = []
    for verdict in ("improved", "regressed"):
        made = [row for row in rows if row.verdict == verdict]
        if made:
            parts.append(f"{sum(row.held for row in made)} of {len(made)} {verdict}")
    if not parts:
        return "no improved or regressed decisions to hold suite-wide"
    percent = f"{level * 100:g}%"
    return f"{', '.join(parts)} hold suite-wide (Holm, {percent} family-wise)"
