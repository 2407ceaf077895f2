"""``skilltest triggers``: does the description make a skill fire when it should, only then?"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skilltest.cli import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_MAX_COST,
    EXIT_OK,
    interrupted_exit_code,
)
from skilltest.cli.display import Display
from skilltest.cli.options import (
    add_against_option,
    add_backend_options,
    add_output_options,
    add_scale_options,
    add_suite_arguments,
    add_tape_options,
    options_from,
    repetition_count,
)

DEFAULT_SUITE_DIR = Path("tests/triggers")
BACKENDS = ("claude", "emulator")


NOTES = (
    "assumed per CLI run: 15,580 tokens of the CLI's own context (claude 2.1.328) before the "
    "skills' listing and the query; 2 requests (a run ends at the call that decides it), the "
    "second reading the first's context again plus 500 tokens, each writing 150; the CLI's "
    "default model priced as opus",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "triggers",
        help="trigger tests: does the skill's description make it fire when it should?",
        description=(
            "Runs each query of a trigger suite K times through the real claude CLI with the "
            "skill (and the suite's distractors) installed, stops each run as soon as it is "
            "known whether the skill fired, and reports per query the firing rate and per suite "
            "precision, recall and accuracy. Without credentials the CLI talks to the offline "
            "model emulator using each suite's model script; with --replay DIR it answers from "
            "cassettes recorded with --record DIR."
        ),
    )
    add_suite_arguments(parser, default_dir=DEFAULT_SUITE_DIR)
    add_backend_options(parser, backends=BACKENDS)
    parser.add_argument("--model", help="model passed to claude --model (default: the suite's)")
    parser.add_argument(
        "-k",
        "--repeat",
        type=repetition_count,
        metavar="K",
        help="runs per query (default: the suite's repetitions, else 3)",
    )
    add_output_options(parser, only="queries", example="loki-*")
    add_scale_options(parser, unit="query (skill/id, with all its runs)")
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
    add_tape_options(parser)
    add_against_option(parser, what=" and say per query whether the edit improved its firing")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest import triggers
    from skilltest.flow.tape import miss_summary
    from skilltest.report.provenance import notice
    from skilltest.triggers.report import (
        render_against,
        render_comparison,
        render_costs,
        render_failures,
        render_misses,
        render_suite_line,
        render_table,
        warnings_of,
    )

    options = options_from(args, triggers.TriggerOptions)
    if args.dry_run:
        from skilltest.cost.render import render_estimate

        print(render_estimate(triggers.estimate(options), noun="queries", notes=NOTES))
        return EXIT_OK
    display = Display("triggers")
    try:
        results = triggers.run(options, observer=display)
    except KeyboardInterrupt as exc:
        if display.partial is None:
            raise  # before any run: nothing was kept
        partial = display.partial
        if partial.finished_queries:
            said = notice(partial.provenance) if partial.provenance is not None else None
            if said:
                print(said)
            print(render_table(partial.flat))
        kept = options.outputs.results
        print(
            f"skilltest: interrupted; {partial.finished_queries} query result(s) finished"
            + (f" and kept in {kept} (marked incomplete)" if kept else ""),
            file=sys.stderr,
        )
        return interrupted_exit_code(exc)
    flat = results.flat
    context = results.context
    said = notice(results.provenance) if results.provenance is not None else None
    if said:
        print(said)  # an offline run says so before any number
    model = {"emulator": "scripted stand-in model", "replay": "recorded answers"}.get(
        context["backend"], "real model"
    )
    queries = sum(len(each[0].queries) for each in results.suites)
    ks = sorted({str(len(q.runs)) for s in flat for q in s.queries})
    print(
        f"claude {context['claude_version']}, {context['backend']} backend ({model}), "
        f"{queries} queries, K {', '.join(ks)}, -j {context['jobs']}; "
        f"raw transcripts in {options.output_dir or 'output/ beside each suite'}"
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
    if results.against is not None:
        print()
        print(render_against(results.against, [(now, before) for now, before in results.suites]))
    for each in results.suites:
        if len(each) == 2 and results.against is None:
            print()
            print(render_comparison(*each))
    warnings = warnings_of(flat)
    if warnings:
        print()
        for warning in warnings:
            print(f"warning: {warning}")
    misses = render_misses(flat)
    if misses:
        print()
        print(misses)
    if results.cassettes_written:
        print(f"{results.cassettes_written} cassette(s) written under {results.tape.directory}")
    if results.misses:
        # Stale cassettes are bad input, not a failing description.
        print(miss_summary(len(results.misses)))
        return EXIT_BAD_INPUT
    if results.stopped is not None:
        print(f"stopped, results incomplete: {results.stopped['reason']}")
        return EXIT_MAX_COST
    return EXIT_OK if results.passed else EXIT_FAILED
