"""Each layer's units put back together, and what spans units recomputed. Pure."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skilltest.errors import InputError
from skilltest.merge.shards import ShardFile, Shards

if TYPE_CHECKING:
    from skilltest.triggers.verdict import Confusion


def _unit(item: Mapping[str, Any], skill: Any) -> str:
    return f"{skill}/{item.get('id')}"


def _owned(file: ShardFile, unit: str, place: str) -> None:
    if unit not in file.shard["assigned"]:
        raise InputError(
            f"{unit} is not one of this shard's scenarios (`shard.assigned`)",
            location=f"{file.path}#/{place}",
            fix="merge results files as skilltest wrote them",
        )


def _scenarios(shards: Shards) -> list[tuple[ShardFile, dict[str, Any]]]:
    """Every scenario of every shard with its file, in suite order."""
    order = shards.order
    found = []
    for file in shards.files:
        for place, scenario in enumerate(file.document.get("scenarios") or []):
            unit = _unit(scenario, scenario.get("skill"))
            _owned(file, unit, f"scenarios/{place}")
            found.append((order[unit], file, scenario))
    found.sort(key=lambda entry: entry[0])
    return [(file, scenario) for _, file, scenario in found]


def merge_pressure(shards: Shards) -> dict[str, Any]:
    """Pressure: the scenarios in suite order (every figure of a scenario is its own); with
    ``--batch``, the shards' batches as one ``batch``."""
    merged: dict[str, Any] = {"scenarios": [scenario for _, scenario in _scenarios(shards)]}
    batches = [
        f.document["batch"] for f in shards.files if isinstance(f.document.get("batch"), Mapping)
    ]
    if batches:
        merged["batch"] = merge_batches(batches)
    return merged


def merge_batches(batches: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``batch`` of the shards that ran ``--batch``: every batch, the counts and tokens
    summed, the most rounds; ``resume_files`` names each shard's resume file (``resume_file`` is
    theirs when they share one, else ``null``)."""
    files = list(dict.fromkeys(str(b.get("resume_file")) for b in batches))

    def total(key: str) -> int:
        return sum(int(b.get(key) or 0) for b in batches)

    def summed(key: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for batch in batches:
            for name, value in (batch.get(key) or {}).items():
                if isinstance(value, int | float):
                    out[name] = out.get(name, 0) + value
        return out

    return {
        **batches[0],
        "resume_file": files[0] if len(files) == 1 else None,
        "resume_files": files,
        "rounds": max(int(b.get("rounds") or 0) for b in batches),
        "batches": [entry for b in batches for entry in b.get("batches") or []],
        "submitted": total("submitted"),
        "resumed": total("resumed"),
        "requests": total("requests"),
        "results": summed("results"),
        "usage": summed("usage"),
    }


def merge_scenarios(shards: Shards) -> dict[str, Any]:
    """Scenarios: the scenarios in suite order, the summary and the canary recomputed."""
    from skilltest.scenarios.report import summary_of

    entries = _scenarios(shards)
    scenarios = [scenario for _, scenario in entries]
    canaries = []
    for file, scenario in entries:
        canary = file.document.get("canary")
        if isinstance(canary, Mapping) and scenario.get("id") in (canary.get("scenarios") or []):
            canaries.append(scenario)
    return {
        "scenarios": scenarios,
        "summary": summary_of(scenarios),
        "canary": canary_report(canaries),
    }


def canary_report(canaries: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The scenario layer's ``canary`` from its canary scenarios as a results file lists them:
    which ran, which failed; ``None`` when none ran."""
    from skilltest.scenarios.canary import CanaryReport

    if not canaries:
        return None
    return CanaryReport(
        scenarios=tuple(str(s.get("id")) for s in canaries),
        failed=tuple(str(s.get("id")) for s in canaries if not s.get("passed")),
    ).to_dict()


def _fired(suite: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """Each query's ``(id, fired, scored)``, as listed."""
    return [
        (str(q.get("id")), int(q.get("fired") or 0), int(q.get("scored") or 0))
        for q in suite["queries"]
    ]


def _counts(suite: Mapping[str, Any]) -> Confusion:
    """A suite's per-run counts, from its queries as listed."""
    from skilltest.triggers.verdict import Confusion

    return Confusion.tally(
        (bool(q.get("should_trigger")), int(q.get("fired") or 0), int(q.get("scored") or 0))
        for q in suite["queries"]
    )


def merge_triggers(shards: Shards) -> dict[str, Any]:
    """Triggers: per suite and description, the queries in suite order; each suite's metrics
    and the comparison of two descriptions recomputed from them."""
    from skilltest.revision import is_revision_arm
    from skilltest.triggers.verdict import compare_counts

    order = shards.order
    suites: dict[tuple[str, str], dict[str, Any]] = {}
    place: dict[tuple[str, str], tuple[int, int]] = {}
    queries: dict[tuple[str, str], list[tuple[int, dict[str, Any]]]] = {}
    for file in shards.files:
        variant_place: dict[str, int] = {}
        for s, suite in enumerate(file.document.get("suites") or []):
            key = (str(suite.get("suite")), str(suite.get("variant")))
            variant = variant_place.setdefault(key[0], 0)
            variant_place[key[0]] = variant + 1
            suites.setdefault(key, suite)
            for q, query in enumerate(suite.get("queries") or []):
                unit = _unit(query, suite.get("skill"))
                _owned(file, unit, f"suites/{s}/queries/{q}")
                queries.setdefault(key, []).append((order[unit], query))
                first = min(place.get(key, (order[unit], variant))[0], order[unit])
                place[key] = (first, variant)
    merged = []
    for key in sorted(suites, key=lambda k: place.get(k, (len(order), 0))):
        listed = [query for _, query in sorted(queries.get(key, []), key=lambda e: e[0])]
        suite = {**suites[key], "queries": listed}
        suite["passed"] = all(q.get("passed") for q in listed)
        suite["metrics"] = _counts(suite).to_dict()
        merged.append({name: suite[name] for name in suites[key]})  # the file's key order
    comparisons = []
    for current, other in itertools.pairwise(merged):
        same_suite = current["suite"] == other["suite"]
        revision = is_revision_arm(str(other["variant"]))
        if same_suite and current["variant"] == "current" and not revision:
            theirs = {name: (fired, scored) for name, fired, scored in _fired(other)}
            differences = compare_counts(_fired(current), theirs, _counts(current), _counts(other))
            comparisons.append(
                {
                    "suite": current["suite"],
                    "skill": current["skill"],
                    "differences": [diff.to_dict() for diff in differences],
                }
            )
    return {"suites": merged, "comparison": comparisons or None}


MERGERS: dict[str, Callable[[Shards], dict[str, Any]]] = {
    "pressure": merge_pressure,
    "scenarios": merge_scenarios,
    "triggers": merge_triggers,
}
"""Each layer's merge: the keys of its results document it recomputes."""
