"""A pressure scenario as its results file should give it, recomputed from the runs it holds. Pure.

Each run keeps what its patterns found (``matched``, ``missing``, ``anti_matched``,
``expected_matched``) or why it has no judgement (``error``): from those, whether it passed and
whether a baseline run is RED are decided again, and from the runs the scenario's counts,
rates, intervals, lift and verdict, with the layer's own functions (:func:`aggregate`,
:func:`scenario_document`). What the suite decides (the threshold, ``baseline_red``, the
repetition plan, ``--against``, ``--skill-only``, ``--strict``) is read from the file beside
them; the answers themselves are not judged again (the suite's pattern flags and time limits
are not in the file).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skilltest.pressure.judge import Judgement, is_red
from skilltest.pressure.report import scenario_document
from skilltest.pressure.suite import RED_BY_CRITERIA, PressureScenario
from skilltest.pressure.verdict import SKIPPED, WITHOUT_SKILL, PressureRun, aggregate
from skilltest.repetitions import Repetitions
from skilltest.revision import revisions_of
from skilltest.transcript import Transcript


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def pressure_run(scenario_id: str, run: Mapping[str, Any], baseline_red: str) -> PressureRun:
    """One run as the results file lists it, judged again from what its patterns found."""
    arm = str(run.get("arm"))
    rep = int(run.get("rep") or 0)
    transcript = Transcript(source="results", assistant_text=(str(run.get("output") or ""),))
    error = run.get("error")
    if isinstance(error, str):
        return PressureRun(scenario_id, arm, rep, transcript, None, error=error)
    missing, anti = _strings(run.get("missing")), _strings(run.get("anti_matched"))
    expected = run.get("expected_matched")
    evidence = run.get("evidence")
    judgement = Judgement(
        passed=not missing and not anti,
        matched=_strings(run.get("matched")),
        missing=missing,
        anti_matched=anti,
        expected_matched=expected if isinstance(expected, bool) else None,
        evidence=dict(evidence) if isinstance(evidence, Mapping) else {},
    )
    red = is_red(judgement, baseline_red) if arm == WITHOUT_SKILL else None
    return PressureRun(scenario_id, arm, rep, transcript, judgement, red=red)


def recomputed(item: Mapping[str, Any], *, skill_only: bool, strict: bool) -> dict[str, Any]:
    """The scenario entry the layer writes from the runs ``item`` holds.

    Args:
        item: One entry of the file's ``scenarios``.
        skill_only: The file's ``skill_only``.
        strict: Whether the run was ``--strict`` (a ``not-red`` scenario then fails).
    """
    about: Mapping[str, Any] = item["scenario"] if isinstance(item.get("scenario"), Mapping) else {}
    expected: Mapping[str, Any] = (
        about["expected"] if isinstance(about.get("expected"), Mapping) else {}
    )
    baseline_red = str(expected.get("baseline_red") or RED_BY_CRITERIA)
    scenario_id = str(item.get("id"))
    runs = [r for r in item.get("runs") or () if isinstance(r, Mapping)]
    # A scenario the suite skips has no runs; one that holds runs was not skipped.
    skip = str(item.get("detail") or "skipped") if item.get("verdict") == SKIPPED else None
    scenario = PressureScenario(
        id=scenario_id,
        name=item.get("name") if isinstance(item.get("name"), str) else None,
        prompt=str(about.get("prompt") or ""),
        required_patterns=(),
        anti_patterns=(),
        expected_patterns=(),
        repetitions=None,
        model=None,
        threshold=float(item.get("threshold") or 0.0),
        max_tokens=0,
        temperature=None,
        location="",
        skip=skip if not runs else None,
        baseline_red=baseline_red,
        critical=bool(item.get("critical")),
    )
    against = item.get("against")
    result = aggregate(
        scenario,
        str(item.get("skill")),
        [pressure_run(scenario_id, run, baseline_red) for run in runs],
        skill_only=skill_only,
        complete=bool(item.get("complete", True)),
        repetitions=Repetitions.from_dict(item.get("repetitions")),
        against=str(against.get("ref")) if isinstance(against, Mapping) else None,
        revisions=revisions_of(item),
    )
    return scenario_document(result, provenance=None, strict=strict)
