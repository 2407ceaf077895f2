"""``skilltest pressure``: the inner loop, one turn with and without the skill."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from skilltest.cli import EXIT_BAD_INPUT, interrupted_exit_code, run_async

if TYPE_CHECKING:
    from skilltest.replay.match import Miss
    from skilltest.replay.turns import ReplayTurnRunner
from skilltest.cli.options import (
    Tape,
    add_common_run_options,
    check_unique_scenarios,
    miss_summary,
    non_negative_int,
    positive_float,
    positive_int,
    refuse_against_with_tape,
    repetition_plan,
    select_scenarios,
    tape_mode,
    unit_interval,
    write_markdown,
    write_report,
)
from skilltest.errors import InputError
from skilltest.pressure.report import (
    junit_cases,
    render_failures,
    render_summary,
    render_table,
    results_document,
)
from skilltest.pressure.run import DEFAULT_MODEL, SuiteProgress, run_suites, total_runs
from skilltest.pressure.suite import Overrides, PressureSuite, load_pressure_suite
from skilltest.pressure.verdict import INCONCLUSIVE, NOT_RED, ScenarioResult
from skilltest.report.files import write_results
from skilltest.report.junit import write_junit
from skilltest.report.progress import Progress
from skilltest.revision import previous_skills
from skilltest.runners.backends import (
    BACKENDS,
    PRESSURE_EMULATOR_NOTICE,
    BackendChoice,
    TurnRunnerPool,
    choose_backend,
)
from skilltest.runners.base import TurnRunner
from skilltest.skills import Skill
from skilltest.suite.loader import discover_suites

DEFAULT_SUITE_DIR = Path("tests/skill-pressure")

SAVE_EVERY_S = 1.0
"""While a suite runs, the results file is rewritten after a finished scenario at most once in
this many seconds (and always at the end, or when interrupted). Each rewrite holds every finished
scenario: after each of hundreds of replayed scenarios, the rewrites would cost more than the
replay."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "pressure",
        help="one-turn tests: does the skill change the answer? (the inner loop)",
        description=(
            "Sends each scenario's prompt with the skill as the system prompt and without it, "
            "K times each, and judges the answers with the suite's regex patterns."
        ),
    )
    parser.add_argument(
        "suites",
        nargs="*",
        type=Path,
        metavar="SUITE",
        help=f"suite files, folders or names (lgtm: {DEFAULT_SUITE_DIR}/**/lgtm.yaml; "
        f"default: {DEFAULT_SUITE_DIR}/)",
    )
    add_common_run_options(parser, backends=BACKENDS)
    parser.add_argument("--model", help=f"model name (default: the suite's, else {DEFAULT_MODEL})")
    parser.add_argument(
        "--threshold",
        type=unit_interval,
        help="with-skill pass rate a scenario needs to steer (default: the suite's, else 0.8)",
    )
    parser.add_argument("--max-tokens", type=positive_int, help="longest answer (default 1024)")
    parser.add_argument("--temperature", type=unit_interval, help="sampling temperature")
    parser.add_argument(
        "--timeout",
        type=positive_float,
        metavar="S",
        help="seconds one request may take (default 120; with --backend claude: one run, 300)",
    )
    parser.add_argument(
        "--max-retries",
        type=non_negative_int,
        metavar="N",
        help="retries of a request that failed with 429, 529, 5xx or a time-out (default 4)",
    )
    parser.add_argument(
        "--against",
        metavar="REF",
        help="also run the skill as it was at REF (a git revision of the skill's repository, or "
        "a folder) as an arm 'previous', and say per scenario whether the edit improved it",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail on not-red scenarios too (they measure nothing)"
    )
    parser.add_argument(
        "--output-dir",
        type=Path,
        metavar="DIR",
        help="keep a trace of every run in DIR/<skill>/<scenario>/<arm>-<rep>.trace.jsonl "
        "(default: none; the results file holds each answer and its judgement)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    overrides = Overrides(
        model=args.model,
        threshold=args.threshold,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        plugin_dir=args.plugin_dir,
    )
    paths = discover_suites(
        args.suites, DEFAULT_SUITE_DIR, example="tests/skill-pressure/<skill>.yaml"
    )
    suites = [
        load_pressure_suite(
            p, skills_dir=args.skills_dir, overrides=overrides, skill_name=args.skill
        )
        for p in paths
    ]
    suites = select_scenarios(suites, args.only)
    check_unique_scenarios(
        [(suite.skill.name, s.id, s.location) for suite in suites for s in suite.scenarios]
    )
    tape = tape_mode(args, layer="pressure")
    refuse_against_with_tape(args.against, tape)
    with tempfile.TemporaryDirectory(prefix="skilltest-against-") as scratch:
        previous = _previous_skills(suites, args.against, Path(scratch))
        return _run(args, paths, suites, tape, previous)


def _previous_skills(
    suites: list[PressureSuite], ref: str | None, scratch: Path
) -> dict[Path, Skill]:
    """Each suite's skill as it was at ``ref`` (by the current SKILL.md's path), read once."""
    if ref is None:
        return {}
    return previous_skills((suite.skill for suite in suites), ref, scratch)


def _run(
    args: argparse.Namespace,
    paths: list[Path],
    suites: list[PressureSuite],
    tape: Tape,
    previous: dict[Path, Skill],
) -> int:
    # Replay is imported only when asked for: a plain run pays nothing for it.
    if tape.directory is not None:
        from skilltest.replay.pressure import PressureCassettes, PressureRecording
        from skilltest.replay.turns import ReplayTurnRunner
    if tape.replaying and not tape.record_missing:
        # Answers come from the cassettes only: no credentials, no model script, no upstream.
        backend = BackendChoice("replay")
    else:
        backend = choose_backend(
            args.backend, live="anthropic", emulator_notice=PRESSURE_EMULATOR_NOTICE
        )
        if tape.recording and backend.name == "claude":
            raise InputError(
                "pressure runs record and replay through the SDK backends only",
                location="--backend claude",
                fix="record with --backend anthropic (live) or the emulator",
            )
    model = args.model or DEFAULT_MODEL
    if backend.notice:
        print(backend.notice, file=sys.stderr)
    plan = repetition_plan(args)
    state = SuiteProgress()
    results_path: Path | None = args.results
    suite_names = [str(p) for p in paths]

    recording = (
        PressureRecording(tape.directory, suites, model=model)
        if tape.recording and tape.directory is not None
        else None
    )
    cassettes = PressureCassettes(suites) if tape.replaying else None
    replayers: dict[Path, ReplayTurnRunner] = {}

    saved_at = 0.0

    def save(complete: bool, interrupted: bool = False) -> None:
        nonlocal saved_at
        saved_at = time.monotonic()
        results = _in_suite_order(suites, state.results)
        final = complete or interrupted  # the Markdown summary is written once, at the end
        if results_path is not None or final:
            document = results_document(
                results,
                backend=backend.name,
                model=model,
                skill_only=args.skill_only,
                complete=complete,
                interrupted=interrupted,
                suites=suite_names,
            )
            document["replay"] = tape.to_dict(misses=[m.message for m in _misses(replayers)])
            if results_path is not None:
                write_results(results_path, document)
            if final:
                write_markdown(args, document)
                write_report(args, document)
        if args.junit is not None:
            cases = junit_cases(
                results, strict=args.strict, allow_inconclusive=args.allow_inconclusive
            )
            write_junit(args.junit, "skilltest pressure", cases)

    pool = TurnRunnerPool(
        backend,
        script=args.script,
        claude=args.claude,
        timeout_s=args.timeout,
        max_retries=args.max_retries,
        via=recording.via if recording is not None else None,
    )
    if backend.name != "replay":
        pool.check(suites)

    live: dict[Path, TurnRunner] = {}

    def live_runner(suite: PressureSuite) -> TurnRunner:
        """The backend's runner; while recording, each of its runs is written as it ends."""
        if suite.path not in live:
            runner = pool.runner_for(suite)
            live[suite.path] = recording.runner(runner) if recording is not None else runner
        return live[suite.path]

    def runner_for(suite: PressureSuite) -> TurnRunner:
        if not tape.replaying:
            return live_runner(suite)
        if suite.path not in replayers:
            assert tape.directory is not None and cassettes is not None
            replayers[suite.path] = ReplayTurnRunner(
                tape.directory,
                key_of=cassettes.key_of,
                rules_of=cassettes.rules_of,
                fallback=live_runner(suite) if tape.record_missing else None,
                max_retries=pool.limits.get("max_retries", 4),
            )
        return replayers[suite.path]

    def finished(result: ScenarioResult) -> None:
        if time.monotonic() - saved_at >= SAVE_EVERY_S:
            save(False)

    save(False)  # an unwritable --results or --junit fails now, before any model call
    progress = Progress(
        total_runs(suites, args.skill_only, plan, against=args.against is not None), "pressure"
    )

    async def run_all() -> None:
        try:
            await run_suites(
                suites,
                runner_for,
                jobs=args.jobs,
                skill_only=args.skill_only,
                default_model=model,
                progress=progress,
                state=state,
                on_result=finished,
                plan=plan,
                against=args.against,
                previous=lambda suite: previous[suite.skill.skill_file],
                trace_dir=(
                    None
                    if args.output_dir is None
                    else lambda suite: args.output_dir / suite.skill.name
                ),
            )
        finally:
            for replayer in replayers.values():
                await replayer.aclose()
            await pool.aclose()
            if recording is not None:
                recording.close()

    try:
        run_async(run_all())
    except KeyboardInterrupt as exc:
        progress.close()
        if recording is not None:
            recording.recorder.flush()  # a run whose cassette the interrupt stopped writing
        save(False, interrupted=True)
        print(
            f"skilltest: interrupted; {len(state.results)} finished scenario(s) kept"
            + (f" in {results_path}" if results_path else ""),
            file=sys.stderr,
        )
        return interrupted_exit_code(exc)
    progress.close()
    save(True)
    results = _in_suite_order(suites, state.results)
    print(render_table(results))
    failures = render_failures(results)
    if failures:
        print()
        print(failures)
    print()
    print(render_summary(results, strict=args.strict, allow_inconclusive=args.allow_inconclusive))
    if recording is not None and recording.recorder.written:
        print(f"{len(recording.recorder.written)} cassette(s) written under {tape.directory}")
    misses = _misses(replayers)
    if misses:
        print(miss_summary(misses))
        return EXIT_BAD_INPUT
    if any(run.pattern_error for result in results for run in result.runs):
        bad = next(r.error for res in results for r in res.runs if r.pattern_error)
        raise InputError(str(bad))
    failed = any(
        r.failed
        or (args.strict and r.verdict == NOT_RED)
        or (r.verdict == INCONCLUSIVE and not args.allow_inconclusive)
        for r in results
    )
    return 1 if failed else 0


def _in_suite_order(
    suites: list[PressureSuite], results: list[ScenarioResult]
) -> list[ScenarioResult]:
    order = {
        (suite.skill.name, scenario.id): index
        for index, (suite, scenario) in enumerate(
            (suite, scenario) for suite in suites for scenario in suite.scenarios
        )
    }
    return sorted(results, key=lambda r: order.get((r.skill, r.scenario.id), len(order)))


def _misses(replayers: dict[Path, ReplayTurnRunner]) -> list[Miss]:
    return [miss for replayer in replayers.values() for miss in replayer.misses]
