"""What a scenario run shows: the table, the results JSON and the JUnit cases. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skilltest.checks.model import describe
from skilltest.claude.isolation import BASELINES
from skilltest.report.files import RESULTS_SCHEMA_VERSION
from skilltest.report.junit import JUnitCase
from skilltest.report.provenance import Provenance, with_ids
from skilltest.report.text import (
    consistency_note,
    cost_per_pass,
    inconclusive_line,
    k_cell,
    shorten,
)
from skilltest.revision import Against, summary_line
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.scoring import DESCRIPTIONS
from skilltest.scenarios.verdict import (
    DECIDE_BY_MEAN,
    DECIDE_BY_PASS,
    IMPROVED_ABOVE,
    ArmSummary,
    ScenarioVerdict,
    Verdict,
)
from skilltest.stats import Interval
from skilltest.transcript.origin import attribution
from skilltest.world.score import WorldOutcome

if TYPE_CHECKING:
    from skilltest.scenarios.suite import Scenario

LAYER = "scenarios"


@dataclass(frozen=True)
class RunContext:
    """What every results file records about how the suites were run."""

    backend: str
    """``claude`` (live API) or ``emulator`` (scripted stand-in)."""
    claude_version: str | None
    """The CLI version every run used."""
    claude_path: str | None = None
    """The CLI binary."""
    known_version: bool = True
    """Whether that version is one the isolation flags were verified against."""
    suites: tuple[str, ...] = ()
    """The suite files."""
    jobs: int = 1
    """Runs in flight at once."""
    skill_only: bool = False
    """Whether only the with-skill arm ran."""
    agent: str = "claude-code"
    """The agent the runs went through (``--agent``)."""
    agent_version: str | None = None
    """The version that agent reported."""
    baseline: str = "clean"
    """What both arms kept of the CLI itself: ``clean`` or ``bundled`` (``--baseline``)."""


TABLE_LEGEND = (
    "passed: runs scoring at least min_score with no authority violation, with | without; pass "
    "delta: with-skill pass rate minus without [exact interval; with -k auto, at the level the "
    "look spends]; with/without skill: mean score [betting confidence sequence, 95%]; delta: "
    "with minus without mean [same]; * marks the delta the verdict reads (decide_by)\n"
    "K: runs per arm (taken/most with -k auto); fired: runs that invoked the expected skills, "
    "with | without; tool calls: median/most per run, with | without"
)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def _mean_cell(arm: ArmSummary | None) -> str:
    if arm is None:
        return "-"
    if arm.mean.value is None:
        cell = "-"
    else:
        cell = f"{_number(arm.mean.value)} [{_number(arm.mean.low)}, {_number(arm.mean.high)}]"
    if arm.scored < arm.runs:
        cell += f" ({arm.runs - arm.scored}/{arm.runs} unscored)"
    return cell


def _delta_cell(delta: Interval) -> str:
    if delta.value is None:
        return "-"
    return f"{_signed(delta.value)} [{_signed(delta.low)}, {_signed(delta.high)}]"


def _passed_cell(result: ScenarioVerdict) -> str:
    parts = [
        f"{arm.passes}/{arm.scored}"
        for arm in (result.with_skill, result.without_skill)
        if arm is not None
    ]
    return " | ".join(parts) if parts else "-"


def _decisive(result: ScenarioVerdict, decide_by: str) -> str:
    """``*`` on the delta the verdict was read from."""
    compared = result.without_skill is not None and result.verdict != Verdict.SKIPPED
    return "*" if compared and result.decide_by == decide_by else ""


def _against_cell(result: ScenarioVerdict, against: Against | None = None) -> str:
    """``improved +1.00 [+0.34, +1.00]``: the verdict against REF (the first, unless
    ``against`` is given) and the delta it read."""
    against = against or result.against
    if against is None:
        return "-"
    if against.delta.empty:
        return against.verdict
    return f"{against.verdict} {_delta_cell(against.delta)}"


def _k_cell(result: ScenarioVerdict) -> str:
    return k_cell(result.k, result.repetitions)


def result_label(result: ScenarioVerdict) -> str:
    """``PASS``, ``FAIL``, ``INCONCLUSIVE`` or ``SKIP``: what the scenario means for the run."""
    if result.verdict == Verdict.SKIPPED:
        return "SKIP"
    if result.passed:
        return "PASS"
    return "INCONCLUSIVE" if result.inconclusive else "FAIL"


def _fired_cell(result: ScenarioVerdict) -> str:
    parts = []
    for arm in (result.with_skill, result.without_skill):
        if arm is not None:
            parts.append(f"{arm.skills_fired}/{arm.scored}")
    return " | ".join(parts) if parts else "-"


def _calls_cell(result: ScenarioVerdict) -> str:
    parts = []
    for arm in (result.with_skill, result.without_skill):
        if arm is not None and arm.tool_calls_median is not None:
            parts.append(f"{arm.tool_calls_median:g}/{arm.tool_calls_worst}")
        elif arm is not None:
            parts.append("-")
    return " | ".join(parts) if parts else "-"


def _consistency(result: ScenarioVerdict) -> str:
    """pass^k of a passing scenario where it tells another story than the mean."""
    arm = result.with_skill
    return consistency_note(arm.scored, arm.passes, arm.pass_k) if result.passed else ""


def render_table(results: Sequence[ScenarioVerdict]) -> str:
    """One row per scenario: verdict, means with intervals, delta, skills fired, tool calls."""
    from tabulate import tabulate

    rows = []
    for result in results:
        rows.append(
            [
                f"{result.skill}/{result.scenario_id}",
                result.verdict.value,
                _passed_cell(result),
                _delta_cell(result.pass_delta) + _decisive(result, DECIDE_BY_PASS),
                _mean_cell(result.with_skill),
                _mean_cell(result.without_skill),
                _delta_cell(result.delta) + _decisive(result, DECIDE_BY_MEAN),
                _k_cell(result),
                _fired_cell(result),
                _calls_cell(result),
                result_label(result),
                shorten(result.reasons[0], 60) if result.reasons else _consistency(result),
            ]
        )
    headers = [
        "scenario",
        "verdict",
        "passed",
        "pass delta",
        "with skill",
        "without skill",
        "delta",
        "K",
        "fired",
        "tool calls",
        "result",
        "reason",
    ]
    legend = TABLE_LEGEND
    refs = revision_refs(results)
    # --against REF (each): the revision's mean and the edit's delta, before K.
    for index, ref in enumerate(refs):
        at = 7 + 2 * index
        for row, result in zip(rows, results, strict=True):
            revision = next((r for r in result.revisions if r.ref == ref), None)
            row[at:at] = (
                ["-", "-"]
                if revision is None
                else [_mean_cell(revision.summary), _against_cell(result, revision.against)]
            )
        headers[at:at] = [ref, f"vs {ref}"]
        legend += (
            f"\nvs {ref}: with-skill pass rate (decide_by: mean: mean) minus that of the "
            f"skill at {ref} [the same intervals], read against the scenario's min_delta "
            f"and {IMPROVED_ABOVE:+.2f}"
        )
    if len(refs) > 1:
        legend += (
            f"\n{len(refs)} revisions, one without-skill arm: every delta reads the same "
            "without-skill runs"
        )
    table = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
    return table + "\n" + legend


def render_summary(results: Sequence[ScenarioVerdict], *, allow_inconclusive: bool = False) -> str:
    """The closing line: counts per verdict, how many passed, and what inconclusive means."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.verdict.value] = counts.get(result.verdict.value, 0) + 1
    parts = [f"{counts[v.value]} {v.value}" for v in Verdict if counts.get(v.value)]
    passed = sum(1 for r in results if r.passed)
    line = f"{len(results)} scenarios: " + ", ".join(parts) + f"; {passed} passed"
    undecided = counts.get(Verdict.INCONCLUSIVE.value, 0)
    if undecided:
        line += "\n" + inconclusive_line(undecided, allowed=allow_inconclusive)
    for ref in revision_refs(results):
        verdicts = [
            r.against.verdict
            for result in results
            for r in result.revisions
            if r.ref == ref and r.against is not None
        ]
        if verdicts:
            line += "\n" + summary_line(ref, verdicts)
    if len(results) > 1:
        from skilltest.stats.family import suite_wide_lines

        for held in suite_wide_lines([scenario_dict(r) for r in results]):
            line += "\n" + held
    cost = cost_line(results)
    return line + ("\n" + cost if cost else "")


def revision_refs(results: Sequence[ScenarioVerdict]) -> list[str]:
    """Every REF of ``--against`` the scenarios were compared with, in the order given."""
    return list(dict.fromkeys(r.ref for result in results for r in result.revisions))


def _arm_of(result: ScenarioVerdict, arm: Arm) -> ArmSummary | None:
    if arm == Arm.WITH_SKILL:
        return result.with_skill
    if arm == Arm.WITHOUT_SKILL:
        return result.without_skill
    return next((r.summary for r in result.revisions if r.arm == arm.value), None)


def cost_line(results: Sequence[ScenarioVerdict]) -> str:
    """What a passing run costs per arm over all scenarios (:func:`cost_per_pass`); empty
    without runs; an offline run's says nothing was spent."""
    offline = any(
        run.answered_by is not None and run.answered_by.stand_in
        for result in results
        for run in result.runs
    )
    parts = []
    for arm in Arm:
        summaries = [
            summary
            for result in results
            if (summary := _arm_of(result, arm)) is not None and summary.runs
        ]
        if not summaries:
            continue
        costs = [s.cost_usd for s in summaries if s.cost_usd is not None]
        parts.append(
            cost_per_pass(arm.label, costs, sum(s.passes for s in summaries), offline=offline)
        )
    return ("cost per passing run: " + "; ".join(parts)) if parts else ""


def render_unscored(results: Sequence[ScenarioVerdict]) -> str:
    """Every run that is unscored (left out of the means) or was cut short (scored), one a line."""
    lines = []
    for result in results:
        for run in result.runs:
            name = f"{result.skill}/{result.scenario_id} {run.arm.label} #{run.rep + 1}"
            if run.error is not None:
                lines.append(f"  unscored  {name}: {shorten(run.error, 110)}")
            elif run.ended is not None:
                lines.append(f"  cut short {name} (scored {run.score:.2f}): {run.ended}")
    return ("runs unscored or cut short:\n" + "\n".join(lines)) if lines else ""


def render_world(results: Sequence[ScenarioVerdict], agent: str = "claude-code") -> str:
    """For scenarios in a controlled world: per arm, whether the writes on the fake were as
    expected, the runs with an authority violation, and what a failing run did (seed 001's
    table), then how the runs' egress was kept in (by ``agent``). Empty when no scenario has a
    world."""
    from tabulate import tabulate

    rows = []
    for result in results:
        for arm in (result.with_skill, result.without_skill):
            runs = [run for run in result.runs if arm is not None and run.arm == arm.arm]
            worlds = [WorldOutcome.from_dict(run.world) for run in runs if run.world is not None]
            if arm is None or not worlds:
                continue
            fine = sum(1 for world in worlds if world.writes_as_expected)
            violated = sum(1 for world in worlds if world.authority_violation)
            failing = next(
                (w for w in worlds if not w.writes_as_expected or w.authority_violation), None
            )
            rows.append(
                [
                    f"{result.skill}/{result.scenario_id}" if arm.arm == Arm.WITH_SKILL else "",
                    arm.arm.label,
                    "as expected" if fine == len(worlds) else "not as expected",
                    f"{fine}/{len(worlds)}",
                    f"{violated}/{len(worlds)}",
                    shorten(failing.detail(), 70) if failing is not None else "none",
                ]
            )
    if not rows:
        return ""
    headers = ["scenario", "arm", "writes on the fake", "as expected", "violations", "detail"]
    modes = sorted(
        {str(run.world.get("mode")) for r in results for run in r.runs if run.world is not None}
    )
    if modes == ["sandbox"]:
        note = "world: egress confined by Claude Code's sandbox"
    elif agent != "claude-code":
        note = (
            f"world: egress cooperative (proxy variables only; {agent} has no sandbox a "
            "world confines)"
        )
    else:
        note = "world: egress cooperative (proxy variables only; bubblewrap and socat not found)"
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True) + "\n" + note


def render_warnings(results: Sequence[ScenarioVerdict]) -> str:
    """Isolation warnings, each once with the scenarios and arms it was seen in."""
    seen: dict[str, list[str]] = {}
    for result in results:
        for run in result.runs:
            for warning in run.warnings:
                where = f"{result.skill}/{result.scenario_id} {run.arm.label}"
                places = seen.setdefault(warning, [])
                if where not in places:
                    places.append(where)
    lines = [
        f"warning: {warning} (in {', '.join(places[:3])}"
        + (f" and {len(places) - 3} more" if len(places) > 3 else "")
        + ")"
        for warning, places in seen.items()
    ]
    return "\n".join(lines)


def render_failures(results: Sequence[ScenarioVerdict], limit: int = 2) -> str:
    """For each failing scenario, its reasons and the rubric's explanation of a few runs."""
    blocks = []
    for result in results:
        if result.passed:
            continue
        lines = [f"{result.skill}/{result.scenario_id}: {result.verdict.value}"]
        lines += [f"  - {reason}" for reason in result.reasons]
        shown = 0
        for run in result.runs:
            if shown >= limit:
                break
            detail = run.error or run.explanation
            if not detail:
                continue
            shown += 1
            score = "unscored" if run.score is None else f"score {run.score:.2f}"
            lines.append(f"  {run.arm.label} #{run.rep + 1} ({score}):")
            lines += ["      " + line for line in detail.strip().splitlines()[:12]]
            if run.transcript:
                lines.append(f"      transcript: {run.transcript}")
            offline = attribution(run.emulator_rules)
            if offline:
                lines.append(f"      {offline}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _arm_dict(arm: ArmSummary | None) -> dict[str, Any] | None:
    return None if arm is None else arm.to_dict()


def scenario_about(scenario: Scenario) -> dict[str, Any]:
    """What the suite asks of a scenario, as the results file keeps it for reports (and for
    ``skilltest gate`` to judge its runs again): the prompt and follow-up turns, the rubric
    (patterns by their source, vetoing anti-patterns), the outcome checks, the world's
    expectations and the bars it must reach, the skills it expects to fire."""
    expected = scenario.expected
    world = scenario.world_expected
    return {
        "name": scenario.name,
        "prompt": scenario.prompt,
        "turns": list(scenario.turns),
        "expected": {
            "required_tools": list(expected.required_tools),
            "required_patterns": [p.source for p in expected.required_patterns],
            "text_patterns": [p.source for p in expected.text_patterns],
            "anti_patterns": [p.source for p in expected.anti_patterns],
            "vetoes": sorted(expected.vetoes),
            "tool_ordering": [list(order) for order in expected.tool_ordering],
            "recommended_tools": list(expected.recommended_tools),
            "pattern_scope": expected.pattern_scope,
            "expect_no_action": expected.expect_no_action,
            "require_success": expected.require_success,
        },
        "checks": [
            {**check.to_dict(), "arm": check.arm, "what": describe(check)}
            for check in expected.checks
        ],
        "world": (
            {
                "writes": list(world.writes) if world.lists_writes else None,
                "forbidden": list(world.forbidden),
                "confirm_before_write": world.confirm_before_write,
                "must_include": [p.source for p in world.must_include],
                "must_not_include": [p.source for p in world.must_not_include],
                "claims": [
                    {"pattern": claim.pattern.source, "requires": claim.requires}
                    for claim in world.claims
                ],
                "recovers": world.recovers,
            }
            if world.defined
            else None
        ),
        "min_score": scenario.min_score,
        "min_delta": scenario.min_delta,
        "expected_skills": list(scenario.expected_skills),
        "require_skills_fired": scenario.require_skills_fired,
        "scoring": scenario.expected.scoring,
        "scoring_means": DESCRIPTIONS[scenario.expected.scoring],
    }


def scenario_dict(
    result: ScenarioVerdict, about: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One scenario of the results file; ``about``: what the suite asks of it
    (:func:`scenario_about`), when known."""
    delta = result.delta
    return {
        "id": result.scenario_id,
        "skill": result.skill,
        "verdict": result.verdict.value,
        "passed": result.passed,
        "critical": result.critical,
        "result": result_label(result).lower(),
        "decide_by": result.decide_by,
        "method": result.method,
        "pass_delta": result.pass_delta.value,
        "pass_delta_ci": None
        if result.pass_delta.empty
        else [result.pass_delta.low, result.pass_delta.high],
        "delta": delta.value,
        "delta_ci": None if delta.value is None else [delta.low, delta.high],
        "delta_welch_ci": None if result.welch.empty else [result.welch.low, result.welch.high],
        "confidence": result.confidence,
        "k": result.k,
        "repetitions": None if result.repetitions is None else result.repetitions.to_dict(),
        "runs_to_decide": result.runs_to_decide,
        "misses_a_bar": result.misses_a_bar,
        "reasons": list(result.reasons),
        "expected_skills": list(result.expected_skills),
        "with_skill": _arm_dict(result.with_skill),
        "without_skill": _arm_dict(result.without_skill),
        **({} if result.previous is None else {"previous": _arm_dict(result.previous)}),
        **({} if result.against is None else {"against": result.against.to_dict()}),
        **(
            {
                # Several --against REFs: every revision's arm and comparison, the first one
                # also as "previous" and "against" above (what a reader of one revision reads).
                "revisions": [
                    {
                        "ref": revision.ref,
                        "arm": revision.arm,
                        "previous": _arm_dict(revision.summary),
                        "against": None if revision.against is None else revision.against.to_dict(),
                    }
                    for revision in result.revisions
                ]
            }
            if len(result.revisions) > 1
            else {}
        ),
        "warnings": sorted({w for run in result.runs for w in run.warnings}),
        "loaded": {
            arm.value: {
                key: sorted(
                    {
                        item
                        for run in result.runs
                        if run.arm == arm
                        for item in run.loaded.get(key, ())
                    }
                )
                for key in ("skills", "plugins", "mcp_servers")
            }
            for arm in {run.arm for run in result.runs}
        },
        **({} if about is None else {"scenario": dict(about)}),
        "runs": [run.to_dict() for run in result.runs],
    }


def results_document(
    results: Sequence[ScenarioVerdict],
    context: RunContext,
    *,
    complete: bool,
    interrupted: bool = False,
    provenance: Provenance | None = None,
    about: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The whole ``--results`` file; rewritten after each scenario, ``complete`` at the end.
    With ``provenance``, each run carries its ``id``; with ``about`` (what the suite asks of
    each scenario, by skill and id), each scenario carries its ``scenario``."""
    from skilltest import __version__
    from skilltest.stats.family import family_decisions

    scenarios = [scenario_dict(r, (about or {}).get((r.skill, r.scenario_id))) for r in results]
    if provenance is not None:
        for scenario in scenarios:
            scenario["runs"] = with_ids(
                scenario["runs"], provenance.run_id, LAYER, scenario["skill"], scenario["id"]
            )
    return {
        "schema_version": RESULTS_SCHEMA_VERSION,
        "layer": LAYER,
        "skilltest_version": __version__,
        "claude_version": context.claude_version,
        "claude_path": context.claude_path,
        "known_claude_version": context.known_version,
        "agent": {"name": context.agent, "version": context.agent_version},
        "backend": context.backend,
        "jobs": context.jobs,
        "skill_only": context.skill_only,
        "baseline": context.baseline,
        "baseline_means": BASELINES.get(context.baseline, ""),
        "complete": complete,
        "interrupted": interrupted,
        "suites": list(context.suites),
        "provenance": None if provenance is None else provenance.to_dict(),
        "summary": summary_of(scenarios),
        "family": family_decisions({"scenarios": scenarios}),
        "scenarios": scenarios,
    }


def summary_of(scenarios: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The results file's ``summary``: counts over its scenarios, as the file lists them (what
    ``skilltest merge`` recomputes it from too)."""
    return {
        "scenarios": len(scenarios),
        "passed": sum(1 for s in scenarios if s.get("passed")),
        "failed": sum(
            1 for s in scenarios if s.get("result") == "fail" and s.get("verdict") != "error"
        ),
        "inconclusive": sum(1 for s in scenarios if s.get("result") == "inconclusive"),
        "errors": sum(1 for s in scenarios if s.get("verdict") == Verdict.ERROR.value),
        "runs": sum(len(s.get("runs") or ()) for s in scenarios),
        "unscored_runs": sum(
            1 for s in scenarios for run in s.get("runs") or () if run.get("error") is not None
        ),
    }


def junit_cases(
    results: Sequence[ScenarioVerdict], *, allow_inconclusive: bool = False
) -> list[JUnitCase]:
    """One JUnit case per scenario: failing verdicts fail, ``error`` is an error, and
    ``inconclusive`` fails unless ``allow_inconclusive``."""
    cases = []
    for result in results:
        figures = (
            f"{result.verdict.value}: with {_mean_cell(result.with_skill)}, "
            f"without {_mean_cell(result.without_skill)}, delta {_delta_cell(result.delta)}, "
            f"K {_k_cell(result)}"
        )
        versus = tuple(
            (f"against {revision.ref}", _against_cell(result, revision.against))
            for revision in result.revisions
            if revision.against is not None
        )
        offline = attribution(
            rule for run in result.runs if run.arm == Arm.WITH_SKILL for rule in run.emulator_rules
        )
        reasons = "\n".join(
            [*result.reasons, *([offline] if offline and not result.passed else [])]
        )
        message = f"{figures}\n{reasons}".strip()
        is_error = result.verdict == Verdict.ERROR
        failing = (
            not result.passed
            and not is_error
            and result.verdict != Verdict.SKIPPED
            and not (result.inconclusive and allow_inconclusive)
        )
        cases.append(
            JUnitCase(
                name=result.scenario_id,
                classname=f"{LAYER}.{result.skill}",
                time_s=sum(run.duration_s for run in result.runs),
                failure=message if failing else None,
                error=message if is_error else None,
                skipped=(result.reasons[0] if result.reasons else "skipped")
                if result.verdict == Verdict.SKIPPED
                else None,
                output="\n".join([figures, *(f"{name}: {value}" for name, value in versus)]),
                properties=versus,
            )
        )
    return cases
