"""The gate reads and checks results files: each scenario as the rules see it, each run once."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.gate.trust import stale
from skilltest.merge.claims import Mismatch, check, every_run, observed, run_digest, version_note
from skilltest.repetitions import run_number
from skilltest.report.files import read_any_results
from skilltest.report.provenance import (
    OFFLINE,
    Provenance,
    provenance_of,
)
from skilltest.revision import against_views
from skilltest.stats.family import COMPARED, against_p_value, decision_p_value

PASS = "PASS"
BLOCK = "BLOCK"
NOT_FAILING = frozenset({"error", "skipped"})
"""Verdicts the ``failing`` rule leaves to others: no verdict (the ``evidence`` rule), nothing
run. An inconclusive scenario is noise (the ``critical`` rule asks for more runs where it
matters), unless it misses a bar whatever more runs show: then it fails."""
PRESSURE_FAILING = frozenset({"no-steer", "error"})
"""Pressure verdicts that fail, for results files that do not say ``passed``."""
RERUN = "rerun the suite with this version of skilltest and pass its --results file"
OFFLINE_ALLOWED = "they come from a scripted stand-in and say nothing about a real model"
"""What the headline adds when offline results were let through."""
WORD_OVERLAP = (
    "not a blocker: the emulator fires a skill when its description shares words with the "
    "query, which says nothing about how a real model reads a description"
)


@dataclass(frozen=True)
class ScenarioEntry:
    """One scenario of one results file, as the gate reads it."""

    layer: str
    """``pressure``, ``scenarios`` or ``triggers``."""
    skill: str
    """The skill under test."""
    id: str
    """The scenario id."""
    verdict: str
    """Its verdict as written (``regressed``, ``steers``, ``error``...)."""
    passed: bool
    """Whether it passed, as written (pressure files without ``passed``: not a failing
    verdict)."""
    critical: bool
    """``critical: true`` in the suite."""
    passes: int | None
    """With-skill runs that passed; ``None`` when the file does not say (older scenario
    results)."""
    score_sum: float
    """The sum of the with-skill runs' scores (pressure: the passes)."""
    judged: int
    """With-skill runs judged or scored."""
    unscored: int
    """With-skill and without-skill runs without a judgement or score."""
    violations: int
    """With-skill runs with an authority violation (0 outside a controlled world)."""
    in_world: bool
    """Whether the with-skill runs acted on a controlled world."""
    first_violation: str
    """The first violation of the first violating with-skill run, for the evidence."""
    reason: str
    """Its first reason or detail, as written."""
    against: dict[str, Any] | None = None
    """Its ``against`` entry (``--against REF``: ``ref``, ``delta``, ``ci``, ``verdict``)."""
    inconclusive: bool = False
    """More runs are needed before it can pass or fail (a scenario that misses a bar whatever
    more runs show is not inconclusive but failing)."""
    run_ids: frozenset[str] = frozenset()
    """The ids of its runs (empty for files written before runs had ids)."""
    run_digests: frozenset[str] = frozenset()
    """Its runs by their content (:func:`skilltest.merge.claims.run_digest`): the same run
    under another id is the same run."""
    source: Path = Path()
    """The results file it was read from."""
    offline: bool = False
    """Its file's numbers come from the scripted stand-in."""
    adaptive_max_k: int | None = None
    """With ``-k auto``: the most runs per arm it could take; ``None`` at a fixed K."""
    runs_to_decide: int | None = None
    """For an inconclusive verdict: about how many runs per arm would likely decide it."""
    reasons: tuple[str, ...] = ()
    """Every reason it fails or is inconclusive, as written."""
    compared: bool = False
    """Whether it compared its arms (scenario layer), so that it could have claimed either
    way: a member of the suite-wide family of with-skill against without-skill claims."""
    decision_p: float | None = None
    """The p-value of its ``improved`` or ``regressed`` with-skill against without-skill
    (:func:`skilltest.stats.family.decision_p_value`); ``None`` for other verdicts."""
    misses_a_bar: bool | None = None
    """Whether it fails whatever more runs show (a bar missed: the with-skill mean, the
    expected skills, recovery, authority); ``None`` in files written before it was recorded."""
    against_p: float | None = None
    """The p-value of its ``improved`` or ``regressed`` against the previous revision;
    ``None`` for other verdicts or without ``--against``."""
    cell: str = ""
    """The matrix cell it ran in (``model=opus``); empty for a single run's file."""
    required: bool = True
    """Whether its cell is required (``--require-cell``; every cell without it): a failing,
    regressed or critical scenario of a cell that is not is listed, not blocked on."""
    revisions: tuple[tuple[dict[str, Any], float | None], ...] = ()
    """With several ``--against`` REFs: each REF's ``against`` entry and its p-value (the
    first is also ``against``); empty otherwise."""

    @property
    def againsts(self) -> tuple[tuple[dict[str, Any], float | None], ...]:
        """Every ``against`` entry with its p-value, one per REF of ``--against``."""
        if self.revisions:
            return self.revisions
        return () if self.against is None else ((self.against, self.against_p),)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What identifies the scenario across files: layer, skill, id, and its matrix cell
        (a scenario in two cells is two scenarios; shards of one cell pool)."""
        return (self.layer, self.skill, self.id, self.cell)

    @property
    def name(self) -> str:
        """``skill/id (layer)``, with ``[cell]`` in a matrix, as the gate prints it."""
        return f"{self.skill}/{self.id} ({self.layer})" + (f" [{self.cell}]" if self.cell else "")


@dataclass(frozen=True)
class ResultsFile:
    """One results file, read and checked."""

    path: Path
    """Where it was read."""
    layer: str
    """``pressure``, ``scenarios`` or ``triggers``."""
    complete: bool
    """False when the run was interrupted or is still being written."""
    canary_failed: tuple[str, ...]
    """Canary scenarios that failed (scenario layer); empty when none did or none ran."""
    scenarios: tuple[ScenarioEntry, ...]
    """In file order."""
    provenance: Provenance = field(default_factory=lambda: Provenance(run_id="", backend=None))
    """What produced it."""
    digest: str = ""
    """A checksum of its content: the same results given twice are read once."""
    stopped: str | None = None
    """Why ``--max-cost-usd`` stopped the run before every run was made; ``None`` otherwise."""
    stale: tuple[str, ...] | None = None
    """How the suite files and skill folders on disk differ from what the runs read (empty: not
    at all); ``None`` when not checked (``--no-stale-check``)."""
    mismatches: tuple[Mismatch, ...] | None = ()
    """What the file says that its runs do not give (:func:`skilltest.merge.claims.check`);
    ``None`` when its figures were taken as written (not checked)."""
    version_note: str | None = None
    """When another skilltest wrote the file: its verdicts may follow other rules."""
    runs: int = 0
    """The runs it holds."""
    cell: str = ""
    """The matrix cell whose document it is (``model=opus``); empty for a single run's file."""
    required: bool = True
    """Whether its cell is required (``--require-cell``; every cell without it)."""

    @property
    def name(self) -> str:
        """How the gate names it: its path, and ``[cell]`` for a matrix's cell."""
        return f"{self.path} [{self.cell}]" if self.cell else str(self.path)


def load_results(path: Path, *, stale_check: bool = True, claims: bool = True) -> ResultsFile:
    """Reads a pressure, scenario or trigger results file for the gate, and checks what it says
    of itself: its figures and origin against its runs, its suite and skill files against the
    disk.

    Args:
        path: The results file.
        stale_check: Compare the suite files and skill folders the runs read with the disk.
        claims: Recompute its figures and origin from its runs; ``False`` reads them as written
            (documents a caller built itself).

    Raises:
        InputError: unreadable, not JSON, another layer, another schema version, or a
            scenario without the fields the gate reads; the message names the place and fix.
    """
    return results_file(read_any_results(path), path, stale_check=stale_check, claims=claims)


def results_file(
    data: dict[str, Any],
    path: Path,
    *,
    cell: str = "",
    pointer: str = "",
    stale_check: bool = True,
    claims: bool = True,
) -> ResultsFile:
    """One run's results document read for the gate and checked (:func:`load_results`): a
    file's, or a matrix cell's (``cell`` its id, ``pointer`` where its document is in the file,
    ``/cells/1/results``).

    Raises:
        InputError: a scenario without the fields the gate reads, naming its place.
    """
    layer = data["layer"]
    # What answered as the runs record it, whatever the provenance says.
    provenance = observed(data) if claims else provenance_of(data)
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    if layer == "triggers":
        entries = _trigger_entries(f"{path}#{pointer}", data)
    else:
        raw = data.get("scenarios")
        if not isinstance(raw, list):
            raise InputError(
                "no list of scenarios", location=f"{path}#{pointer}/scenarios", fix=RERUN
            )
        entries = [
            _entry(item, str(layer), f"{path}#{pointer}/scenarios/{index}")
            for index, item in enumerate(raw)
        ]
    canary = data.get("canary") if layer == "scenarios" else None
    failed = tuple(str(s) for s in (canary or {}).get("failed") or ()) if canary else ()
    return ResultsFile(
        path=path,
        layer=str(layer),
        complete=bool(data.get("complete")) and not data.get("interrupted"),
        canary_failed=failed,
        scenarios=tuple(
            replace(entry, source=path, offline=provenance.origin == OFFLINE, cell=cell)
            for entry in entries
        ),
        provenance=provenance,
        digest=digest,
        stopped=_stopped(data.get("stopped")),
        stale=stale(provenance) if stale_check else None,
        mismatches=check(data) if claims else None,
        version_note=version_note(data),
        runs=sum(1 for _ in every_run(data)),
        cell=cell,
    )


def _stopped(value: Any) -> str | None:
    if isinstance(value, dict):
        return str(value.get("reason") or value.get("by") or "stopped")
    return None


def _run_ids(runs: Any) -> frozenset[str]:
    if not isinstance(runs, list):
        return frozenset()
    return frozenset(
        run["id"] for run in runs if isinstance(run, dict) and isinstance(run.get("id"), str)
    )


def _run_digests(runs: Any) -> frozenset[str]:
    if not isinstance(runs, list):
        return frozenset()
    return frozenset(run_digest(run) for run in runs if isinstance(run, dict))


def _trigger_revisions(query: dict[str, Any]) -> tuple[tuple[dict[str, Any], None], ...]:
    """A trigger query's comparison with each REF of several ``--against`` (its
    ``revisions``), without p-values (a trigger query's regression is read one at a time, as
    with one REF); empty otherwise."""
    return tuple(
        (dict(view["against"]), None)
        for view in against_views(query)
        if isinstance(query.get("revisions"), list) and isinstance(view.get("against"), dict)
    )


def _trigger_entries(path: str, data: dict[str, Any]) -> list[ScenarioEntry]:
    """One entry per query of the current skill (the ``previous`` suite of ``--against REF`` is
    the yardstick, read in each query's ``against``). Its verdict is the interval verdict the
    file gives, or, in files written before queries had one, the one their counts give."""
    from skilltest.triggers.verdict import (
        ERROR_VERDICT,
        FAIL,
        INCONCLUSIVE,
        PASS,
        interval_verdict,
    )

    entries = []
    for s, suite in enumerate(data.get("suites") or []):
        if not isinstance(suite, dict) or suite.get("variant", "current") != "current":
            continue
        threshold = suite.get("threshold")
        for q, query in enumerate(suite.get("queries") or []):
            where = f"{path}/suites/{s}/queries/{q}"
            if not isinstance(query, dict) or not isinstance(query.get("id"), str):
                raise InputError("expected a query with an id", location=where, fix=RERUN)
            scored, total = int(query.get("scored") or 0), int(query.get("total") or 0)
            fired = int(query.get("fired") or 0)
            verdict = query.get("verdict")
            if verdict not in (PASS, FAIL, INCONCLUSIVE, ERROR_VERDICT):
                verdict = (
                    ERROR_VERDICT
                    if scored == 0 or scored * 2 < total
                    else interval_verdict(
                        fired,
                        scored,
                        float(threshold if isinstance(threshold, int | float) else 0.5),
                        bool(query.get("should_trigger")),
                    )
                )
            should = bool(query.get("should_trigger"))
            result = ("miss" if should else "false-trigger") if verdict == FAIL else str(verdict)
            needed = query.get("runs_to_decide")
            entries.append(
                ScenarioEntry(
                    layer="triggers",
                    skill=str(suite.get("skill")),
                    id=query["id"],
                    verdict=result,
                    passed=verdict == PASS,
                    critical=False,
                    passes=None,
                    score_sum=float(fired),
                    judged=scored,
                    unscored=total - scored,
                    violations=0,
                    in_world=False,
                    first_violation="",
                    reason=str(query.get("reason") or ""),
                    against=query["against"] if isinstance(query.get("against"), dict) else None,
                    revisions=_trigger_revisions(query),
                    inconclusive=verdict == INCONCLUSIVE,
                    run_ids=_run_ids(query.get("runs")),
                    run_digests=_run_digests(query.get("runs")),
                    adaptive_max_k=_adaptive_max_k(query.get("repetitions")),
                    runs_to_decide=needed if isinstance(needed, int) else None,
                )
            )
    return entries


def _adaptive_max_k(repetitions: Any) -> int | None:
    """With ``-k auto`` (a plan recorded as ``{"mode": "auto", "max_k": N}``): N; else ``None``."""
    if isinstance(repetitions, dict) and repetitions.get("mode") == "auto":
        return int(repetitions.get("max_k") or 0) or None
    return None


def _entry(item: Any, layer: str, where: str) -> ScenarioEntry:
    def need(ok: bool, pointer: str, what: str) -> None:
        if not ok:
            raise InputError(f"expected {what}", location=f"{where}{pointer}", fix=RERUN)

    need(isinstance(item, dict), "", "a scenario (a mapping)")
    for key in ("id", "skill", "verdict"):
        need(isinstance(item.get(key), str), f"/{key}", "a string")
    arm = item.get("with_skill")
    need(isinstance(arm, dict), "/with_skill", "the with-skill arm (a mapping)")
    runs = item.get("runs") or []
    need(isinstance(runs, list), "/runs", "a list of runs")
    verdict = item["verdict"]
    if layer == "pressure":
        for key in ("runs", "passed", "errors"):
            need(isinstance(arm.get(key), int), f"/with_skill/{key}", "an integer")
        passes: int | None = int(arm["passed"])
        score_sum, judged = float(arm["passed"]), int(arm["runs"])
        base = item.get("without_skill") or {}
        unscored = int(arm["errors"]) + int(base.get("errors") or 0)
        passed = (
            bool(item["passed"])
            if isinstance(item.get("passed"), bool)
            else verdict not in PRESSURE_FAILING
        )
        inconclusive = verdict == "inconclusive"
    else:
        scores = arm.get("scores")
        need(
            isinstance(scores, list) and all(isinstance(s, int | float) for s in scores),
            "/with_skill/scores",
            "a list of scores",
        )
        score_sum, judged = float(sum(scores)), len(scores)
        passes = arm.get("passes")
        need(passes is None or isinstance(passes, int), "/with_skill/passes", "an integer")
        base = item.get("without_skill") or {}
        unscored = int(arm.get("unscored") or 0) + int(base.get("unscored") or 0)
        passed = bool(item.get("passed"))
        # An inconclusive verdict that misses a bar whatever more runs show is a failure: its
        # result says so.
        result = item.get("result")
        inconclusive = result == "inconclusive" if result else verdict == "inconclusive"
    # Only the with-skill arm's violations count: the baseline's are what the skill prevents.
    violating = [
        run
        for run in runs
        if isinstance(run, dict)
        and run.get("arm") == "with_skill"
        and ((run.get("world") or {}).get("violations"))
    ]
    violations = int(arm.get("authority_violations") or 0) or len(violating)
    first = ""
    if violating:
        run = violating[0]
        first = f"run #{run_number(layer, run.get('rep'))}: {run['world']['violations'][0]}"
    reasons = item.get("reasons") or []
    reason = str(reasons[0]) if reasons else str(item.get("detail") or "")
    return ScenarioEntry(
        layer=layer,
        skill=item["skill"],
        id=item["id"],
        verdict=verdict,
        passed=passed,
        critical=bool(item.get("critical")),
        passes=passes,
        score_sum=score_sum,
        judged=judged,
        unscored=unscored,
        violations=violations,
        in_world="authority_violations" in arm,
        first_violation=first,
        reason=reason,
        against=item["against"] if isinstance(item.get("against"), dict) else None,
        inconclusive=inconclusive,
        run_ids=_run_ids(runs),
        run_digests=_run_digests(runs),
        adaptive_max_k=_adaptive_max_k(item.get("repetitions")),
        runs_to_decide=item.get("runs_to_decide")
        if isinstance(item.get("runs_to_decide"), int)
        else None,
        reasons=tuple(str(r) for r in reasons),
        compared=layer == "scenarios" and verdict in COMPARED,
        decision_p=decision_p_value(item) if layer == "scenarios" else None,
        against_p=against_p_value(item),
        revisions=tuple(
            (dict(view["against"]), against_p_value(view))
            for view in against_views(item)
            if isinstance(view.get("against"), dict)
        )
        if isinstance(item.get("revisions"), list)
        else (),
        misses_a_bar=item["misses_a_bar"] if isinstance(item.get("misses_a_bar"), bool) else None,
    )


def _renamed(copy: ScenarioEntry, original: ScenarioEntry) -> str:
    """`` under other ids`` when the same runs carry other ids in the copy."""
    return "" if copy.run_ids <= original.run_ids else " under other ids"


def files_once(files: Sequence[ResultsFile], role: str) -> tuple[list[ResultsFile], list[str]]:
    """The files with each content once, and a note per file left out."""
    seen: dict[str, str] = {}
    kept, notes = [], []
    for file in files:
        if file.digest in seen:
            first = seen[file.digest]
            notes.append(
                f"{file.name}: given twice among the {role} files: read once"
                if file.name == first
                else f"{file.name}: the same results as {first}: read once"
            )
            continue
        seen[file.digest] = file.name
        kept.append(file)
    return kept, notes


def runs_once(entries: Iterable[ScenarioEntry]) -> tuple[list[ScenarioEntry], list[str]]:
    """The entries with each run once, runs known by their content (not their ids, which a copy
    may change): an entry whose runs are all in another entry of the same scenario is left out
    (the one that holds more is kept).

    Raises:
        InputError: two entries of a scenario share some runs and each has runs the other
            lacks: their figures cannot be pooled without counting the shared runs twice.
    """
    kept: list[ScenarioEntry] = []
    notes: list[str] = []
    for entry in entries:
        for index, other in enumerate(kept):
            mine, theirs = entry.run_digests, other.run_digests
            shared = mine & theirs if other.key == entry.key else frozenset()
            if not shared:
                continue
            if mine <= theirs:
                notes.append(
                    f"{entry.name} in {entry.source}: its {len(mine)} runs are "
                    f"already in {other.source}{_renamed(entry, other)}: counted once"
                )
            elif theirs < mine:
                kept[index] = entry
                notes.append(
                    f"{other.name} in {other.source}: its {len(theirs)} runs are "
                    f"already in {entry.source}{_renamed(other, entry)}: counted once"
                )
            else:
                raise InputError(
                    f"{entry.name}: {len(shared)} of its runs are in both {other.source} and "
                    f"{entry.source}, and each file has runs the other lacks: pooled, the "
                    "shared runs would count twice",
                    location=str(entry.source),
                    fix="pass each run once: the file that holds all of them, or files that "
                    "share none",
                )
            break
        else:
            kept.append(entry)
    return kept, notes
