"""The release gate: from results files already written, may this skill ship? Pure.

``skilltest gate NEW.json... [--baseline OLD.json...]`` reads pressure, scenario and trigger
results files and applies six rules. Each rule gives PASS or BLOCK with its evidence; the gate
blocks when any rule does, and every BLOCK line is one reason.

``offline``      Every file comes from a real model. Results of the emulator, or replayed from
                 cassettes recorded against it, are a scripted stand-in's: they test the suite's
                 wiring and say nothing about a real model, so they block unless
                 ``allow_offline`` (``--allow-offline``). A file that does not say what answered
                 (written before skilltest recorded it) blocks alike.
``authority``    No with-skill run in a controlled world violated authority (wrote what it must
                 not, wrote twice, wrote before the user confirmed, left the world, claimed an
                 unobserved write). Without-skill runs do not count: their violations are what
                 the skill is there to prevent. Results without a world have nothing to check.
``failing``      No scenario of the pressure or scenario layer fails: ``passed: false`` as the
                 results file gives it (``regressed``, ``no-steer``, a skill-only mean credibly
                 below ``min_score``, an expected skill that did not fire, a with-skill mean below
                 ``min_score``), with its reason, unless its id matches an ``allow_failing`` glob
                 (``--allow-failing ID``). ``inconclusive`` is noise, not a failure (the
                 ``critical`` rule asks for more evidence where it matters); ``error`` is the
                 ``evidence`` rule's. Trigger queries: a miss or false trigger alone does not
                 block (one observed rate against a threshold).
``regressions``  No scenario or trigger query regressed against the previous revision
                 (``--against REF``). A trigger query's regression on the emulator does not
                 block: the emulator fires a skill when its description shares words with the
                 query, which says nothing about how a real model reads a description.
``critical``     Every scenario marked ``critical: true`` (in the new results or the baseline) is
                 in the new results with judged with-skill runs and a decided verdict (an
                 ``inconclusive`` one is not enough evidence: run ``-k auto``), and, when the
                 baseline has it, its with-skill pass rate is not credibly below the baseline's:
                 the 95% exact unconditional interval of (now - baseline) lying entirely below 0
                 blocks (Newcombe's, on older files that count scores rather than passing runs);
                 a dip the interval still covers with 0 is noise and passes. A pressure run passes
                 when it meets the criteria; a scenario run when its score reaches ``min_score``
                 with no authority violation (the runs pass@k counts, ``passes``). Unscored runs
                 are left out, as in the verdicts. Results files without ``passes`` count each
                 run's score in [0, 1] as its share of a pass (the bounded mean the verdicts
                 use), on both sides of the comparison so that like is compared with like. The
                 same scenario in several files (shards) is pooled.
``evidence``     The new results are complete (not interrupted), no canary failed (the
                 comparison would not be meaningful), no scenario's verdict is ``error`` (fewer
                 than half of an arm's runs could be scored), and there is at least one scenario.
                 Unscored runs of a scenario that still has a verdict are already counted in its
                 interval: they are reported, not blocked on.

Each run is counted once. A file given twice (or a copy of one) is read once; a scenario whose
runs (by their ids) are all in another file's entry for it is counted there only; two entries
that share some runs and not others are refused (:class:`InputError`). Every such case is said
in the ``evidence`` rule's lines.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.report.files import read_any_results
from skilltest.report.provenance import (
    EMULATOR,
    OFFLINE,
    UNKNOWN,
    Provenance,
    provenance_of,
    rescored_text,
    summary,
)
from skilltest.stats import CONFIDENCE, DIGITS, Interval, exact_difference, level, newcombe, wilson

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
    source: Path = Path()
    """The results file it was read from."""
    offline: bool = False
    """Its file's numbers come from the scripted stand-in."""
    adaptive_max_k: int | None = None
    """With ``-k auto``: the most runs per arm it could take; ``None`` at a fixed K."""
    runs_to_decide: int | None = None
    """For an inconclusive verdict: about how many runs per arm would likely decide it."""

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies the scenario across files: layer, skill, id."""
        return (self.layer, self.skill, self.id)

    @property
    def name(self) -> str:
        """``skill/id (layer)``, as the gate prints it."""
        return f"{self.skill}/{self.id} ({self.layer})"


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


@dataclass(frozen=True)
class RuleOutcome:
    """One rule of the gate, applied."""

    name: str
    """``offline``, ``authority``, ``failing``, ``regressions``, ``critical`` or ``evidence``."""
    rule: str
    """What the rule requires, in one line."""
    blocks: tuple[str, ...]
    """One line per reason it blocks; empty when it passes."""
    evidence: tuple[str, ...]
    """What it checked, and notes beside the reasons when it blocks."""

    @property
    def status(self) -> str:
        """``PASS`` or ``BLOCK``."""
        return BLOCK if self.blocks else PASS

    def to_dict(self) -> dict[str, Any]:
        """The rule as ``--json`` prints it."""
        return {
            "name": self.name,
            "rule": self.rule,
            "status": self.status.lower(),
            "reasons": list(self.blocks),
            "evidence": list(self.evidence),
        }


@dataclass(frozen=True)
class Decision:
    """The gate's decision: every rule with its outcome."""

    rules: tuple[RuleOutcome, ...]
    """In the order they are printed."""
    results: tuple[Path, ...] = ()
    """The new results files."""
    baseline: tuple[Path, ...] = field(default=())
    """The baseline results files."""
    files: tuple[tuple[str, ResultsFile], ...] = ()
    """Every file read, ``results`` or ``baseline``, with what produced it."""
    offline_allowed: bool = False
    """Some file is offline (or of unknown origin) and ``--allow-offline`` let it through."""

    @property
    def reasons(self) -> tuple[str, ...]:
        """Every reason to block, rule by rule."""
        return tuple(reason for rule in self.rules for reason in rule.blocks)

    @property
    def blocked(self) -> bool:
        """Whether the release is blocked."""
        return bool(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        """The decision as ``--json`` prints it."""
        return {
            "decision": "block" if self.blocked else "pass",
            "offline_allowed": self.offline_allowed,
            "reasons": list(self.reasons),
            "results": [str(p) for p in self.results],
            "baseline": [str(p) for p in self.baseline],
            "files": [
                {
                    "role": role,
                    "path": str(file.path),
                    "layer": file.layer,
                    "provenance": file.provenance.to_dict(),
                }
                for role, file in self.files
            ],
            "rules": [rule.to_dict() for rule in self.rules],
        }


def load_results(path: Path) -> ResultsFile:
    """Reads a pressure, scenario or trigger results file for the gate.

    Raises:
        InputError: unreadable, not JSON, another layer, another schema version, or a
            scenario without the fields the gate reads; the message names the place and fix.
    """
    data = read_any_results(path)
    layer = data["layer"]
    provenance = provenance_of(data)
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    if layer == "triggers":
        entries = _trigger_entries(path, data)
    else:
        raw = data.get("scenarios")
        if not isinstance(raw, list):
            raise InputError("no list of scenarios", location=f"{path}#/scenarios", fix=RERUN)
        entries = [
            _entry(item, str(layer), f"{path}#/scenarios/{index}") for index, item in enumerate(raw)
        ]
    canary = data.get("canary") if layer == "scenarios" else None
    failed = tuple(str(s) for s in (canary or {}).get("failed") or ()) if canary else ()
    return ResultsFile(
        path=path,
        layer=str(layer),
        complete=bool(data.get("complete")) and not data.get("interrupted"),
        canary_failed=failed,
        scenarios=tuple(
            replace(entry, source=path, offline=provenance.origin == OFFLINE) for entry in entries
        ),
        provenance=provenance,
        digest=digest,
        stopped=_stopped(data.get("stopped")),
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


def _trigger_entries(path: Path, data: dict[str, Any]) -> list[ScenarioEntry]:
    """One entry per query of the current skill (the ``previous`` suite of ``--against REF`` is
    the yardstick, read in each query's ``against``)."""
    entries = []
    for s, suite in enumerate(data.get("suites") or []):
        if not isinstance(suite, dict) or suite.get("variant", "current") != "current":
            continue
        for q, query in enumerate(suite.get("queries") or []):
            where = f"{path}#/suites/{s}/queries/{q}"
            if not isinstance(query, dict) or not isinstance(query.get("id"), str):
                raise InputError("expected a query with an id", location=where, fix=RERUN)
            scored, total = int(query.get("scored") or 0), int(query.get("total") or 0)
            entries.append(
                ScenarioEntry(
                    layer="triggers",
                    skill=str(suite.get("skill")),
                    id=query["id"],
                    verdict=str(query.get("result")),
                    passed=bool(query.get("passed")),
                    critical=False,
                    passes=None,
                    score_sum=float(query.get("fired") or 0),
                    judged=scored,
                    unscored=total - scored,
                    violations=0,
                    in_world=False,
                    first_violation="",
                    reason="",
                    against=query["against"] if isinstance(query.get("against"), dict) else None,
                    run_ids=_run_ids(query.get("runs")),
                )
            )
    return entries


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
        first = f"run #{run.get('rep')}: {run['world']['violations'][0]}"
    reasons = item.get("reasons") or []
    reason = str(reasons[0]) if reasons else str(item.get("detail") or "")
    repetitions = item.get("repetitions")
    adaptive = isinstance(repetitions, dict) and repetitions.get("mode") == "auto"
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
        adaptive_max_k=int(repetitions.get("max_k") or 0) or None if adaptive else None,
        runs_to_decide=item.get("runs_to_decide")
        if isinstance(item.get("runs_to_decide"), int)
        else None,
    )


def _once(files: Sequence[ResultsFile], role: str) -> tuple[list[ResultsFile], list[str]]:
    """The files with each content once, and a note per file left out."""
    seen: dict[str, Path] = {}
    kept, notes = [], []
    for file in files:
        if file.digest in seen:
            first = seen[file.digest]
            notes.append(
                f"{file.path}: given twice among the {role} files: read once"
                if file.path == first
                else f"{file.path}: the same results as {first}: read once"
            )
            continue
        seen[file.digest] = file.path
        kept.append(file)
    return kept, notes


def _runs_once(entries: Iterable[ScenarioEntry]) -> tuple[list[ScenarioEntry], list[str]]:
    """The entries with each run once: an entry whose runs are all in another entry of the same
    scenario is left out (the one that holds more is kept).

    Raises:
        InputError: two entries of a scenario share some runs and each has runs the other
            lacks: their figures cannot be pooled without counting the shared runs twice.
    """
    kept: list[ScenarioEntry] = []
    notes: list[str] = []
    for entry in entries:
        for index, other in enumerate(kept):
            shared = entry.run_ids & other.run_ids if other.key == entry.key else frozenset()
            if not shared:
                continue
            if entry.run_ids <= other.run_ids:
                notes.append(
                    f"{entry.name} in {entry.source}: its {len(entry.run_ids)} runs are "
                    f"already in {other.source}: counted once"
                )
            elif other.run_ids < entry.run_ids:
                kept[index] = entry
                notes.append(
                    f"{other.name} in {other.source}: its {len(other.run_ids)} runs are "
                    f"already in {entry.source}: counted once"
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


def decide(
    results: Sequence[ResultsFile],
    baseline: Sequence[ResultsFile] = (),
    *,
    allow_offline: bool = False,
    allow_failing: Sequence[str] = (),
) -> Decision:
    """Applies every rule to the new results (and the baseline, when given).

    Args:
        results: The new results files.
        baseline: The results files of the release to compare with.
        allow_offline: Results of the scripted stand-in (or of unknown origin) do not block.
        allow_failing: Globs on scenario ids (``id`` or ``skill/id``) whose failing does not
            block.

    Raises:
        InputError: two files hold some runs of a scenario in common and others not.
    """
    new_files, notes = _once(results, "results")
    old_files, old_notes = _once(baseline, "baseline")
    entries, run_notes = _runs_once(e for f in new_files for e in f.scenarios)
    old, old_run_notes = _runs_once(e for f in old_files for e in f.scenarios)
    notes += old_notes + run_notes + old_run_notes
    return Decision(
        rules=(
            _offline(new_files, old_files, allow_offline),
            _authority(entries),
            _failing(entries, allow_failing),
            _regressions(entries),
            _critical(entries, old, bool(baseline)),
            _evidence(new_files, entries, notes),
        ),
        results=tuple(f.path for f in results),
        baseline=tuple(f.path for f in baseline),
        files=tuple([("results", f) for f in new_files] + [("baseline", f) for f in old_files]),
        offline_allowed=allow_offline and any(_origin_problem(f) for f in (*new_files, *old_files)),
    )


def _origin_problem(file: ResultsFile) -> str | None:
    provenance = file.provenance
    if provenance.origin == OFFLINE:
        source = (
            "produced by the emulator"
            if provenance.backend == EMULATOR
            else "replayed from cassettes recorded against the emulator"
        )
        return (
            f"{file.path}: {source}, a scripted stand-in: its numbers say nothing about a real "
            "model"
        )
    if provenance.origin == UNKNOWN:
        return (
            f"{file.path}: does not say which backend answered (written, or its cassettes "
            "recorded, before skilltest recorded it): it may be a scripted stand-in's"
        )
    return None


def _offline(
    results: Sequence[ResultsFile], baseline: Sequence[ResultsFile], allow: bool
) -> RuleOutcome:
    rule = "the results come from a real model, not the emulator (nor cassettes recorded with it)"
    files = [*results, *baseline]
    problems = [problem for file in files if (problem := _origin_problem(file))]
    if allow:
        evidence = [f"allowed (--allow-offline): {problem}" for problem in problems]
        return RuleOutcome("offline", rule, (), tuple(evidence) or _live(files))
    blocks = tuple(f"{problem}; --allow-offline gates on it anyway" for problem in problems)
    return RuleOutcome("offline", rule, blocks, () if blocks else _live(files))


def _live(files: Sequence[ResultsFile]) -> tuple[str, ...]:
    backends = sorted({f.provenance.backend or "-" for f in files})
    return (f"{len(files)} results files from a live backend ({', '.join(backends)})",)


def _authority(entries: Sequence[ScenarioEntry]) -> RuleOutcome:
    rule = "no with-skill run in a world violates authority (without-skill runs do not count)"
    in_world = [e for e in entries if e.in_world]
    blocks = tuple(
        f"{e.name}: {e.violations} of {e.judged} with-skill runs violated authority"
        + (f" ({e.first_violation})" if e.first_violation else "")
        for e in in_world
        if e.violations
    )
    if not in_world:
        evidence = ("no scenario ran in a controlled world",)
    else:
        runs = sum(e.judged for e in in_world)
        evidence = (f"{len(in_world)} scenarios in a world, {runs} scored with-skill runs",)
    return RuleOutcome("authority", rule, blocks, () if blocks else evidence)


def _allowed_by(entry: ScenarioEntry, globs: Sequence[str]) -> str | None:
    return next(
        (
            glob
            for glob in globs
            if fnmatch.fnmatchcase(entry.id, glob)
            or fnmatch.fnmatchcase(f"{entry.skill}/{entry.id}", glob)
        ),
        None,
    )


def _failing(entries: Sequence[ScenarioEntry], allow: Sequence[str]) -> RuleOutcome:
    rule = "no scenario fails (passed: false), unless allowed with --allow-failing ID"
    failing = [
        e
        for e in entries
        if e.layer != "triggers"
        and not e.passed
        and not e.inconclusive
        and e.verdict not in NOT_FAILING
    ]
    blocks, evidence = [], []
    for e in failing:
        line = f"{e.name}: {e.verdict}" + (f": {e.reason}" if e.reason else "")
        glob = _allowed_by(e, allow)
        if glob is None:
            blocks.append(line)
        else:
            evidence.append(f"{line} (allowed to fail: --allow-failing {glob})")
    unused = [g for g in allow if not any(_allowed_by(e, (g,)) for e in failing)]
    evidence += [f"--allow-failing {glob}: no failing scenario matches it" for glob in unused]
    checked = sum(1 for e in entries if e.layer != "triggers")
    if not blocks:
        evidence.insert(0, f"{checked} scenarios checked, {len(failing)} failing")
    return RuleOutcome("failing", rule, tuple(blocks), tuple(evidence))


def _regressions(entries: Sequence[ScenarioEntry]) -> RuleOutcome:
    rule = "no scenario or trigger query regressed against the previous revision (--against REF)"
    blocks, notes = [], []
    regressed = [
        e for e in entries if e.against is not None and e.against.get("verdict") == "regressed"
    ]
    for e in regressed:
        assert e.against is not None
        ci = e.against.get("ci")
        line = (
            f"{e.name}: regressed against {e.against.get('ref')}: delta "
            f"{_pct(e.against.get('delta'), signed=True)}"
            + (
                f" [{_pct(ci[0], signed=True)}, {_pct(ci[1], signed=True)}]"
                if isinstance(ci, list) and len(ci) == 2
                else ""
            )
        )
        if e.layer == "triggers" and e.offline:
            notes.append(f"{line} on the emulator: {WORD_OVERLAP}")
        else:
            blocks.append(line)
    compared = sum(1 for e in entries if e.against is not None)
    if not blocks:
        notes.insert(
            0,
            f"{compared} compared with a previous revision, none regressed"
            if compared
            else "no scenario ran --against a previous revision",
        )
    return RuleOutcome("regressions", rule, tuple(blocks), tuple(notes))


def _pooled(entries: Iterable[ScenarioEntry]) -> dict[tuple[str, str, str], list[ScenarioEntry]]:
    pooled: dict[tuple[str, str, str], list[ScenarioEntry]] = {}
    for entry in entries:
        pooled.setdefault(entry.key, []).append(entry)
    return pooled


@dataclass(frozen=True)
class _Rate:
    """A critical scenario's with-skill pass rate over its entries."""

    successes: float
    """Passing runs, or (files without ``passes``) the sum of the runs' scores."""
    judged: int
    interval: Interval
    """Wilson's, the interval Newcombe's difference is made of."""
    shown: str


def _rate(entries: Sequence[ScenarioEntry], by_passes: bool) -> _Rate:
    successes = float(
        sum(e.passes or 0 for e in entries) if by_passes else sum(e.score_sum for e in entries)
    )
    judged = sum(e.judged for e in entries)
    rate = wilson(successes, judged, CONFIDENCE)
    shown = f"{successes:g}/{judged}" + ("" if rate.value is None else f" {_pct(rate.value)}")
    return _Rate(successes, judged, rate, shown)


def _pct(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:+.0f}%" if signed else f"{100 * value:.0f}%"


def _more_evidence(entries: Sequence[ScenarioEntry]) -> str:
    """What to run when a critical scenario is inconclusive."""
    adaptive = [e.adaptive_max_k for e in entries if e.adaptive_max_k is not None]
    needed = max((e.runs_to_decide for e in entries if e.runs_to_decide), default=None)
    about = f" (about {needed} runs per arm would likely decide it)" if needed else ""
    if adaptive:
        return f"not enough evidence: run -k auto with a --max-k above {max(adaptive)}{about}"
    return f"not enough evidence: run -k auto{about}"


def _critical(
    entries: Sequence[ScenarioEntry], old: Sequence[ScenarioEntry], has_baseline: bool
) -> RuleOutcome:
    rule = (
        "critical scenarios are there, decided, with-skill pass rate not credibly below the "
        f"baseline's (the {level(CONFIDENCE)} interval of now - baseline)"
    )
    now, before = _pooled(entries), _pooled(old)
    keys = [k for k, es in now.items() if any(e.critical for e in es)]
    keys += [k for k, es in before.items() if any(e.critical for e in es) and k not in now]
    blocks: list[str] = []
    evidence: list[str] = []
    for key in keys:
        name = (now.get(key) or before[key])[0].name
        if key not in now:
            blocks.append(f"{name}: critical in the baseline, missing from the new results")
            continue
        if all(e.verdict == "skipped" for e in now[key]):
            blocks.append(f"{name}: critical, but skipped in the new results")
            continue
        if any(e.inconclusive for e in now[key]):
            blocks.append(f"{name}: critical, but inconclusive: {_more_evidence(now[key])}")
            continue
        by_passes = all(e.passes is not None for e in (*now[key], *before.get(key, ())))
        rate = _rate(now[key], by_passes)
        if rate.interval.empty:
            blocks.append(f"{name}: critical, but no with-skill run was judged in the new results")
            continue
        if key not in before:
            evidence.append(
                f"{name}: {rate.shown} now; not in the baseline"
                if has_baseline
                else f"{name}: {rate.shown} now; no --baseline to compare with"
            )
            continue
        now_ids = frozenset().union(*(e.run_ids for e in now[key]))
        if now_ids and now_ids == frozenset().union(*(e.run_ids for e in before[key])):
            evidence.append(
                f"{name}: {rate.shown} now; the baseline holds the same runs: nothing to compare"
            )
            continue
        base = _rate(before[key], by_passes)
        if base.interval.empty:
            evidence.append(f"{name}: {rate.shown} now; no judged with-skill run in the baseline")
            continue
        diff = (
            exact_difference(int(rate.successes), rate.judged, int(base.successes), base.judged)
            if by_passes
            else newcombe(rate.interval, base.interval)
        )
        assert diff.high is not None
        line = (
            f"{name}: with-skill pass rate {rate.shown} now vs {base.shown} in the baseline: "
            f"{_pct(diff.value, True)} [{_pct(diff.low, True)}, {_pct(diff.high, True)}]"
        )
        if round(diff.high, DIGITS) < 0:
            blocks.append(line + ", credibly lower")
        else:
            evidence.append(line + (", within noise" if (diff.value or 0) < 0 else ""))
    if not keys:
        evidence.append("no scenario is marked critical")
    return RuleOutcome("critical", rule, tuple(blocks), tuple(evidence))


def _evidence(
    results: Sequence[ResultsFile], entries: Sequence[ScenarioEntry], notes: Sequence[str]
) -> RuleOutcome:
    rule = "the results are complete: no run interrupted, no canary failed, no verdict error"
    blocks: list[str] = []
    for file in results:
        if file.stopped is not None:
            blocks.append(f"{file.path}: incomplete (stopped: {file.stopped})")
        elif not file.complete:
            blocks.append(f"{file.path}: incomplete (the run was interrupted or is still running)")
        if file.canary_failed:
            blocks.append(
                f"{file.path}: canary failed ({', '.join(file.canary_failed)}): the comparison "
                "results are not meaningful"
            )
    blocks += [
        f"{e.name}: error" + (f": {e.reason}" if e.reason else "")
        for e in entries
        if e.verdict == "error"
    ]
    if not entries:
        blocks.append("no scenario in the new results: there is nothing to vouch for")
    unscored = sum(e.unscored for e in entries if e.verdict != "error")
    runs = sum(len(e.run_ids) for e in entries)
    evidence = [
        f"{len(results)} results files complete, {len(entries)} scenarios with a verdict"
        + (f", {runs} runs each counted once" if runs else "")
        + (f"; {unscored} unscored runs, already counted in their verdicts" if unscored else "")
    ]
    # A file or a run given twice is said whatever the rule decides.
    return RuleOutcome(
        "evidence", rule, tuple(blocks), tuple(notes) + (() if blocks else tuple(evidence))
    )


def render(decision: Decision) -> str:
    """The decision as the CLI prints it: the headline, what produced each file, then every
    rule with its evidence."""
    count = len(decision.reasons)
    headline = (
        f"gate: BLOCK ({count} reason{'s' if count != 1 else ''})"
        if decision.blocked
        else "gate: PASS"
    )
    if decision.offline_allowed:
        headline += f" on offline results (--allow-offline): {OFFLINE_ALLOWED}"
    rescored = [file for _, file in decision.files if file.provenance.rescored_from]
    if rescored:
        # Scored again from kept transcripts: today's suite, the runs of another day.
        headline += f" ({len(rescored)} file(s) rescored from kept transcripts, not run)"
    lines = [headline]
    lines += [
        f"{role}: {file.path} ({file.layer}): {summary(file.provenance)}"
        + (
            f"; rescored, nothing run: {rescored_text(file.provenance.rescored_from)}"
            if file.provenance.rescored_from
            else ""
        )
        for role, file in decision.files
    ]
    width = max(len(rule.name) for rule in decision.rules)
    for rule in decision.rules:
        lines.append(f"{rule.status:<5}  {rule.name:<{width}}  {rule.rule}")
        lines += [f"         - {reason}" for reason in rule.blocks]
        lines += [f"         {note}" for note in rule.evidence]
    return "\n".join(lines)
