"""``skilltest pressure``: the inner loop, one turn with and without the skill."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skilltest.cli import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_MAX_COST,
    EXIT_OK,
    help_line,
    interrupted_exit_code,
)
from skilltest.cli.display import Display
from skilltest.cli.layer_run import print_blocks, print_notice
from skilltest.cli.matrix_run import add_matrix_option, apply_suite_matrix, run_matrix
from skilltest.cli.options import (
    add_against_option,
    add_backend_options,
    add_batch_options,
    add_compared_options,
    add_output_options,
    add_scale_options,
    add_suite_arguments,
    non_negative_int,
    options_from,
    positive_float,
    positive_int,
    unit_interval,
)
from skilltest.errors import InputError
from skilltest.runners.base import DEFAULT_MODEL

DEFAULT_SUITE_DIR = Path("tests/skill-pressure")
NOTES = (
    "assumed: ~4 characters per token; each answer 400 tokens (at most --max-tokens); a skill "
    "of 1024 tokens or more read from the prompt cache after its first request",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "pressure",
        help=help_line("pressure"),
        description=(
            "Sends each scenario's prompt with the skill as the system prompt and without it, "
            "K times each, and judges the answers with the suite's regex patterns."
        ),
    )
    add_suite_arguments(parser, default_dir=DEFAULT_SUITE_DIR)
    add_compared_options(parser)
    add_backend_options(parser, backends=("anthropic", "claude", "emulator"))
    add_output_options(parser, only="scenarios", example="index-*")
    add_scale_options(parser, unit="scenario (skill/id, with all its arms and repetitions)")
    parser.add_argument("--model", help=f"model name (default: the suite's, else {DEFAULT_MODEL})")
    add_matrix_option(parser)
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
    add_against_option(
        parser, what=" as an arm 'previous', and say per scenario whether the edit improved it"
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
    add_batch_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest import pressure
    from skilltest.flow.tape import miss_summary
    from skilltest.pressure.report import (
        batch_price_note,
        batch_resume_line,
        batch_summary,
        render_failures,
        render_summary,
        render_table,
    )

    options = options_from(args, pressure.PressureOptions)
    apply_suite_matrix(
        args,
        options.suites,
        DEFAULT_SUITE_DIR,
        layer="pressure",
        example="tests/skill-pressure/<skill>.yaml",
    )
    if args.models is not None:
        return run_matrix(options, args, label="pressure", notes=NOTES)
    if args.dry_run:
        from skilltest.cost.render import render_estimate

        estimates = pressure.estimate(options)
        notes: tuple[str, ...] = NOTES
        if options.batch or options.resume_batch is not None:
            notes += (batch_price_note(estimates),)
        print(render_estimate(estimates, noun="scenarios", notes=notes))
        return EXIT_OK
    display = Display("pressure")
    try:
        results = pressure.run(options, observer=display)
    except KeyboardInterrupt as exc:
        if display.partial is None:
            raise  # before any run: nothing was kept
        kept = options.outputs.results
        print(
            f"skilltest: interrupted; {len(display.partial.scenarios)} finished scenario(s) kept"
            + (f" in {kept}" if kept else ""),
            file=sys.stderr,
        )
        if resumable := batch_resume_line(display.partial.batch):
            print(resumable, file=sys.stderr)
        return interrupted_exit_code(exc)
    print_notice(results.provenance)  # an offline run says so before any number
    print(render_table(results.scenarios))
    summary = render_summary(
        results.scenarios, strict=options.strict, allow_inconclusive=options.allow_inconclusive
    )
    print_blocks(render_failures(results.scenarios), summary)
    if results.batch is not None:
        print(batch_summary(results.batch))
    if results.cassettes_written:
        print(f"{results.cassettes_written} cassette(s) written under {results.tape.directory}")
    if results.misses:
        print(miss_summary(len(results.misses)))
        return EXIT_BAD_INPUT
    if results.bad_input is not None:
        raise InputError(results.bad_input)
    if results.stopped is not None:
        print(f"stopped, results incomplete: {results.stopped['reason']}")
        return EXIT_MAX_COST
    return EXIT_FAILED if results.failed else EXIT_OK
