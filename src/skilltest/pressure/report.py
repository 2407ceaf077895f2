"""What a pressure run shows: the table, the results JSON and the JUnit cases. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skilltest.decision import STEER_MARGIN
from skilltest.pressure.suite import PressureScenario
from skilltest.pressure.verdict import (
    ERROR,
    INCONCLUSIVE,
    NO_STEER,
    NOT_RED,
    SKIPPED,
    STEERS,
    WITH_SKILL,
    WITHOUT_SKILL,
    ArmStats,
    PressureRun,
    ScenarioResult,
)
from skilltest.report.files import RESULTS_SCHEMA_VERSION
from skilltest.report.junit import JUnitCase
from skilltest.report.provenance import Provenance, with_ids
from skilltest.report.text import consistency_note, inconclusive_line, k_cell, shorten
from skilltest.revision import BAND, summary_line
from skilltest.stats import DIGITS, Interval, consistency
from skilltest.transcript import Usage
from skilltest.transcript.origin import attribution

if TYPE_CHECKING:
    from skilltest.cost.render import SuiteEstimate


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _rate_cell(successes: int, runs: int, interval: Interval) -> str:
    if runs == 0:
        return "-"
    low, high = _percent(interval.low), _percent(interval.high)
    return f"{successes}/{runs} {_percent(interval.value)} [{low}–{high}]"


def _with_cell(stats: ArmStats) -> str:
    cell = _rate_cell(stats.passed, stats.runs, stats.rate)
    return cell + (f" ({stats.errors} err)" if stats.errors else "")


def _without_cells(stats: ArmStats | None) -> tuple[str, str]:
    if stats is None:
        return "skipped", "-"
    red = _rate_cell(stats.runs - stats.passed, stats.runs, stats.rate)
    red += f" ({stats.errors} err)" if stats.errors else ""
    expected = "-" if stats.expected.value is None else _percent(stats.expected.value)
    return red, expected


def _signed_percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.0f}%"


def _lift_cell(result: ScenarioResult) -> str:
    lift = result.lift
    if lift.empty:
        return "-"
    return (
        f"{_signed_percent(lift.value)} [{_signed_percent(lift.low)}, {_signed_percent(lift.high)}]"
    )


def _against_cell(result: ScenarioResult, index: int = 0) -> str:
    """``improved +100% [+52%, +100%]``: the verdict against the ``index``-th REF and the
    delta it read."""
    against = result.revisions[index].against if index < len(result.revisions) else None
    if against is None:
        return "-"
    if against.delta.empty:
        return against.verdict
    delta = against.delta
    shown = f"[{_signed_percent(delta.low)}, {_signed_percent(delta.high)}]"
    return f"{against.verdict} {_signed_percent(delta.value)} {shown}"


def _refs(results: Sequence[ScenarioResult]) -> list[str]:
    """The REFs of ``--against`` the results were compared with, in the order given."""
    return list(dict.fromkeys(r.ref for result in results for r in result.revisions))


def _k_cell(result: ScenarioResult) -> str:
    return k_cell(result.k, None if result.verdict == SKIPPED else result.repetitions)


METHOD = "pass rates, Clopper-Pearson and exact unconditional intervals"
"""How the verdicts were read, as results files name it."""

TABLE_LEGEND = (
    "pass and RED rates: runs [exact Clopper-Pearson interval]; lift: with-skill pass rate minus "
    "baseline pass rate [exact unconditional interval];\n95% intervals (with -k auto, each bound "
    "at the share of the error rate its claim spends at the look); steers needs the with-skill "
    "rate credibly at or above threshold - 0.1; K: runs per arm (taken/most with -k auto)"
)


def _consistency_note(result: ScenarioResult) -> str:
    """pass^k of a scenario that steers, where it tells another story (see consistency_note)."""
    if result.verdict != STEERS:
        return ""
    stats = result.with_skill
    return consistency_note(stats.runs, stats.passed, consistency_k(result))


def render_table(results: Sequence[ScenarioResult]) -> str:
    """One row per scenario: verdict, with-skill pass rate, baseline RED rate, lift, K, why."""
    from tabulate import tabulate

    rows = []
    for result in results:
        red, expected = _without_cells(result.without_skill)
        rows.append(
            [
                f"{result.skill}/{result.scenario.id}",
                result.verdict,
                _with_cell(result.with_skill),
                red,
                _lift_cell(result),
                _k_cell(result),
                expected,
                shorten("; ".join(filter(None, (result.detail, _consistency_note(result)))), 70),
            ]
        )
    headers = [
        "scenario",
        "verdict",
        "with skill: pass",
        "baseline: RED",
        "lift",
        "K",
        "expected",
        "detail",
    ]
    legend = TABLE_LEGEND
    refs = _refs(results)
    # --against REF: each revision's pass rate and the edit's delta against it, before K.
    for row, result in zip(rows, results, strict=True):
        cells = []
        for index in range(len(refs)):
            revision = result.revisions[index] if index < len(result.revisions) else None
            cells += [
                "-" if revision is None else _with_cell(revision.stats),
                _against_cell(result, index),
            ]
        row[5:5] = cells
    headers[5:5] = [heading for ref in refs for heading in (f"{ref}: pass", f"vs {ref}")]
    for ref in refs:
        legend += (
            f"\nvs {ref}: with-skill pass rate minus the pass rate of the skill at {ref} "
            f"[exact unconditional interval], read against the band {BAND}"
        )
    if len(refs) > 1:
        legend += (
            f"\n{len(refs)} revisions, one without-skill arm: every lift reads the same "
            "baseline runs"
        )
    table = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
    return table + "\n" + legend


def _not_red(run: PressureRun) -> bool:
    """A judged baseline run that is not RED (under the scenario's ``baseline_red``)."""
    if run.judgement is None:
        return False
    return not run.red if run.red is not None else run.judgement.passed


def _first_run(result: ScenarioResult, arm: str, passed: bool) -> PressureRun | None:
    for run in result.runs:
        if run.arm == arm and run.judgement is not None and run.judgement.passed == passed:
            return run
    return None


def offline_line(result: ScenarioResult) -> str | None:
    """Whose answers made the scenario fail, when the emulator gave them: the rule of its model
    script that answered the failing runs (with-skill runs that did not pass; baseline runs that
    were not RED)."""
    if result.verdict == NOT_RED:
        runs = [r for r in result.runs if r.arm == WITHOUT_SKILL and _not_red(r)]
    else:
        runs = [
            r for r in result.runs if r.arm == WITH_SKILL and r.judgement and not r.judgement.passed
        ]
    return attribution(rule for run in runs for rule in run.transcript.emulator_rules)


def render_failures(results: Sequence[ScenarioResult]) -> str:
    """For each scenario that did not steer, one answer that shows why."""
    blocks = []
    for result in results:
        name = f"{result.skill}/{result.scenario.id}"
        if result.verdict == NO_STEER:
            run = _first_run(result, WITH_SKILL, passed=False)
            if run is None or run.judgement is None:
                continue
            judgement = run.judgement
            why = [f"missing {p}" for p in judgement.missing]
            why += [
                f"anti-pattern {p} matched: {judgement.evidence.get(p, '')}"
                for p in judgement.anti_matched
            ]
            blocks.append(
                f"{name}: with-skill run {run.rep} did not pass\n"
                + "".join(f"  {line}\n" for line in why)
                + f"  answer: {shorten(run.transcript.text, 300)}"
                + _offline_suffix(result)
            )
        elif result.verdict == NOT_RED:
            by_expected = result.scenario.baseline_red == "expected_patterns"
            run = next((r for r in result.runs if r.arm == WITHOUT_SKILL and _not_red(r)), None)
            if run is not None:
                shown = "does not match expected_patterns" if by_expected else "passes"
                blocks.append(
                    f"{name}: baseline run {run.rep} {shown} without the skill\n"
                    f"  answer: {shorten(run.transcript.text, 300)}" + _offline_suffix(result)
                )
        elif result.verdict == INCONCLUSIVE:
            blocks.append(f"{name}: {result.detail}")
        elif result.verdict == ERROR:
            failed = [r for r in result.runs if r.error]
            if failed:
                blocks.append(
                    f"{name}: {len(failed)} run(s) failed\n"
                    f"  {failed[0].arm} run {failed[0].rep}: {failed[0].error}"
                )
    return "\n\n".join(blocks)


def _offline_suffix(result: ScenarioResult) -> str:
    said = offline_line(result)
    return f"\n  {said}" if said else ""


def render_summary(
    results: Sequence[ScenarioResult], *, strict: bool, allow_inconclusive: bool = False
) -> str:
    """The closing line: counts per verdict and what they mean for the exit code."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.verdict] = counts.get(result.verdict, 0) + 1
    order = ["steers", NOT_RED, NO_STEER, INCONCLUSIVE, ERROR, SKIPPED]
    parts = [f"{counts[v]} {v}" for v in order if counts.get(v)]
    line = f"{len(results)} scenarios: " + ", ".join(parts)
    runs = [run for result in results for run in result.runs]
    usage = sum((run.transcript.usage for run in runs), Usage())
    if runs:
        failed = sum(1 for run in runs if not run.completed)
        line += (
            f"\n{len(runs)} requests"
            + (f" ({failed} failed, left out of the rates)" if failed else "")
            + f", tokens: {usage.input_tokens:,} in, "
            f"{usage.output_tokens:,} out, {usage.cache_read_input_tokens:,} read from the "
            f"prompt cache, {usage.cache_creation_input_tokens:,} written to it"
        )
    for ref in _refs(results):
        line += "\n" + summary_line(
            ref,
            [
                r.against.verdict
                for result in results
                for r in result.revisions
                if r.ref == ref and r.against is not None
            ],
        )
    if counts.get(NOT_RED):
        line += (
            f"\nwarning: {counts[NOT_RED]} scenario(s) not RED: the model already passes "
            "without the skill, so these tests measure nothing"
            + (" (failing: --strict)" if strict else "")
        )
    if counts.get(INCONCLUSIVE):
        line += "\n" + inconclusive_line(counts[INCONCLUSIVE], allowed=allow_inconclusive)
    return line


def _interval_dict(interval: Interval) -> dict[str, float | None]:
    return {"ci_low": interval.low, "ci_high": interval.high}


def _run_dict(run: PressureRun) -> dict[str, Any]:
    judgement = run.judgement
    transcript = run.transcript
    return {
        "arm": run.arm,
        "rep": run.rep,
        "passed": judgement.passed if judgement else None,
        "output": transcript.text,
        "matched": list(judgement.matched) if judgement else [],
        "missing": list(judgement.missing) if judgement else [],
        "anti_matched": list(judgement.anti_matched) if judgement else [],
        "expected_matched": judgement.expected_matched if judgement else None,
        "red": run.red if run.arm == WITHOUT_SKILL else None,
        "evidence": dict(judgement.evidence) if judgement else {},
        "usage": transcript.usage.to_dict(),
        "model": transcript.model,
        "models": list(transcript.api_models),
        "answered_by": None if transcript.answered_by is None else transcript.answered_by.to_dict(),
        "emulator_rules": [rule.to_dict() for rule in transcript.emulator_rules],
        "stop_reason": transcript.stop_reason,
        "latency_ms": None if transcript.latency_ms is None else round(transcript.latency_ms, 1),
        "cost_usd": transcript.cost_usd,
        "error": run.error,
        "trace": run.trace,
    }


def consistency_k(result: ScenarioResult) -> int:
    """The k of pass@k and pass^k: the fixed K, or with ``-k auto`` the runs of the first round
    (every scenario takes them), so scenarios that stopped at different K stay comparable."""
    return result.repetitions.first if result.repetitions is not None else max(result.k, 1)


def scenario_about(scenario: PressureScenario) -> dict[str, Any]:
    """What the suite asks of a scenario, as the results file keeps it for reports: the prompt
    (and the suffix appended to it), the patterns each arm is judged by and when a baseline run
    is RED."""
    return {
        "prompt": scenario.prompt,
        "prompt_suffix": scenario.prompt_suffix,
        "turns": [],
        "expected": {
            "required_patterns": [p.source for p in scenario.required_patterns],
            "anti_patterns": [p.source for p in scenario.anti_patterns],
            "expected_patterns": [p.source for p in scenario.expected_patterns],
            "baseline_red": scenario.baseline_red,
        },
    }


def scenario_dict(result: ScenarioResult) -> dict[str, Any]:
    """One scenario of the results file."""
    with_stats = result.with_skill
    data: dict[str, Any] = {
        "id": result.scenario.id,
        "name": result.scenario.name,
        "skill": result.skill,
        "verdict": result.verdict,
        "critical": result.scenario.critical,
        "detail": result.detail,
        "complete": result.complete,
        "threshold": result.scenario.threshold,
        "steers_at_or_above": round(result.scenario.threshold - STEER_MARGIN, DIGITS),
        "method": METHOD,
        "repetitions": None if result.repetitions is None else result.repetitions.to_dict(),
        "k": result.k,
        "confidence": result.confidence,
        "lift": result.lift.value,
        "lift_ci": None if result.lift.empty else [result.lift.low, result.lift.high],
        "runs_to_decide": result.runs_to_decide,
        "with_skill": {
            "runs": with_stats.runs,
            "errors": with_stats.errors,
            "passed": with_stats.passed,
            "pass_rate": with_stats.rate.value,
            **_interval_dict(with_stats.rate),
            **consistency(with_stats.runs, with_stats.passed, consistency_k(result)),
        },
        "without_skill": None,
        "scenario": scenario_about(result.scenario),
        "runs": [_run_dict(run) for run in result.runs],
    }
    base = result.without_skill
    if base is not None:
        data["without_skill"] = {
            "runs": base.runs,
            "errors": base.errors,
            "red": base.runs - base.passed,
            "red_rate": base.rate.value,
            **_interval_dict(base.rate),
            "expected_rate": base.expected.value,
            # A baseline run "passes" when it is not RED.
            **consistency(base.runs, base.passed, consistency_k(result)),
        }
    if result.previous is not None:
        data["previous"] = _previous_dict(result.previous, result)
    if result.against is not None:
        data["against"] = result.against.to_dict()
    if len(result.revisions) > 1:
        # Several --against REFs: every revision's arm and comparison, the first one also as
        # "previous" and "against" above (what a reader of one revision reads).
        data["revisions"] = [
            {
                "ref": revision.ref,
                "arm": revision.arm,
                "previous": _previous_dict(revision.stats, result),
                "against": None if revision.against is None else revision.against.to_dict(),
            }
            for revision in result.revisions
        ]
    return data


def _previous_dict(previous: ArmStats, result: ScenarioResult) -> dict[str, Any]:
    """The figures of an arm of an ``--against`` REF, as the results file keeps them."""
    return {
        "runs": previous.runs,
        "errors": previous.errors,
        "passed": previous.passed,
        "pass_rate": previous.rate.value,
        **_interval_dict(previous.rate),
        **consistency(previous.runs, previous.passed, consistency_k(result)),
    }


def results_document(
    results: Sequence[ScenarioResult],
    *,
    backend: str,
    model: str,
    skill_only: bool,
    complete: bool,
    suites: Sequence[str],
    interrupted: bool = False,
    provenance: Provenance | None = None,
    strict: bool = False,
) -> dict[str, Any]:
    """The whole ``--results`` file: with ``provenance``, each run carries its ``id``; each
    scenario says whether it ``passed`` (``not-red`` fails with ``strict``)."""
    from skilltest import __version__

    return {
        "schema_version": RESULTS_SCHEMA_VERSION,
        "layer": "pressure",
        "skilltest_version": __version__,
        "backend": backend,
        "model": model,
        "skill_only": skill_only,
        "strict": strict,
        "complete": complete,
        "interrupted": interrupted,
        "suites": list(suites),
        "provenance": None if provenance is None else provenance.to_dict(),
        "scenarios": [scenario_document(r, provenance=provenance, strict=strict) for r in results],
    }


def scenario_document(
    result: ScenarioResult, *, provenance: Provenance | None, strict: bool
) -> dict[str, Any]:
    """One scenario of the ``--results`` file's ``scenarios``, as :func:`results_document`
    lists it (and a run's journal holds it the moment it finished)."""
    scenario: dict[str, Any] = {}
    for key, value in scenario_dict(result).items():
        scenario[key] = value
        if key == "verdict":
            scenario["passed"] = value in (STEERS, SKIPPED) or (value == NOT_RED and not strict)
    if provenance is not None:
        scenario["runs"] = with_ids(
            scenario["runs"], provenance.run_id, "pressure", result.skill, result.scenario.id
        )
    return scenario


def junit_cases(
    results: Sequence[ScenarioResult], *, strict: bool, allow_inconclusive: bool = False
) -> list[JUnitCase]:
    """One JUnit case per scenario; ``not-red`` fails only with ``--strict``, ``inconclusive``
    unless ``--allow-inconclusive``."""
    cases = []
    for result in results:
        latency = sum((run.transcript.latency_ms or 0.0) for run in result.runs) / 1000
        line = f"{result.verdict}: {result.detail}".rstrip(": ")
        offline = offline_line(result)
        versus = tuple(
            (f"against {revision.ref}", _against_cell(result, index))
            for index, revision in enumerate(result.revisions)
            if revision.against is not None
        )
        failing = (
            result.verdict == NO_STEER
            or (strict and result.verdict == NOT_RED)
            or (result.verdict == INCONCLUSIVE and not allow_inconclusive)
        )
        cases.append(
            JUnitCase(
                name=result.scenario.id,
                classname=f"pressure.{result.skill}",
                time_s=latency,
                failure=f"{line}\n{offline}" if failing and offline else line if failing else None,
                error=line if result.verdict == ERROR else None,
                skipped=result.detail or "skipped" if result.verdict == SKIPPED else None,
                output="\n".join([line, *(f"{name}: {value}" for name, value in versus)]),
                properties=versus,
            )
        )
    return cases


def batch_summary(batch: Mapping[str, Any]) -> str:
    """What a ``--batch`` run's batches were and cost, for the end of the summary."""
    results = batch.get("results") or {}
    ended = ", ".join(f"{count} {kind}" for kind, count in results.items() if count)
    usage = batch.get("usage") or {}
    batches = batch.get("batches") or []
    shown = ", ".join(b["id"] for b in batches[:3]) + (", ..." if len(batches) > 3 else "")
    return (
        f"batch: {batch.get('requests', 0)} request(s) in {len(batches)} batch(es) over "
        f"{batch.get('rounds', 0)} round(s) ({batch.get('submitted', 0)} submitted by this run, "
        f"{batch.get('resumed', 0)} resumed){': ' + ended if ended else ''}\n"
        f"  billed at {100 * float(batch.get('price_factor', 0.5)):.0f}% of the standard price "
        f"(Message Batches): {usage.get('input_tokens', 0):,} tokens in, "
        f"{usage.get('output_tokens', 0):,} out\n"
        f"  batches: {shown or 'none'}; resume file: {batch.get('resume_file')}"
    )


def batch_resume_line(batch: Mapping[str, Any] | None) -> str | None:
    """What an interrupted ``--batch`` run says about its batches: they go on, and how to pick
    them up; ``None`` when it had submitted none."""
    if not batch or not batch.get("batches"):
        return None
    path = batch.get("resume_file")
    return (
        f"skilltest: the submitted batches go on; --resume-batch {path} polls them and reads "
        "their results without submitting them again"
    )


def batch_price_note(estimates: Sequence[SuiteEstimate]) -> str:
    """What ``--dry-run --batch`` adds: the total at the Message Batches' price."""
    from skilltest.runners.batch import PRICE_FACTOR

    least = sum(e.least.usd for e in estimates) * PRICE_FACTOR
    most = sum(e.most.usd for e in estimates) * PRICE_FACTOR
    cost = f"${least:.4f}" if least == most else f"${least:.4f}–${most:.4f}"
    return (
        f"--batch: Message Batches are billed at {PRICE_FACTOR:.0%} of the list price: {cost} "
        "in all"
    )
