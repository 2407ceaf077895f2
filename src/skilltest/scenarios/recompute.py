"""A scenario as its results file should give it, recomputed from the runs it holds. Pure.

Each run keeps its score, its components, its vetoes, what the world saw of it and the skills it
invoked; from those the scenario's arms (pass rates, means, firing rates, intervals), deltas,
verdict, reasons and ``passed`` are judged again with the layer's own functions
(:func:`~skilltest.scenarios.verdict.judge`, :func:`~skilltest.scenarios.canary.judge_canary`,
:func:`~skilltest.scenarios.report.scenario_dict`), with what the suite asked of the scenario as
the file keeps it (its ``scenario`` block: ``min_score``, ``min_delta``, the expected skills;
``decide_by``, the repetition plan, ``--against``). A run's score itself is taken as the run
recorded it: scoring again needs its transcript (``skilltest scenarios --rescore``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skilltest.decision import MIN_DELTA, Verdict
from skilltest.repetitions import Repetitions
from skilltest.revision import PREVIOUS, revisions_of
from skilltest.scenarios.canary import judge_canary
from skilltest.scenarios.outcome import RunRecord, texts_of
from skilltest.scenarios.report import scenario_dict
from skilltest.scenarios.verdict import Thresholds, judge


def readings(item: Mapping[str, Any], *, canary: bool) -> list[dict[str, Any]]:
    """The scenario entry the layer writes from the runs ``item`` holds: one, or for files
    written before the ``scenario`` block kept ``require_skills_fired``, one with the bar and
    one without (either is what such a file may hold).

    Raises:
        ValueError: a run's ``arm`` is not an arm.
    """
    about = item.get("scenario")
    if isinstance(about, Mapping) and "require_skills_fired" in about:
        return [recomputed(item, canary=canary)]
    return [recomputed(item, canary=canary, require=bar) for bar in (True, False)]


def recomputed(
    item: Mapping[str, Any], *, canary: bool, require: bool | None = None
) -> dict[str, Any]:
    """The scenario entry the layer writes from the runs ``item`` holds.

    Args:
        item: One entry of the file's ``scenarios``.
        canary: The file's ``canary`` block lists it: judged as a canary.
        require: Whether the expected skills must fire; ``None``: as the file says.

    Raises:
        ValueError: a run's ``arm`` is not an arm.
    """
    scenario_id, skill = str(item.get("id")), str(item.get("skill"))
    about: Mapping[str, Any] = item["scenario"] if isinstance(item.get("scenario"), Mapping) else {}
    world: Mapping[str, Any] = about["world"] if isinstance(about.get("world"), Mapping) else {}
    runs = [r for r in item.get("runs") or () if isinstance(r, Mapping)]
    records = [RunRecord.from_dict(r, scenario_id=scenario_id, skill=skill) for r in runs]
    # Files written before the block kept them: the skills counted, and the bar as the default.
    expected = texts_of(about.get("expected_skills", item.get("expected_skills")))
    required = about.get("require_skills_fired", True) is not False if require is None else require
    thresholds = Thresholds(
        min_score=float(about.get("min_score", Thresholds.min_score)),
        min_delta=float(about.get("min_delta", MIN_DELTA)),
        decide_by=str(item.get("decide_by") or Thresholds.decide_by),
    )
    reasons = texts_of(item.get("reasons"))
    skipped = item.get("verdict") == Verdict.SKIPPED.value and not runs
    verdict = judge(
        scenario_id,
        skill,
        records,
        comparison=item.get("without_skill") is not None,
        expected_skills=expected,
        thresholds=thresholds,
        skip=(reasons[0] if reasons else "skipped") if skipped else None,
        repetitions=Repetitions.from_dict(item.get("repetitions")),
        require_skills_fired=required,
        requires_recovery=bool(world.get("recovers")),
        revisions=() if canary else _revisions(item),
    )
    if canary:
        verdict = judge_canary(
            verdict,
            min_score=thresholds.min_score,
            expected_skills=expected,
            require_skills_fired=required,
        )
    return scenario_dict(verdict)


def _revisions(item: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Each REF of ``--against`` a scenario of a results file ran with its arm: its
    ``revisions``, else its one ``against`` (the arm ``previous``), else none."""
    against = item.get("against")
    if not isinstance(against, Mapping):
        return ()
    return revisions_of(item) or ((PREVIOUS, str(against.get("ref"))),)
