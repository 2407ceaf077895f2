"""``skilltest scenarios``: the outer loop, multi-turn claude runs with and without the skill."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path
from typing import Any

from skilltest.claude.binary import find_claude
from skilltest.claude.isolation import unconfined_bash
from skilltest.cli import (
    EXIT_BAD_INPUT,
    EXIT_CANARY,
    EXIT_FAILED,
    EXIT_OK,
    interrupted_exit_code,
    run_async,
)
from skilltest.cli.options import (
    Tape,
    add_common_run_options,
    check_unique_scenarios,
    miss_summary,
    number,
    refuse_against_with_tape,
    repetition_plan,
    select_scenarios,
    tape_mode,
    unit_interval,
    write_markdown,
    write_report,
)
from skilltest.errors import InputError
from skilltest.report.files import write_results
from skilltest.report.junit import write_junit
from skilltest.report.progress import Progress
from skilltest.revision import previous_skills
from skilltest.runners.backends import BackendChoice, choose_backend
from skilltest.scenarios.canary import canary_report, render_canary
from skilltest.scenarios.endpoints import (
    BACKENDS,
    EMULATOR_NOTICE,
    EmulatorEndpoint,
    LiveEndpoint,
)
from skilltest.scenarios.report import (
    RunContext,
    junit_cases,
    render_failures,
    render_summary,
    render_table,
    render_unscored,
    render_warnings,
    render_world,
    results_document,
)
from skilltest.scenarios.run import plan, run_suites
from skilltest.scenarios.runner import ClaudeCliRunner, Endpoint, RunRequest
from skilltest.scenarios.suite import Overrides, ScenarioSuite, load_scenario_suite
from skilltest.scenarios.tools import check_scenario_tools
from skilltest.scenarios.verdict import ScenarioVerdict
from skilltest.scenarios.wiring import check_wiring
from skilltest.skills import Skill
from skilltest.suite.loader import discover_suites

DEFAULT_SUITE_DIR = Path("tests/scenarios")


_delta = number(float, lambda v: -1.0 <= v <= 1.0, "a number between -1 and 1")
"""A with-minus-without delta threshold."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "scenarios",
        help="end-to-end tests: does the skill change what the agent does? (the outer loop)",
        description=(
            "Runs each scenario through the real claude CLI with the skill installed and "
            "without it, K times each, in fresh isolated sandboxes, and scores the tool calls "
            "with the scenario's rubric. Without credentials the CLI talks to the offline model "
            "emulator (a scripted stand-in) using each suite's model script."
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
    parser.add_argument(
        "--output-dir",
        type=Path,
        metavar="DIR",
        help="where raw transcripts and stderr are kept (default: output/ beside each suite)",
    )
    parser.add_argument("--model", help="model passed to claude --model (default: the CLI's)")
    parser.add_argument(
        "--comparison-only",
        action="store_true",
        help="run only the core subset, the scenarios marked `comparison: true` (and the "
        "canaries, which run first)",
    )
    parser.add_argument(
        "--min-score",
        type=unit_interval,
        help="with-skill mean a scenario needs (default: the suite's, else 0.6)",
    )
    parser.add_argument(
        "--min-delta",
        type=_delta,
        help="lowest passing with-minus-without delta (default: the suite's, else -0.1)",
    )
    parser.add_argument(
        "--against",
        metavar="REF",
        help="also run the skill as it was at REF (a git revision of the skill's repository, or "
        "a folder) as an arm 'previous', and say per scenario whether the edit improved it",
    )
    parser.set_defaults(handler=run)


def _endpoint(backend: str, args: argparse.Namespace, suites: list[ScenarioSuite]) -> Endpoint:
    if backend == "claude":
        return LiveEndpoint()
    endpoint = EmulatorEndpoint(args.script)
    for suite in suites:  # a bad or missing model script is bad input, before any run
        endpoint.load(suite.path, suite.model_script)
    return endpoint


def run(args: argparse.Namespace) -> int:
    overrides = Overrides(
        min_score=args.min_score,
        min_delta=args.min_delta,
        model=args.model,
        skill_only=args.skill_only,
        plugin_dir=args.plugin_dir,
    )
    paths = discover_suites(args.suites, DEFAULT_SUITE_DIR, example="tests/scenarios/<skill>.yaml")
    suites = [
        load_scenario_suite(
            p, skills_dir=args.skills_dir, overrides=overrides, skill_name=args.skill
        )
        for p in paths
    ]
    suites = select_scenarios(suites, args.only)
    if args.comparison_only:
        suites = _comparison_only(suites)
    check_unique_scenarios(
        [(s.skill.name, s.id, s.location) for suite in suites for s in suite.scenarios]
    )
    tape = tape_mode(args, layer="scenarios")
    refuse_against_with_tape(args.against, tape)
    with tempfile.TemporaryDirectory(prefix="skilltest-against-") as scratch:
        previous = _previous_skills(suites, args.against, Path(scratch))
        return _run(args, paths, suites, tape, previous)


def _previous_skills(
    suites: list[ScenarioSuite], ref: str | None, scratch: Path
) -> dict[Path, Skill]:
    """Each scenario's skill under test as it was at ``ref`` (by its SKILL.md's path), read
    once."""
    if ref is None:
        return {}
    scenarios = [scenario for suite in suites for scenario in suite.scenarios]
    for scenario in scenarios:
        if scenario.plugin is not None:
            raise InputError(
                f"scenario {scenario.id!r} tests the plugin {scenario.plugin.name!r}; "
                "--against compares revisions of a skill, not of a plugin",
                location=scenario.location,
                fix="run --against on suites of skills, or compare two results files with "
                "skilltest compare",
            )
    return previous_skills((scenario.skill for scenario in scenarios), ref, scratch)


def _run(
    args: argparse.Namespace,
    paths: list[Path],
    suites: list[ScenarioSuite],
    tape: Tape,
    previous: dict[Path, Skill],
) -> int:
    binary = find_claude(args.claude)
    if tape.replaying and not tape.record_missing:
        backend = BackendChoice("replay")
    else:
        backend = choose_backend(args.backend, live="claude", emulator_notice=EMULATOR_NOTICE)
    endpoint = _taped(
        _endpoint(backend.name, args, suites) if backend.name != "replay" else None,
        tape,
        suites,
        model=args.model,
        cli_version=binary.version,
    )
    if backend.notice:
        print(backend.notice, file=sys.stderr)
    if binary.warning:
        print(f"skilltest: warning: {binary.warning}", file=sys.stderr)
    notice = unconfined_bash(
        rule for suite in suites for s in suite.scenarios for rule in s.config.allowed_tools
    )
    if notice:
        print(f"skilltest: note: {notice}", file=sys.stderr)
    # Every MCP server answers initialize and tools/list before the first run, and the rubrics
    # name only tools that exist: a broken server stops the suite here, with its stderr.
    if not tape.replaying:  # replayed servers are not started: their cassettes answer
        check_scenario_tools([s for suite in suites for s in suite.scenarios if not s.skip])
    runner = ClaudeCliRunner(binary, endpoint)
    # Before anything could write to a controlled world: one read-only run proves the agent's
    # requests reach the fake (exit 2 with how they escaped when they do not).
    for line in run_async(check_wiring(suites, runner, args.output_dir)):
        print(f"skilltest: {line}", file=sys.stderr)
    context = RunContext(
        backend=backend.name,
        claude_version=binary.version,
        claude_path=str(binary.path),
        known_version=binary.known,
        suites=tuple(str(p) for p in paths),
        jobs=args.jobs,
        skill_only=args.skill_only,
    )
    repetitions = repetition_plan(args)
    planned = plan(suites, repetitions, args.against, lambda s: previous[s.skill.skill_file])
    finished: list[tuple[int, ScenarioVerdict]] = []
    ids = {(p.scenario.skill.name, p.scenario.id): i for i, p in enumerate(planned)}
    canaries = {(p.scenario.skill.name, p.scenario.id) for p in planned if p.scenario.canary}

    def in_order() -> list[ScenarioVerdict]:
        return [verdict for _, verdict in sorted(finished, key=lambda pair: pair[0])]

    def save(*, complete: bool, interrupted: bool = False) -> None:
        results = in_order()
        final = complete or interrupted  # the Markdown summary is written once, at the end
        if args.results is not None or final:
            document = results_document(
                results, context, complete=complete, interrupted=interrupted
            )
            report = canary_report(results, canaries)
            document["canary"] = report.to_dict() if report is not None else None
            document["replay"] = tape.to_dict(misses=[str(run.error) for run in _misses(results)])
            if args.results is not None:
                write_results(args.results, document)
            if final:
                write_markdown(args, document)
                write_report(args, document)
        if args.junit is not None:
            cases = junit_cases(results, allow_inconclusive=args.allow_inconclusive)
            write_junit(args.junit, "skilltest scenarios", cases)

    def on_verdict(verdict: ScenarioVerdict) -> None:
        finished.append((ids.get((verdict.skill, verdict.scenario_id), len(ids)), verdict))
        save(complete=False)

    save(complete=False)  # an unwritable --results or --junit fails now, before any run
    progress = Progress(sum(p.run_count for p in planned), "scenarios")
    try:
        run_async(
            run_suites(
                suites,
                runner,
                jobs=args.jobs,
                output_dir=args.output_dir,
                on_verdict=on_verdict,
                progress=progress,
                repetitions=repetitions,
                against=args.against,
                previous=lambda scenario: previous[scenario.skill.skill_file],
            )
        )
    except KeyboardInterrupt as exc:
        progress.close()
        recorder = getattr(endpoint, "recorder", None)
        if recorder is not None:
            recorder.flush()  # a run whose cassette the interrupt stopped writing
        save(complete=False, interrupted=True)
        if finished:
            print(render_table(in_order()))
        print(
            f"skilltest: interrupted; {len(finished)} of {len(planned)} scenario(s) finished"
            + (f" and kept in {args.results} (marked incomplete)" if args.results else ""),
            file=sys.stderr,
        )
        return interrupted_exit_code(exc)
    progress.close()
    save(complete=True)
    results = in_order()
    model = {"emulator": "scripted stand-in model", "replay": "recorded answers"}.get(
        backend.name, "real model"
    )
    kept = args.output_dir or "output/ beside each suite"
    print(
        f"claude {binary.version}, {backend.name} backend ({model}), {len(results)} scenarios, "
        f"-j {args.jobs}; raw transcripts in {kept}"
    )
    print(render_table(results))
    for block in (render_world(results), render_unscored(results), render_warnings(results)):
        if block:
            print()
            print(block)
    print()
    print(render_summary(results, allow_inconclusive=args.allow_inconclusive))
    canary = canary_report(results, canaries)
    if canary is not None:
        print(render_canary(canary))
    failures = render_failures(results)
    if failures:
        print()
        print(failures)
    written: set[Path] = getattr(getattr(endpoint, "recorder", None), "written", set())
    if written:
        print(f"{len(written)} cassette(s) written under {tape.directory}")
    misses = _misses(results)
    if misses:
        # Stale cassettes are bad input, not a failing skill.
        print(miss_summary(misses))
        return EXIT_BAD_INPUT
    if any(run.bad_input for result in results for run in result.runs):
        return EXIT_BAD_INPUT
    if canary is not None and not canary.meaningful:
        return EXIT_CANARY
    failing = [
        r for r in results if not r.passed and not (r.inconclusive and args.allow_inconclusive)
    ]
    return EXIT_FAILED if failing else EXIT_OK


def _taped(
    endpoint: Endpoint | None,
    tape: Tape,
    suites: list[ScenarioSuite],
    *,
    model: str | None,
    cli_version: str | None,
) -> Endpoint:
    """The endpoint with the recording or replaying point ``--record``/``--replay`` ask for."""
    if tape.directory is None:
        assert endpoint is not None
        return endpoint
    from skilltest.replay.normalise import Rules
    from skilltest.replay.recorder import Recorder
    from skilltest.replay.scenarios import RecordingEndpoint, ReplayEndpoint

    rules = {suite.path: suite.replay for suite in suites}

    def rules_of(request: RunRequest) -> Rules:
        return rules.get(request.suite_path, Rules())

    recorder = (
        Recorder(tape.directory, layer="scenarios", model=model, cli_version=cli_version)
        if tape.recording
        else None
    )
    if not tape.replaying:
        assert endpoint is not None and recorder is not None
        return RecordingEndpoint(endpoint, recorder, rules_of=rules_of)
    return ReplayEndpoint(tape.directory, rules_of=rules_of, fallback=endpoint, recorder=recorder)


def _misses(results: list[ScenarioVerdict]) -> list[Any]:
    return [
        run
        for result in results
        for run in result.runs
        if run.error is not None and run.error.startswith("replay miss:")
    ]


def _comparison_only(suites: list[ScenarioSuite]) -> list[ScenarioSuite]:
    """The core subset (``comparison: true``) and the canaries that guard it.

    Raises:
        InputError: no scenario is marked ``comparison: true``.
    """
    kept = [
        dataclasses.replace(suite, scenarios=core)
        for suite in suites
        if (core := tuple(s for s in suite.scenarios if s.core or s.canary))
    ]
    if not any(s.core for suite in kept for s in suite.scenarios):
        raise InputError(
            "no scenario is marked `comparison: true`, the core subset --comparison-only runs",
            location=", ".join(str(suite.path) for suite in suites),
            fix="add `comparison: true` to the core scenarios (or the suite), or leave out "
            "--comparison-only",
        )
    return kept
