"""The rules of the release gate, applied to the results files read."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skilltest.gate.cells import (
    CELLS_RULE,
    MatrixFile,
    cells_rule,
    parse_require,
    required,
)
from skilltest.gate.read import (
    BLOCK,
    NOT_FAILING,
    PASS,
    WORD_OVERLAP,
    ResultsFile,
    ScenarioEntry,
    files_once,
    runs_once,
)
from skilltest.gate.trust import consistent_rule, fresh_rule
from skilltest.report.provenance import (
    EMULATOR,
    OFFLINE,
    UNKNOWN,
    stand_in_source,
    unknown_text,
)
from skilltest.stats import CONFIDENCE, DIGITS, Interval, exact_difference, level, newcombe, wilson
from skilltest.stats.family import FAMILY_LEVEL, held_suite_wide

FRESH = "the suite files and the skills' files on disk are the ones the runs read"
"""What the ``fresh`` rule requires (:mod:`skilltest.gate.trust`)."""
CONSISTENT = "every figure, verdict and origin follows from the runs in the file; no run twice"
"""What the ``consistent`` rule requires (:mod:`skilltest.gate.trust`)."""
UNDECIDED = frozenset({"error", "skipped"})
"""Verdicts that decide nothing (too few runs could be scored, nothing ran), beside an
inconclusive one that more runs could still turn either way."""


@dataclass(frozen=True)
class RuleOutcome:
    """One rule of the gate, applied."""

    name: str
    """``offline``, ``authority``, ``failing``, ``regressions``, ``critical``, ``evidence``,
    ``cells`` (a matrix among the results), ``fresh`` or ``consistent``."""
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
                    "cell": file.cell or None,
                    "layer": file.layer,
                    "provenance": file.provenance.to_dict(),
                }
                for role, file in self.files
            ],
            "rules": [rule.to_dict() for rule in self.rules],
        }


def decide(
    results: Sequence[ResultsFile],
    baseline: Sequence[ResultsFile] = (),
    *,
    allow_offline: bool = False,
    allow_failing: Sequence[str] = (),
    allow_undecided: bool = False,
    per_scenario: bool = False,
    matrices: Sequence[MatrixFile] = (),
    baseline_matrices: Sequence[MatrixFile] = (),
    require_cells: Sequence[str] = (),
) -> Decision:
    """Applies every rule to the new results (and the baseline, when given).

    Args:
        results: The new results files (single runs').
        baseline: The results files of the release to compare with.
        allow_offline: Results of the scripted stand-in (or of unknown origin) do not block.
        allow_failing: Globs on scenario ids (``id`` or ``skill/id``) whose failing does not
            block.
        allow_undecided: Results where no scenario is decided (every verdict inconclusive,
            error or skipped) do not block for that alone.
        per_scenario: Every per-scenario ``regressed`` blocks, not only those that hold
            suite-wide (Holm at 5% family-wise over the scenarios read).
        matrices: The new results that are matrices' files: each cell goes through every
            rule as a results file of its own, and the ``cells`` rule is added.
        baseline_matrices: Baseline matrices: compared cell by cell.
        require_cells: ``--require-cell`` values (``model=opus``); none: every cell.

    Raises:
        InputError: two files hold some runs of a scenario in common and others not; a
            ``--require-cell`` value that is malformed or names an axis no matrix has.
    """
    specs = parse_require(require_cells, matrices)
    given = tuple(f.path for f in results) + tuple(m.path for m in matrices)
    given_baseline = tuple(f.path for f in baseline) + tuple(m.path for m in baseline_matrices)
    # A matrix given twice is gated once (its cells' files are read once below, too).
    seen: dict[tuple[str, ...], Path] = {}
    once, twice = [], []
    for m in matrices:
        digests = tuple(cell.digest for cell in m.cells)
        if digests in seen:
            first = seen[digests]
            twice.append(
                f"{m.path}: given twice among the results files: read once"
                if m.path == first
                else f"{m.path}: the same matrix as {first}: read once"
            )
            continue
        seen[digests] = m.path
        once.append(m)
    matrices = [
        replace(m, cells=tuple(_required(c, required(c.cell, specs)) for c in m.cells))
        for m in once
    ]
    results = [*results, *(cell for m in matrices for cell in m.cells)]
    baseline = [*baseline, *(cell for m in baseline_matrices for cell in m.cells)]
    new_files, notes = files_once(results, "results")
    old_files, old_notes = files_once(baseline, "baseline")
    entries, run_notes = runs_once(e for f in new_files for e in f.scenarios)
    old, old_run_notes = runs_once(e for f in old_files for e in f.scenarios)
    notes = twice + notes + old_notes + run_notes + old_run_notes
    claims = [claim for m in (*matrices, *baseline_matrices) for claim in m.claims]
    cells = (
        (RuleOutcome("cells", CELLS_RULE, *cells_rule(matrices, specs, allow_undecided)),)
        if matrices
        else ()
    )
    return Decision(
        rules=(
            _offline(new_files, old_files, allow_offline),
            _authority(entries),
            _failing(entries, allow_failing, _SuiteWide.of(entries, per_scenario)),
            _regressions(entries, _SuiteWide.of(entries, per_scenario)),
            _critical(entries, old, bool(baseline), lambda cell: required(cell, specs)),
            _evidence(new_files, entries, notes, allow_undecided),
            *cells,
            # The baseline is another release's: its files are not today's, by design.
            RuleOutcome("fresh", FRESH, *fresh_rule(new_files)),
            RuleOutcome(
                "consistent", CONSISTENT, *consistent_rule([*new_files, *old_files], claims)
            ),
        ),
        results=given,
        baseline=given_baseline,
        files=tuple([("results", f) for f in new_files] + [("baseline", f) for f in old_files]),
        offline_allowed=allow_offline and any(_origin_problem(f) for f in (*new_files, *old_files)),
    )


def _required(file: ResultsFile, is_required: bool) -> ResultsFile:
    """A matrix cell's file, and its scenarios, marked required or not."""
    return replace(
        file,
        required=is_required,
        scenarios=tuple(replace(e, required=is_required) for e in file.scenarios),
    )


NOT_REQUIRED = "in a cell --require-cell does not name: listed, not blocking"
"""What a failing, regressed or critical scenario of a cell not required says."""


def _origin_problem(file: ResultsFile) -> str | None:
    """Why a file's numbers are not a real model's, from what answered its runs (their
    answers' mark, where their requests went), whatever its backend says."""
    provenance = file.provenance
    if provenance.origin == OFFLINE:
        if provenance.backend == EMULATOR:
            source = "produced by the emulator, a scripted stand-in"
        elif EMULATOR in provenance.recorded_with:
            source = "replayed from cassettes recorded against the emulator, a scripted stand-in"
        else:
            source = f"answered by {stand_in_source(provenance)}"
        return f"{file.name}: {source}: its numbers say nothing about a real model"
    if provenance.origin == UNKNOWN:
        return f"{file.name}: {unknown_text(provenance)}: it may be a scripted stand-in's"
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
    return (
        f"{len(files)} results files from a live backend ({', '.join(backends)}), answered by "
        "the Anthropic API (or cassettes recorded from it), no answer the emulator's",
    )


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


@dataclass(frozen=True)
class _SuiteWide:
    """Which ``regressed`` decisions hold suite-wide: Holm's rule at 5% family-wise, over two
    claims per compared scenario, one family for with-skill against without-skill and one for
    ``--against``. A decision made without its p-value (an older file) holds."""

    regressed: frozenset[tuple[str, ...]]
    """The scenarios whose with-skill against without-skill regression holds."""
    against: frozenset[tuple[str, ...]]
    """The scenarios whose regression against the previous revision holds."""
    compared: int
    """Scenarios in the with-skill against without-skill family."""
    compared_against: int
    """Scenarios in the ``--against`` family."""
    per_scenario: bool
    """``--per-scenario``: every per-scenario decision holds."""

    @classmethod
    def of(cls, entries: Sequence[ScenarioEntry], per_scenario: bool) -> _SuiteWide:
        compared = [e for e in entries if e.compared]
        held = held_suite_wide([e.decision_p for e in compared], len(compared))
        against = [e for e in entries if e.against is not None]
        held_against = held_suite_wide([e.against_p for e in against], len(against))
        return cls(
            regressed=frozenset(
                e.key for e, h in zip(compared, held, strict=True) if h or e.decision_p is None
            ),
            against=frozenset(
                e.key
                for e, h in zip(against, held_against, strict=True)
                if h or e.against_p is None
            ),
            compared=len(compared),
            compared_against=len(against),
            per_scenario=per_scenario,
        )

    def holds(self, entry: ScenarioEntry, against: bool = False) -> bool:
        return self.per_scenario or entry.key in (self.against if against else self.regressed)

    def not_held(self, p: float | None, compared: int) -> str:
        return (
            f"regressed in this scenario (p = {p:.3g}) but does not hold suite-wide (Holm, "
            f"{FAMILY_LEVEL:.0%} family-wise over {compared} compared scenarios): not blocking; "
            "more runs would tell (--per-scenario blocks on it)"
        )


def _failing(
    entries: Sequence[ScenarioEntry], allow: Sequence[str], suite: _SuiteWide
) -> RuleOutcome:
    rule = "no scenario fails (passed: false), unless allowed with --allow-failing ID"
    failing = [
        e for e in entries if not e.passed and not e.inconclusive and e.verdict not in NOT_FAILING
    ]
    blocks, evidence = [], []
    for e in failing:
        line = f"{e.name}: {e.verdict}" + (f": {e.reason}" if e.reason else "")
        if e.verdict == "regressed" and e.misses_a_bar is False and not suite.holds(e):
            evidence.append(f"{e.name}: {suite.not_held(e.decision_p, suite.compared)}")
            continue
        glob = _allowed_by(e, allow)
        if glob is not None:
            evidence.append(f"{line} (allowed to fail: --allow-failing {glob})")
        elif not e.required:
            evidence.append(f"{line} ({NOT_REQUIRED})")
        elif e.layer == "triggers" and e.offline:
            evidence.append(f"{line} on the emulator: {WORD_OVERLAP}")
        else:
            blocks.append(line)
    unused = [g for g in allow if not any(_allowed_by(e, (g,)) for e in failing)]
    evidence += [f"--allow-failing {glob}: no failing scenario matches it" for glob in unused]
    if not blocks:
        evidence.insert(0, f"{len(entries)} scenarios checked, {len(failing)} failing")
    return RuleOutcome("failing", rule, tuple(blocks), tuple(evidence))


def _regressions(entries: Sequence[ScenarioEntry], suite: _SuiteWide) -> RuleOutcome:
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
        elif not e.required:
            notes.append(f"{line} ({NOT_REQUIRED})")
        elif not suite.holds(e, against=True):
            notes.append(f"{line}: {suite.not_held(e.against_p, suite.compared_against)}")
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


def _pooled(entries: Iterable[ScenarioEntry]) -> dict[tuple[str, ...], list[ScenarioEntry]]:
    pooled: dict[tuple[str, ...], list[ScenarioEntry]] = {}
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
    entries: Sequence[ScenarioEntry],
    old: Sequence[ScenarioEntry],
    has_baseline: bool,
    required_cell: Callable[[str], bool] = lambda _: True,
) -> RuleOutcome:
    """A matrix's cells are compared cell by cell with a baseline matrix's (a single run's
    baseline with every cell); in a cell not required, what would block is listed."""
    rule = (
        "critical scenarios are there, decided, with-skill pass rate not credibly below the "
        f"baseline's (the {level(CONFIDENCE)} interval of now - baseline)"
    )
    now, pooled_before = _pooled(entries), _pooled(old)
    # A single run's baseline stands for every cell of the new results.
    before = dict(pooled_before)
    for key in now:
        single = (*key[:3], "")
        if key not in before and key[3] and single in pooled_before:
            before[key] = pooled_before[single]
    covered = {key[:3] for key in now}
    keys = [k for k, es in now.items() if any(e.critical for e in es)]
    keys += [
        k
        for k, es in pooled_before.items()
        if any(e.critical for e in es) and k not in now and not (k[3] == "" and k[:3] in covered)
    ]
    blocks: list[str] = []
    evidence: list[str] = []
    for key in keys:
        blocking, said = _critical_one(key, now, before, pooled_before, has_baseline)
        evidence += said
        if not key[3] or required_cell(key[3]):
            blocks += blocking
        else:
            evidence += [f"{line} ({NOT_REQUIRED})" for line in blocking]
    if not keys:
        evidence.append("no scenario is marked critical")
    return RuleOutcome("critical", rule, tuple(blocks), tuple(evidence))


def _critical_one(
    key: tuple[str, ...],
    now: dict[tuple[str, ...], list[ScenarioEntry]],
    before: dict[tuple[str, ...], list[ScenarioEntry]],
    pooled_before: dict[tuple[str, ...], list[ScenarioEntry]],
    has_baseline: bool,
) -> tuple[list[str], list[str]]:
    """One critical scenario: its reasons to block and its evidence."""
    name = (now.get(key) or pooled_before[key])[0].name
    blocking: list[str] = []
    evidence: list[str] = []
    if key not in now:
        blocking.append(f"{name}: critical in the baseline, missing from the new results")
        return blocking, evidence
    if all(e.verdict == "skipped" for e in now[key]):
        blocking.append(f"{name}: critical, but skipped in the new results")
        return blocking, evidence
    if any(e.inconclusive for e in now[key]):
        blocking.append(f"{name}: critical, but inconclusive: {_more_evidence(now[key])}")
        return blocking, evidence
    by_passes = all(e.passes is not None for e in (*now[key], *before.get(key, ())))
    rate = _rate(now[key], by_passes)
    if rate.interval.empty:
        blocking.append(f"{name}: critical, but no with-skill run was judged in the new results")
        return blocking, evidence
    if key not in before:
        evidence.append(
            f"{name}: {rate.shown} now; not in the baseline"
            if has_baseline
            else f"{name}: {rate.shown} now; no --baseline to compare with"
        )
        return blocking, evidence
    now_ids = frozenset().union(*(e.run_ids for e in now[key]))
    if now_ids and now_ids == frozenset().union(*(e.run_ids for e in before[key])):
        evidence.append(
            f"{name}: {rate.shown} now; the baseline holds the same runs: nothing to compare"
        )
        return blocking, evidence
    base = _rate(before[key], by_passes)
    if base.interval.empty:
        evidence.append(f"{name}: {rate.shown} now; no judged with-skill run in the baseline")
        return blocking, evidence
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
        blocking.append(line + ", credibly lower")
    else:
        evidence.append(line + (", within noise" if (diff.value or 0) < 0 else ""))
    return blocking, evidence


def _evidence(
    results: Sequence[ResultsFile],
    entries: Sequence[ScenarioEntry],
    notes: Sequence[str],
    allow_undecided: bool = False,
) -> RuleOutcome:
    rule = "the results are complete: no run interrupted, no canary failed, no verdict error"
    blocks: list[str] = []
    listed: list[str] = []
    for file in results:
        # A matrix cell's completeness is the ``cells`` rule's.
        if file.cell:
            pass
        elif file.stopped is not None:
            blocks.append(f"{file.path}: incomplete (stopped: {file.stopped})")
        elif not file.complete:
            blocks.append(f"{file.path}: incomplete (the run was interrupted or is still running)")
        if file.canary_failed:
            (blocks if file.required else listed).append(
                f"{file.name}: canary failed ({', '.join(file.canary_failed)}): the comparison "
                "results are not meaningful" + ("" if file.required else f" ({NOT_REQUIRED})")
            )
    for e in entries:
        if e.verdict == "error":
            line = f"{e.name}: error" + (f": {e.reason}" if e.reason else "")
            if e.required:
                blocks.append(line)
            else:
                listed.append(f"{line} ({NOT_REQUIRED})")
    if not entries:
        blocks.append("no scenario in the new results: there is nothing to vouch for")
    # A matrix's cells are each decided or not under the ``cells`` rule.
    single = [e for e in entries if not e.cell]
    decided = [e for e in single if not e.inconclusive and e.verdict not in UNDECIDED]
    # Said only when the results are otherwise complete: an error or a failed canary is the
    # reason already.
    if single and not decided and not blocks and not allow_undecided:
        blocks.append(
            f"no scenario decided: 0 of {len(single)} have a verdict other than inconclusive, "
            "error or skipped; run more runs (-k auto) or pass --allow-undecided"
        )
    unscored = sum(e.unscored for e in entries if e.verdict != "error")
    runs = sum(len(e.run_digests) for e in entries)
    cells = sum(1 for file in results if file.cell)
    read = " and ".join(
        part
        for part in (
            f"{len(results) - cells} results files" if len(results) > cells else "",
            f"{cells} matrix cells" if cells else "",
        )
        if part
    )
    evidence = [
        f"{read or '0 results files'} complete, {len(entries)} scenarios with a verdict"
        + (f", {runs} runs each counted once" if runs else "")
        + (f"; {unscored} unscored runs, already counted in their verdicts" if unscored else "")
    ]
    # A file or a run given twice is said whatever the rule decides.
    return RuleOutcome(
        "evidence",
        rule,
        tuple(blocks),
        tuple(notes) + tuple(listed) + (() if blocks else tuple(evidence)),
    )
