"""What a results file says about itself, checked against the runs it holds. Pure.

A results file holds every input of its figures: each run's judgement, score or ending. So a
reader need not believe the figures: each scenario (each trigger query) is judged again from
its runs with the layer's own functions (``pressure.recompute``, ``scenarios.recompute``,
``triggers.recompute``), and so is what spans them (the scenario layer's summary and canary,
the trigger layer's metrics and comparison, with the functions ``skilltest merge`` recomputes
them with). Every figure the file writes differently is a :class:`Mismatch`, named by its unit
and field: a ``passed`` flipped by hand, a verdict edited, a count that does not add up.

What answered is checked the same way: each run records the models its answers named and what
answered it (:class:`~skilltest.transcript.origin.AnsweredBy`); the file's ``provenance`` must
list the same, and its ``origin`` must be what they give, whatever its ``backend`` says.

Runs are known by their content (:func:`run_digest`: everything a run holds but its ``id`` and
timings), not by their ids: a run copied under a new id is the same run, counted once across
files, and a :class:`Mismatch` within one.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from skilltest import __version__
from skilltest.report.provenance import Provenance, answered_of, provenance_of
from skilltest.transcript.origin import distinct

UNREADABLE = (ValueError, TypeError, KeyError, IndexError, AttributeError, ArithmeticError)
"""What the layers' functions raise on runs no run of theirs writes (a document made by hand)."""
NOT_CONTENT = frozenset({"id", "latency_ms", "duration_s"})
"""What a run holds that is not what it did: its id and its timings."""
MAX_SHOWN = 80
"""The longest value a mismatch quotes."""


@dataclass(frozen=True)
class Mismatch:
    """One thing a results file says that its runs do not give."""

    unit: str
    """What it is about: ``skill/id (layer)``, or ``provenance``."""
    field: str
    """The field, by its path in the unit (``passed``, ``with_skill.passed``, ``origin``)."""
    written: Any
    """What the file says."""
    recomputed: Any
    """What its runs give."""
    said: str | None = None
    """How to say it when the field and its two values do not (a run given twice)."""

    def __str__(self) -> str:
        if self.said is not None:
            return f"{self.unit}: {self.said}"
        return (
            f"{self.unit}: {self.field} is {_shown(self.written)} in the file, "
            f"{_shown(self.recomputed)} from its runs"
        )


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def run_digest(run: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of what a run holds, but its id and timings (:data:`NOT_CONTENT`): the
    same run under another id has the same digest."""
    content = {key: value for key, value in run.items() if key not in NOT_CONTENT}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def units(document: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each unit of a results document (a scenario, or a trigger query under one description)
    with its name: ``skill/id (layer)``, ``skill/id (triggers, other)``."""
    layer = document.get("layer")
    if layer == "triggers":
        for suite in _mappings(document.get("suites")):
            variant = suite.get("variant")
            shown = "triggers" if variant in (None, "current") else f"triggers, {variant}"
            for query in _mappings(suite.get("queries")):
                yield f"{suite.get('skill')}/{query.get('id')} ({shown})", query
        return
    for item in _mappings(document.get("scenarios")):
        yield f"{item.get('skill')}/{item.get('id')} ({layer})", item


def every_run(document: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every run a results document holds."""
    for _, unit in units(document):
        yield from _mappings(unit.get("runs"))


def _mappings(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def observed(document: Mapping[str, Any]) -> Provenance:
    """The document's provenance with what answered as its runs record it (the models their
    answers named, where their requests went, the emulator's mark): the origin a reader can
    check. Files whose runs do not record it keep what the provenance says."""
    provenance = provenance_of(document)
    runs = list(every_run(document))
    if runs and all("answered_by" in run for run in runs):
        seen = distinct(s for run in runs for s in answered_of(run.get("answered_by")))
        provenance = replace(provenance, answered_by=seen)
    if runs and all("models" in run for run in runs):
        models = sorted({str(m) for run in runs for m in run.get("models") or ()})
        provenance = replace(provenance, models=tuple(models))
    return provenance


def check(document: Mapping[str, Any]) -> tuple[Mismatch, ...]:
    """Every claim of a results document its runs contradict: each unit's figures and verdict,
    what spans units, runs given twice under other ids, and what answered.

    Args:
        document: A results document, as :func:`skilltest.report.files.read_any_results`
            read it.
    """
    layer = str(document.get("layer"))
    # A run given twice first: the figures it puts out are what follows from it.
    found = [
        copy
        for name, unit in units(document)
        for copy in repeated(name, _mappings(unit.get("runs")))
    ]
    if layer == "triggers":
        found += _triggers(document)
    else:
        found += _scenarios(document, layer)
    found += _provenance(document)
    return tuple(found)


def _scenarios(document: Mapping[str, Any], layer: str) -> list[Mismatch]:
    found: list[Mismatch] = []
    recomputed: list[dict[str, Any]] = []
    canaries = _canaries(document)
    for name, item in units(document):
        try:
            readings = _readings(layer, document, item, canary=item.get("id") in canaries)
        except UNREADABLE as exc:
            found.append(
                Mismatch(name, "runs", "runs a skilltest run writes", f"unreadable: {exc}")
            )
            continue
        skip = {"scenario", "runs", "name", "critical"}
        if layer == "pressure" and not isinstance(document.get("strict"), bool):
            # Written before files said whether the run was --strict: not-red passes or not.
            skip |= {"passed"} if readings[0].get("verdict") == "not-red" else set()
        # Of the readings a file may hold, the one it does (else the first's differences).
        compared = [(again, list(differences(item, again, skip))) for again in readings]
        again, wrong = next((pair for pair in compared if not pair[1]), compared[0])
        recomputed.append(again)
        found += [Mismatch(name, path, a, b) for path, a, b in wrong]
        if layer == "pressure":
            for index, (run, judged) in enumerate(
                zip(_mappings(item.get("runs")), again["runs"], strict=False)
            ):
                for key in ("passed", "red"):
                    if key in run and run.get(key) != judged.get(key):
                        found.append(
                            Mismatch(name, f"runs[{index}].{key}", run.get(key), judged.get(key))
                        )
    if layer == "scenarios":
        found += _spanning(document, recomputed)
    return found


def _readings(
    layer: str, document: Mapping[str, Any], item: Mapping[str, Any], *, canary: bool
) -> list[dict[str, Any]]:
    """The entries the layer could have written from the item's runs (one, or more when the
    file does not record a setting they depend on)."""
    if layer == "pressure":
        from skilltest.pressure.recompute import recomputed

        strict = document.get("strict") is True
        return [recomputed(item, skill_only=bool(document.get("skill_only")), strict=strict)]
    from skilltest.scenarios.recompute import readings

    return readings(item, canary=canary)


def _canaries(document: Mapping[str, Any]) -> frozenset[str]:
    canary = document.get("canary")
    listed = canary.get("scenarios") if isinstance(canary, Mapping) else None
    return frozenset(str(s) for s in listed) if isinstance(listed, list) else frozenset()


def _spanning(
    document: Mapping[str, Any], scenarios: Sequence[Mapping[str, Any]]
) -> list[Mismatch]:
    """The scenario layer's summary and canary, from the scenarios as recomputed."""
    from skilltest.merge.layers import canary_report
    from skilltest.scenarios.report import summary_of

    found: list[Mismatch] = []
    if isinstance(document.get("summary"), Mapping):
        found += [
            Mismatch("summary", path, a, b)
            for path, a, b in differences(document["summary"], summary_of(scenarios), set())
        ]
    if isinstance(document.get("canary"), Mapping):
        again = canary_report([s for s in scenarios if s.get("id") in _canaries(document)])
        found += [
            Mismatch("canary", path, a, b)
            for path, a, b in differences(document["canary"], again or {}, set())
        ]
    return found


def _triggers(document: Mapping[str, Any]) -> list[Mismatch]:
    from skilltest.triggers.recompute import recomputed

    try:
        again = recomputed(document)
    except UNREADABLE as exc:
        return [Mismatch("suites", "runs", "runs a skilltest run writes", f"unreadable: {exc}")]
    found: list[Mismatch] = []
    written = _mappings(document.get("suites"))
    for suite, judged in zip(written, again["suites"], strict=False):
        variant = suite.get("variant")
        shown = "triggers" if variant in (None, "current") else f"triggers, {variant}"
        found += [
            Mismatch(f"{suite.get('skill')} ({shown})", path, a, b)
            for path, a, b in differences(suite, judged, {"queries"})
        ]
        for query, query_again in zip(
            _mappings(suite.get("queries")), judged["queries"], strict=False
        ):
            name = f"{suite.get('skill')}/{query.get('id')} ({shown})"
            found += [
                Mismatch(name, path, a, b)
                for path, a, b in differences(query, query_again, {"runs", "query"})
            ]
    if document.get("comparison") is not None or again["comparison"] is not None:
        found += [
            Mismatch("comparison", path, a, b)
            for path, a, b in differences(
                {"comparison": document.get("comparison")}, again, {"suites"}
            )
        ]
    return found


def repeated(name: str, runs: Sequence[Mapping[str, Any]]) -> list[Mismatch]:
    """Runs of one unit that hold the same as an earlier one under another id."""
    seen: dict[str, Any] = {}
    found = []
    for run in runs:
        digest = run_digest(run)
        if digest in seen:
            found.append(
                Mismatch(
                    name,
                    "runs",
                    run.get("id"),
                    seen[digest],
                    said=f"run {run.get('id')} holds what run {seen[digest]} holds: the same run "
                    "under another id",
                )
            )
        else:
            seen[digest] = run.get("id")
    return found


def _provenance(document: Mapping[str, Any]) -> list[Mismatch]:
    """What the provenance says answered, against what the runs record."""
    written = document.get("provenance")
    if not isinstance(written, Mapping):
        return []
    claimed, checked = provenance_of(document), observed(document)
    found = []
    if claimed.answered_by != checked.answered_by:
        found.append(
            Mismatch(
                "provenance",
                "answered_by",
                [seen.to_dict() for seen in claimed.answered_by],
                [seen.to_dict() for seen in checked.answered_by],
            )
        )
    if claimed.models != checked.models:
        found.append(Mismatch("provenance", "models", list(claimed.models), list(checked.models)))
    if "origin" in written and written.get("origin") != checked.origin:
        found.append(Mismatch("provenance", "origin", written.get("origin"), checked.origin))
    return found


def differences(
    written: Any, recomputed: Any, skip: set[str], path: str = ""
) -> Iterator[tuple[str, Any, Any]]:
    """Each place (``a.b[2]``) where ``written`` differs from ``recomputed``, with both values;
    only the keys ``recomputed`` has are compared (less ``skip`` at the top), numbers to nine
    significant digits."""
    if isinstance(recomputed, Mapping):
        if not isinstance(written, Mapping):
            yield path or "(whole)", written, recomputed
            return
        for key, value in recomputed.items():
            if key in skip:
                continue
            yield from differences(written.get(key), value, set(), f"{path}.{key}" if path else key)
        return
    if isinstance(recomputed, list | tuple):
        if not isinstance(written, list | tuple) or len(written) != len(recomputed):
            yield path, written, recomputed
            return
        for index, (a, b) in enumerate(zip(written, recomputed, strict=True)):
            yield from differences(a, b, set(), f"{path}[{index}]")
        return
    if not _same(written, recomputed):
        yield path, written, recomputed


def _same(a: Any, b: Any) -> bool:
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, numbers) and isinstance(b, numbers):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return bool(a == b)


def version_note(document: Mapping[str, Any]) -> str | None:
    """When the file was written by another skilltest: its verdicts may follow other rules."""
    written = document.get("skilltest_version") or (document.get("provenance") or {}).get(
        "skilltest_version"
    )
    if isinstance(written, str) and written != __version__:
        return (
            f"written by skilltest {written}, checked by {__version__}: if its rules changed "
            "since, rerun the suite with this version"
        )
    return None
