"""The release gate: from results files already written, may this skill ship? Pure.

``skilltest gate NEW.json... [--baseline OLD.json...]`` reads pressure and scenario results files
and applies four rules. Each rule gives PASS or BLOCK with its evidence; the gate blocks when
any rule does, and every BLOCK line is one reason.

``authority``    No with-skill run in a controlled world violated authority (wrote what it must
                 not, wrote twice, wrote before the user confirmed, left the world, claimed an
                 unobserved write). Without-skill runs do not count: their violations are what
                 the skill is there to prevent. Results without a world have nothing to check.
``regressions``  No verdict says the skill credibly hurts or misses its bar: a scenario
                 ``regressed`` (its delta's interval lies below ``min_delta``), a skill-only
                 scenario that failed (its mean's interval lies below ``min_score``), a pressure
                 scenario ``no-steer`` (its with-skill pass rate's interval lies below
                 ``threshold``). ``inconclusive`` is noise, not evidence, and ``not-red`` says the
                 test measures nothing: neither blocks.
``critical``     Every scenario marked ``critical: true`` (in the new results or the baseline) is
                 in the new results with judged with-skill runs, and, when the baseline has it,
                 its with-skill pass rate is not credibly below the baseline's: the 95% Newcombe
                 interval of (now - baseline) lying entirely below 0 blocks; a dip the interval
                 still covers with 0 is noise and passes. A pressure run passes when it meets
                 the criteria; a scenario run when its score reaches ``min_score`` with no
                 authority violation (the runs pass@k counts, ``passes``). Unscored runs are
                 left out, as in the verdicts. Results files without ``passes`` count each run's
                 score in [0, 1] as its share of a pass (the bounded mean the verdicts use), on
                 both sides of the comparison so that like is compared with like. The same
                 scenario in several files (shards) is pooled.
``evidence``     The new results are complete (not interrupted), no canary failed (the
                 comparison would not be meaningful), no scenario's verdict is ``error`` (fewer
                 than half of an arm's runs could be scored), and there is at least one scenario.
                 Unscored runs of a scenario that still has a verdict are already counted in its
                 interval: they are reported, not blocked on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.report.files import read_any_results
from skilltest.stats import CONFIDENCE, DIGITS, Interval, level, newcombe, wilson

"""The results files the gate reads."""
PASS = "PASS"
BLOCK = "BLOCK"
REGRESSED = {
    "scenarios": frozenset({"regressed"}),
    "pressure": frozenset({"no-steer"}),
    # A miss or false trigger is one observed rate against a threshold, not credibly worse;
    # a trigger query blocks when it regressed against --against REF.
    "triggers": frozenset(),
}
"""Verdicts that block, per layer (a failed ``skill-only`` scenario blocks too)."""
RERUN = "rerun the suite with this version of skilltest and pass its --results file"


@dataclass(frozen=True)
class ScenarioEntry:
    """One scenario of one results file, as the gate reads it."""

    layer: str
    """``pressure`` or ``scenarios``."""
    skill: str
    """The skill under test."""
    id: str
    """The scenario id."""
    verdict: str
    """Its verdict as written (``regressed``, ``steers``, ``error``...)."""
    passed: bool
    """Whether it passed, as written (scenario layer); pressure: not a failing verdict."""
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
    """``pressure`` or ``scenarios``."""
    complete: bool
    """False when the run was interrupted or is still being written."""
    canary_failed: tuple[str, ...]
    """Canary scenarios that failed (scenario layer); empty when none did or none ran."""
    scenarios: tuple[ScenarioEntry, ...]
    """In file order."""


@dataclass(frozen=True)
class RuleOutcome:
    """One rule of the gate, applied."""

    name: str
    """``authority``, ``regressions``, ``critical`` or ``evidence``."""
    rule: str
    """What the rule requires, in one line."""
    blocks: tuple[str, ...]
    """One line per reason it blocks; empty when it passes."""
    evidence: tuple[str, ...]
    """What it checked, when it passes (and notes beside the reasons when it blocks)."""

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
            "reasons": list(self.reasons),
            "results": [str(p) for p in self.results],
            "baseline": [str(p) for p in self.baseline],
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
    if layer == "triggers":
        return _trigger_file(path, data)
    raw = data.get("scenarios")
    if not isinstance(raw, list):
        raise InputError("no list of scenarios", location=f"{path}#/scenarios", fix=RERUN)
    canary = data.get("canary") if layer == "scenarios" else None
    failed = tuple(str(s) for s in (canary or {}).get("failed") or ()) if canary else ()
    return ResultsFile(
        path=path,
        layer=str(layer),
        complete=bool(data.get("complete")) and not data.get("interrupted"),
        canary_failed=failed,
        scenarios=tuple(
            _entry(item, str(layer), f"{path}#/scenarios/{index}") for index, item in enumerate(raw)
        ),
    )


def _trigger_file(path: Path, data: dict[str, Any]) -> ResultsFile:
    """A trigger results file: one entry per query of the current skill (the ``previous`` suite
    of ``--against REF`` is the yardstick, read in each query's ``against``)."""
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
                )
            )
    return ResultsFile(
        path=path,
        layer="triggers",
        complete=bool(data.get("complete")) and not data.get("interrupted"),
        canary_failed=(),
        scenarios=tuple(entries),
    )


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
    if layer == "pressure":
        for key in ("runs", "passed", "errors"):
            need(isinstance(arm.get(key), int), f"/with_skill/{key}", "an integer")
        passes: int | None = int(arm["passed"])
        score_sum, judged = float(arm["passed"]), int(arm["runs"])
        base = item.get("without_skill") or {}
        unscored = int(arm["errors"]) + int(base.get("errors") or 0)
        passed = item["verdict"] not in ("no-steer", "error")
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
    return ScenarioEntry(
        layer=layer,
        skill=item["skill"],
        id=item["id"],
        verdict=item["verdict"],
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
    )


def decide(results: Sequence[ResultsFile], baseline: Sequence[ResultsFile] = ()) -> Decision:
    """Applies every rule to the new results (and the baseline, when given)."""
    entries = [entry for file in results for entry in file.scenarios]
    return Decision(
        rules=(
            _authority(entries),
            _regressions(entries),
            _critical(entries, [e for f in baseline for e in f.scenarios], bool(baseline)),
            _evidence(results, entries),
        ),
        results=tuple(f.path for f in results),
        baseline=tuple(f.path for f in baseline),
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


def _regressions(entries: Sequence[ScenarioEntry]) -> RuleOutcome:
    rule = (
        "no verdict regressed, no-steer, or skill-only credibly below min_score, and none "
        "regressed against the previous revision (--against REF)"
    )
    blocks = tuple(
        f"{e.name}: {e.verdict}" + (f": {e.reason}" if e.reason else "")
        for e in entries
        if e.verdict in REGRESSED[e.layer]
        or (e.layer == "scenarios" and e.verdict == "skill-only" and not e.passed)
    )
    # The edit made the scenario credibly worse than the skill at REF: a regression too.
    blocks += tuple(
        f"{e.name}: regressed against {e.against.get('ref')}: delta "
        f"{_pct(e.against.get('delta'), signed=True)}"
        + (
            f" [{_pct(ci[0], signed=True)}, {_pct(ci[1], signed=True)}]"
            if isinstance(ci := e.against.get("ci"), list) and len(ci) == 2
            else ""
        )
        for e in entries
        if e.against is not None and e.against.get("verdict") == "regressed"
    )
    evidence = (f"{len(entries)} scenarios checked, none regressed",)
    return RuleOutcome("regressions", rule, blocks, () if blocks else evidence)


def _pooled(entries: Iterable[ScenarioEntry]) -> dict[tuple[str, str, str], list[ScenarioEntry]]:
    pooled: dict[tuple[str, str, str], list[ScenarioEntry]] = {}
    for entry in entries:
        pooled.setdefault(entry.key, []).append(entry)
    return pooled


def _rate(entries: Sequence[ScenarioEntry], by_passes: bool) -> tuple[Interval, str]:
    successes = float(
        sum(e.passes or 0 for e in entries) if by_passes else sum(e.score_sum for e in entries)
    )
    judged = sum(e.judged for e in entries)
    rate = wilson(successes, judged, CONFIDENCE)
    shown = f"{successes:g}/{judged}" + ("" if rate.value is None else f" {_pct(rate.value)}")
    return rate, shown


def _pct(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:+.0f}%" if signed else f"{100 * value:.0f}%"


def _critical(
    entries: Sequence[ScenarioEntry], old: Sequence[ScenarioEntry], has_baseline: bool
) -> RuleOutcome:
    rule = (
        "critical scenarios are there, with-skill pass rate not credibly below the baseline's "
        f"(the {level(CONFIDENCE)} interval of now - baseline)"
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
        by_passes = all(e.passes is not None for e in (*now[key], *before.get(key, ())))
        rate, shown = _rate(now[key], by_passes)
        if rate.empty:
            blocks.append(f"{name}: critical, but no with-skill run was judged in the new results")
            continue
        if key not in before:
            evidence.append(
                f"{name}: {shown} now; not in the baseline"
                if has_baseline
                else f"{name}: {shown} now; no --baseline to compare with"
            )
            continue
        base, base_shown = _rate(before[key], by_passes)
        if base.empty:
            evidence.append(f"{name}: {shown} now; no judged with-skill run in the baseline")
            continue
        diff = newcombe(rate, base)
        assert diff.high is not None
        line = (
            f"{name}: with-skill pass rate {shown} now vs {base_shown} in the baseline: "
            f"{_pct(diff.value, True)} [{_pct(diff.low, True)}, {_pct(diff.high, True)}]"
        )
        if round(diff.high, DIGITS) < 0:
            blocks.append(line + ", credibly lower")
        else:
            evidence.append(line + (", within noise" if (diff.value or 0) < 0 else ""))
    if not keys:
        evidence.append("no scenario is marked critical")
    return RuleOutcome("critical", rule, tuple(blocks), tuple(evidence))


def _evidence(results: Sequence[ResultsFile], entries: Sequence[ScenarioEntry]) -> RuleOutcome:
    rule = "the results are complete: no run interrupted, no canary failed, no verdict error"
    blocks: list[str] = []
    for file in results:
        if not file.complete:
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
    evidence = (
        f"{len(results)} results files complete, {len(entries)} scenarios with a verdict"
        + (f"; {unscored} unscored runs, already counted in their verdicts" if unscored else ""),
    )
    return RuleOutcome("evidence", rule, tuple(blocks), () if blocks else evidence)


def render(decision: Decision) -> str:
    """The decision as the CLI prints it: the headline, then every rule with its evidence."""
    count = len(decision.reasons)
    lines = [
        f"gate: BLOCK ({count} reason{'s' if count != 1 else ''})"
        if decision.blocked
        else "gate: PASS"
    ]
    width = max(len(rule.name) for rule in decision.rules)
    for rule in decision.rules:
        lines.append(f"{rule.status:<5}  {rule.name:<{width}}  {rule.rule}")
        lines += [f"         - {reason}" for reason in rule.blocks]
        lines += [f"         {note}" for note in rule.evidence]
    return "\n".join(lines)
