"""``skilltest triggers``: does the description make a skill fire when it should, only then?"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skilltest.claude.binary import find_claude
from skilltest.cli import EXIT_FAILED, EXIT_OK, interrupted_exit_code, run_async
from skilltest.cli.options import (
    add_markdown_option,
    add_report_option,
    check_unique_scenarios,
    output_file,
    positive_int,
    repetition_count,
    write_markdown,
    write_report,
)
from skilltest.errors import InputError
from skilltest.report.files import write_results
from skilltest.report.junit import write_junit
from skilltest.report.progress import Progress
from skilltest.revision import PREVIOUS, previous_skills
from skilltest.runners.backends import choose_backend
from skilltest.scenarios.endpoints import (
    BACKENDS,
    EMULATOR_NOTICE,
    EmulatorEndpoint,
    LiveEndpoint,
)
from skilltest.scenarios.runner import ClaudeCliRunner, Endpoint
from skilltest.skills import Skill
from skilltest.suite.loader import discover_suites
from skilltest.triggers.report import (
    junit_cases,
    render_against,
    render_comparison,
    render_costs,
    render_failures,
    render_suite_line,
    render_table,
    results_document,
    warnings_of,
)
from skilltest.triggers.run import CURRENT, Variant, assemble, run_triggers
from skilltest.triggers.suite import TriggerSuite, load_trigger_suite
from skilltest.triggers.verdict import QueryResult, SuiteResult, TriggerRun, against_previous

DEFAULT_SUITE_DIR = Path("tests/triggers")
MAX_DESCRIPTION = 1024
"""The longest description the Agent Skills format allows."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "triggers",
        help="trigger tests: does the skill's description make it fire when it should?",
        description=(
            "Runs each query of a trigger suite K times through the real claude CLI with the "
            "skill (and the suite's distractors) installed, stops each run as soon as it is "
            "known whether the skill fired, and reports per query the firing rate and per suite "
            "precision, recall and accuracy. Without credentials the CLI talks to the offline "
            "model emulator using each suite's model script."
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
    parser.add_argument(
        "--skills-dir", type=Path, help="folder holding <skill>/SKILL.md (default: nearest skills/)"
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        help="where answers come from (default: live when credentials are set, else emulator)",
    )
    parser.add_argument(
        "--script", type=Path, help="emulator model script (default: the suite's model_script)"
    )
    parser.add_argument(
        "--claude", type=Path, help="claude binary (default: $SKILLTEST_CLAUDE, .tools/, PATH)"
    )
    parser.add_argument("--model", help="model passed to claude --model (default: the suite's)")
    parser.add_argument(
        "-k",
        "--repeat",
        type=repetition_count,
        metavar="K",
        help="runs per query (default: the suite's repetitions, else 3)",
    )
    parser.add_argument(
        "-j", "--jobs", type=positive_int, default=4, metavar="N", help="runs in flight at once (4)"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="ID",
        help="run only queries whose id matches this glob, e.g. 'loki-*' (repeatable)",
    )
    parser.add_argument(
        "--results", type=output_file, metavar="FILE", help="write results JSON here"
    )
    parser.add_argument("--junit", type=output_file, metavar="FILE", help="write JUnit XML here")
    add_markdown_option(parser)
    add_report_option(parser)
    parser.add_argument(
        "--output-dir",
        type=Path,
        metavar="DIR",
        help="where raw transcripts and stderr are kept (default: output/ beside each suite)",
    )
    described = parser.add_mutually_exclusive_group()
    described.add_argument(
        "--description",
        metavar="TEXT",
        help="test this description instead of the skill's own (SKILL.md is not edited)",
    )
    described.add_argument(
        "--description-file",
        type=Path,
        metavar="FILE",
        help="test the description in FILE (its whole text) instead of the skill's own",
    )
    parser.add_argument(
        "--compare-description",
        action="store_true",
        help="with --description or --description-file: run the current description and the "
        "candidate side by side and report their differences",
    )
    parser.add_argument(
        "--against",
        metavar="REF",
        help="also run the skill as it was at REF (a git revision of the skill's repository, or "
        "a folder) and say per query whether the edit improved its firing",
    )
    parser.set_defaults(handler=run)


def candidate_description(args: argparse.Namespace) -> str | None:
    """``--description`` or the text of ``--description-file``, checked.

    Raises:
        InputError: an empty or too long description, an unreadable file, or
            ``--compare-description`` without a description.
    """
    if args.description_file is not None:
        where = "--description-file"
        try:
            text: str | None = args.description_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(
                f"cannot read {args.description_file}: {exc}",
                location=where,
                fix="give a readable UTF-8 text file holding the description",
            ) from exc
    else:
        where, text = "--description", args.description
    if text is None:
        if args.compare_description:
            raise InputError(
                "--compare-description needs the description to compare with",
                location="--compare-description",
                fix="add --description TEXT or --description-file FILE",
            )
        return None
    if not text.strip() or len(text) > MAX_DESCRIPTION:
        raise InputError(
            f"the description has {len(text.strip())} characters",
            location=where,
            fix=f"give a description of 1 to {MAX_DESCRIPTION} characters (the Agent Skills limit)",
        )
    return text.strip()


def select_queries(suites: list[TriggerSuite], only: Sequence[str] | None) -> list[TriggerSuite]:
    """The suites with only the queries whose id matches one of the ``--only`` globs.

    Raises:
        InputError: no query matches, naming the ids there are.
    """
    if not only:
        return suites
    selected = []
    for suite in suites:
        kept = tuple(q for q in suite.queries if any(fnmatch.fnmatchcase(q.id, g) for g in only))
        if kept:
            selected.append(dataclasses.replace(suite, queries=kept))
    if not selected:
        ids = sorted({q.id for suite in suites for q in suite.queries})
        raise InputError(
            "matches no query",
            location="--only " + " ".join(only),
            fix="use one of the ids (globs like 'loki-*' work): " + ", ".join(ids),
        )
    return selected


def _endpoint(backend: str, args: argparse.Namespace, suites: list[TriggerSuite]) -> Endpoint:
    if backend == "claude":
        return LiveEndpoint()
    endpoint = EmulatorEndpoint(args.script)
    for suite in suites:  # a bad or missing model script is bad input, before any run
        endpoint.load(suite.path, suite.model_script)
    return endpoint


def _previous_skills(suites: list[TriggerSuite], ref: str, scratch: Path) -> dict[Path, Skill]:
    """Each suite's skill as it was at ``ref`` (by the current SKILL.md's path), read once."""
    return previous_skills((suite.skill for suite in suites), ref, scratch)


def run(args: argparse.Namespace) -> int:
    if args.against is not None and (
        args.description is not None
        or args.description_file is not None
        or args.compare_description
    ):
        raise InputError(
            "--against compares the skill with a previous revision; it does not take another "
            "description",
            location=f"--against {args.against}",
            fix="drop --description, --description-file and --compare-description, or drop "
            "--against",
        )
    with tempfile.TemporaryDirectory(prefix="skilltest-against-") as scratch:
        return _run(args, Path(scratch))


def _run(args: argparse.Namespace, scratch: Path) -> int:
    candidate = candidate_description(args)
    paths = discover_suites(args.suites, DEFAULT_SUITE_DIR, example="tests/triggers/<skill>.yaml")
    suites = [
        load_trigger_suite(p, skills_dir=args.skills_dir, repetitions=args.repeat, model=args.model)
        for p in paths
    ]
    suites = select_queries(suites, args.only)
    check_unique_scenarios([(s.skill.name, q.id, q.location) for s in suites for q in s.queries])
    tested = sorted({suite.skill.name for suite in suites})
    if candidate is not None and len(tested) > 1:
        raise InputError(
            f"another description is for one skill, and these suites test {', '.join(tested)}",
            location="--description-file" if args.description_file else "--description",
            fix="name the suite of the skill whose description you are tuning, e.g. "
            f"skilltest triggers {tested[0]} --description ...",
        )
    if args.against is not None:
        # The skill at REF runs as the second arm, alternating with the current one.
        previous = _previous_skills(suites, args.against, scratch)
        variants: tuple[Variant, ...] = (CURRENT, Variant(PREVIOUS, None, skills=previous))
    elif candidate is None:
        variants = (CURRENT,)
    elif args.compare_description:
        variants = (CURRENT, Variant("candidate", candidate))
    else:
        # Only the other description runs; it is reported as the one under test.
        variants = (Variant("current", candidate),)
    binary = find_claude(args.claude)
    backend = choose_backend(args.backend, live="claude", emulator_notice=EMULATOR_NOTICE)
    endpoint = _endpoint(backend.name, args, suites)
    if backend.notice:
        print(backend.notice, file=sys.stderr)
    if binary.warning:
        print(f"skilltest: warning: {binary.warning}", file=sys.stderr)
    runner = ClaudeCliRunner(binary, endpoint)
    context: dict[str, Any] = {
        "backend": backend.name,
        "claude_version": binary.version,
        "claude_path": str(binary.path),
        "suite_files": [str(p) for p in paths],
        "jobs": args.jobs,
    }
    finished: dict[tuple[int, int, int], QueryResult] = {}

    def current() -> list[list[SuiteResult]]:
        results = assemble(suites, variants, finished)
        if args.against is None:
            return results
        return [[against_previous(args.against, now, before), before] for now, before in results]

    def save(*, complete: bool, interrupted: bool = False) -> None:
        results = current()
        document = results_document(results, context, complete=complete, interrupted=interrupted)
        if args.results is not None:
            write_results(args.results, document)
        if complete or interrupted:  # the Markdown summary is written once, at the end
            write_markdown(args, document)
            write_report(args, document)
        if args.junit is not None:
            # The skill at --against REF is the yardstick: its misses are no failing cases.
            flat = [suite for each in results for suite in each if suite.variant != PREVIOUS]
            write_junit(args.junit, "skilltest triggers", junit_cases(flat))

    def on_result(s: int, v: int, q: int, result: QueryResult) -> None:
        finished[s, v, q] = result
        save(complete=False)

    total = sum(len(s.queries) * s.repetitions for s in suites) * len(variants)
    progress = Progress(total, "triggers")

    def on_run(run: TriggerRun) -> None:
        progress.advance(error=run.ended == "error")

    save(complete=False)  # an unwritable --results or --junit fails now, before any run
    try:
        run_async(
            run_triggers(
                suites,
                runner,
                variants=variants,
                jobs=args.jobs,
                output_dir=args.output_dir,
                on_result=on_result,
                on_run=on_run,
            )
        )
    except KeyboardInterrupt as exc:
        progress.close()
        save(complete=False, interrupted=True)
        flat = [suite for each in current() for suite in each]
        if finished:
            print(render_table(flat))
        print(
            f"skilltest: interrupted; {len(finished)} query result(s) finished"
            + (f" and kept in {args.results} (marked incomplete)" if args.results else ""),
            file=sys.stderr,
        )
        return interrupted_exit_code(exc)
    progress.close()
    save(complete=True)
    results = current()
    flat = [suite for each in results for suite in each]
    model = "scripted stand-in model" if backend.name == "emulator" else "real model"
    queries = sum(len(s.queries) for s in suites)
    print(
        f"claude {binary.version}, {backend.name} backend ({model}), {queries} queries, "
        f"K {', '.join(sorted({str(s.repetitions) for s in suites}))}, -j {args.jobs}; "
        f"raw transcripts in {args.output_dir or 'output/ beside each suite'}"
    )
    print(render_table(flat))
    print()
    for suite in flat:
        print(render_suite_line(suite))
    print(render_costs(flat))
    failures = render_failures(flat)
    if failures:
        print()
        print(failures)
    if args.against is not None:
        print()
        print(render_against(args.against, [(now, before) for now, before in results]))
    for each in results:
        if len(each) == 2 and args.against is None:
            print()
            print(render_comparison(*each))
    warnings = warnings_of(flat)
    if warnings:
        print()
        for warning in warnings:
            print(f"warning: {warning}")
    # The skill at REF is the yardstick: its own misses do not fail the run.
    judged = [suite for suite in flat if suite.variant != PREVIOUS]
    return EXIT_OK if all(suite.passed for suite in judged) else EXIT_FAILED
