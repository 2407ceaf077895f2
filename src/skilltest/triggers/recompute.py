"""A trigger suite as its results file should give it, recomputed from the runs it holds. Pure.

Each run keeps how it ended (``fired``, ``not-fired``, ``budget``, ``timeout``, ``error``); from
those each query's counts, firing rate, interval, ``passed``, ``result`` and interval verdict,
each suite's ``passed`` and metrics, the comparison of two descriptions and each query's
``against`` the previous revision are judged again with the layer's own functions
(:class:`~skilltest.triggers.verdict.QueryResult`, :class:`~skilltest.triggers.verdict.SuiteResult`,
:func:`~skilltest.triggers.verdict.compare`, :func:`~skilltest.triggers.verdict.against_revisions`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from skilltest.repetitions import Repetitions
from skilltest.revision import PREVIOUS, is_revision_arm, revisions_of
from skilltest.triggers.suite import TriggerQuery
from skilltest.triggers.verdict import (
    QueryResult,
    SuiteResult,
    TriggerRun,
    against_revisions,
    compare,
)
from skilltest.triggers.watch import ENDINGS

CURRENT_VARIANT = "current"
"""The suite's own description (the variant every trigger run has)."""


def _query(item: Mapping[str, Any], threshold: float) -> QueryResult:
    runs = [
        TriggerRun(rep=int(run.get("rep") or 0), ended=run["ended"])
        for run in item.get("runs") or ()
        if isinstance(run, Mapping) and run.get("ended") in ENDINGS
    ]
    query = TriggerQuery(
        id=str(item.get("id")),
        query=str(item.get("query") or ""),
        should_trigger=bool(item.get("should_trigger")),
        location="",
    )
    # The plan the runs came from is an input, as the threshold is: read as written.
    return QueryResult(
        query,
        tuple(sorted(runs, key=lambda r: r.rep)),
        threshold,
        repetitions=Repetitions.from_dict(item.get("repetitions")),
    )


def suite_result(suite: Mapping[str, Any]) -> SuiteResult:
    """One suite of the file (one description), its queries judged again from their runs."""
    threshold = float(suite.get("threshold") or 0.0)
    distractors = suite.get("distractors")
    return SuiteResult(
        suite=str(suite.get("suite")),
        skill=str(suite.get("skill")),
        variant=str(suite.get("variant")),
        description=suite.get("description") if isinstance(suite.get("description"), str) else None,
        queries=tuple(
            _query(q, threshold) for q in suite.get("queries") or () if isinstance(q, Mapping)
        ),
        threshold=threshold,
        max_tool_calls=int(suite.get("max_tool_calls") or 0),
        distractors=tuple(str(d) for d in distractors) if isinstance(distractors, list) else (),
    )


def recomputed(document: Mapping[str, Any]) -> dict[str, Any]:
    """The file's ``suites`` and ``comparison`` as the layer writes them from the runs it
    holds (a query's ``against``, and with several REFs its ``revisions``, read from the same
    file's suite of each REF's arm)."""
    written = [s for s in document.get("suites") or () if isinstance(s, Mapping)]
    suites = [suite_result(s) for s in written]
    arms = {(s.suite, s.variant): s for s in suites if is_revision_arm(s.variant)}
    judged: list[SuiteResult] = []
    for data, suite in zip(written, suites, strict=True):
        refs = () if is_revision_arm(suite.variant) else _refs(data)
        if all((suite.suite, arm) in arms for arm, _ in refs):
            given = [(arm, ref, arms[suite.suite, arm]) for arm, ref in refs]
            suite = against_revisions(suite, given) if given else suite
        judged.append(suite)
    return {
        "suites": [suite.to_dict() for suite in judged],
        "comparison": _comparisons(judged) or None,
    }


def _refs(data: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The arms and REFs a suite's queries were compared with (none without ``--against``)."""
    queries = [q for q in data.get("queries") or () if isinstance(q, Mapping)]
    for q in queries:
        if revisions_of(q):
            return revisions_of(q)
    for q in queries:
        if isinstance(q.get("against"), Mapping):
            return ((PREVIOUS, str(q["against"].get("ref"))),)
    return ()


def _comparisons(suites: Sequence[SuiteResult]) -> list[dict[str, Any]]:
    """Each suite's current description against the other one it ran with (``--description``),
    as the results file lists the pair."""
    found = []
    for current, other in itertools.pairwise(suites):
        paired = current.suite == other.suite and current.variant == CURRENT_VARIANT
        if paired and other.variant not in (PREVIOUS, CURRENT_VARIANT):
            found.append(
                {
                    "suite": current.suite,
                    "skill": current.skill,
                    "differences": [diff.to_dict() for diff in compare(current, other)],
                }
            )
    return found
