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


def decision_p_value(scenario: Mapping[str, Any]) -> float | None:
    """The p-value of a scenario's ``improved`` or ``regressed`` claim; ``None`` for others."""
    from skilltest.stats.exact import difference_p_value

    verdict = scenario.get("verdict")
    if verdict not in ("improved", "regressed"):
        return None
    about = scenario.get("scenario") or {}
    min_delta = about.get("min_delta")
    min_delta = DEFAULT_MIN_DELTA if min_delta is None else float(min_delta)
    a, b = scenario["with_skill"], scenario["without_skill"]
    if scenario.get("decide_by") == "mean":
        scores_a, scores_b = list(a["scores"]), list(b["scores"])
        if verdict == "improved":
            return _mean_p_value(scores_a, scores_b, IMPROVED_ABOVE, above=True)
        return _mean_p_value(scores_a, scores_b, min_delta, above=False)
    x, n, y, m = int(a["passes"]), int(a["scored"]), int(b["passes"]), int(b["scored"])
    if verdict == "improved":
        p = difference_p_value(x, n, y, m, IMPROVED_ABOVE)
    else:
        p = difference_p_value(y, m, x, n, -min_delta)
    return min(1.0, p * _looks(scenario.get("repetitions")))


def family_decisions(results_doc: Mapping[str, Any], level: float = FAMILY_LEVEL) -> dict[str, Any]:
    """The ``family`` block of a scenario results document: the method, the level, and for each
    improved or regressed scenario its p-value and whether it holds suite-wide. The gate blocks
    on a regression that holds suite-wide."""
    decisions: list[tuple[Mapping[str, Any], float]] = []
    compared = 0
    for scenario in results_doc.get("scenarios") or ():
        if scenario.get("verdict") in COMPARED:
            compared += 1
        p = decision_p_value(scenario)
        if p is not None:
            decisions.append((scenario, p))
    # Two claims per compared scenario (improved, regressed); those not made count with a
    # p-value of 1, which only ever makes the rule stricter.
    family = [p for _, p in decisions] + [1.0] * (2 * compared - len(decisions))
    held = holm(family, level)[: len(decisions)]
    rows = [
        Decision(str(s.get("skill")), str(s.get("id")), str(s["verdict"]), p, h)
        for (s, p), h in zip(decisions, held, strict=True)
    ]
    return {
        "method": METHOD,
        "level": level,
        "decisions": [row.to_dict() for row in rows],
        "summary": family_summary(rows, level),
    }


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
