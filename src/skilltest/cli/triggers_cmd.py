"""``skilltest triggers``: does the description make a skill fire when it should, only then?"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from skilltest.cli import EXIT_FAILED, EXIT_OK, help_line
from skilltest.cli.layer_run import print_blocks, run_layer, run_line
from skilltest.cli.matrix_run import (
    add_matrix_option,
    apply_suite_matrix,
    matrix_asked,
    refuse_rescore,
    run_matrix,
)
from skilltest.cli.options import (
    add_against_option,
    add_agent_option,
    add_backend_options,
    add_output_options,
    add_repetition_options,
    add_rescore_option,
    add_scale_options,
    add_suite_arguments,
    add_tape_options,
    check_rescore_choice,
    options_from,
    unit_interval,
)

if TYPE_CHECKING:
    from skilltest.triggers import TriggerOptions, TriggerResults

DEFAULT_SUITE_DIR = Path("tests/triggers")
BACKENDS = ("claude", "emulator")


NOTES = (
    "assumed per CLI run: 15,580 tokens of the CLI's own context (claude 2.1.328) before the "
    "skills' listing and the query; 2 requests (a run ends at the call that decides it), the "
    "second reading the first's context again plus 500 tokens, each writing 150; the CLI's "
    "default model priced as opus",
)


def notes_for(agent: str | None) -> tuple[str, ...]:
    """What a ``--dry-run`` estimate assumes; for another agent, that it assumes Claude Code's."""
    if agent in (None, "claude-code"):
        return NOTES
    return (
        *NOTES,
        f"--agent {agent}: the estimate assumes Claude Code's context and requests; {agent}'s "
        "own differ",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "triggers",
        help=help_line("triggers"),
        description=(
            "Runs each query of a trigger suite K times (or, with -k auto, until its verdict is "
            "decided) through the real claude CLI (or, with --agent, OpenCode's or Codex's) with "
            "the skill (and the suite's distractors) installed, stops each run as soon as it is "
            "known whether the skill fired, and reports per query the firing rate with the exact "
            "interval its verdict reads (pass, miss, false-trigger or inconclusive) and per suite "
            "precision, recall and accuracy. "
            "Without credentials the CLI talks to the offline "
            "model emulator using each suite's model script; with --replay DIR it answers from "
            "cassettes recorded with --record DIR."
        ),
    )
    add_suite_arguments(parser, default_dir=DEFAULT_SUITE_DIR)
    add_backend_options(parser, backends=BACKENDS)
    parser.add_argument("--model", help="model passed to claude --model (default: the suite's)")
    add_agent_option(parser, runs="queries")
    add_matrix_option(parser, cli=True, agents=True)
    add_repetition_options(parser, unit="query", item="query", aliases=("--runs-per-query",))
    parser.add_argument(
        "--trigger-threshold",
        dest="threshold",
        type=unit_interval,
        metavar="T",
        help="the share of runs that decides a query, 0 to 1 (default: the suite's threshold, "
        "else 0.5; skill-creator's option of the same name)",
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
    add_against_option(
        parser,
        what=" as a variant 'previous' (previous-2... for more), and say per query whether the "
        "edit improved its firing",
        each="a variant of its own",
    )
    add_rescore_option(parser, layer="triggers")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest import triggers

    if args.rescore is not None:
        refuse_rescore(args)
        return _rescore(args)
    from skilltest.triggers.layer import candidate_description

    # What the command line names is checked before the suites are read for their matrix.
    given = options_from(args, triggers.TriggerOptions)
    candidate_description(given)
    apply_suite_matrix(
        args,
        tuple(args.suites or ()),
        DEFAULT_SUITE_DIR,
        layer="triggers",
        example="tests/triggers/<skill>.yaml",
    )
    if matrix_asked(args):
        return run_matrix(
            options_from(args, triggers.TriggerOptions),
            args,
            label="triggers",
            notes=notes_for(args.agent),
            noun="queries",
        )
    return run_layer(
        triggers,
        options_from(args, triggers.TriggerOptions),
        dry_run=args.dry_run,
        label="triggers",
        noun="queries",
        notes=notes_for(args.agent),
        interrupted=_interrupted,
        finished=_finished,
    )


def _rescore(args: argparse.Namespace) -> int:
    from skilltest import triggers
    from skilltest.cli.display import Display
    from skilltest.cli.layer_run import print_notice
    from skilltest.report.provenance import rescored_text
    from skilltest.triggers.rescore import rescore

    check_rescore_choice(args)
    options = options_from(args, triggers.TriggerOptions)
    results = rescore(options, args.rescore, observer=Display("rescore"))
    print_notice(results.provenance)
    origin = results.provenance.rescored_from if results.provenance is not None else None
    print(f"rescored from {rescored_text(origin or {})}: no claude started, no model asked")
    return _finished(results, options)


def _interrupted(partial: TriggerResults) -> tuple[str | None, str]:
    from skilltest.triggers.report import render_table

    table = render_table(partial.flat) if partial.finished_queries else None
    return table, f"{partial.finished_queries} query result(s)"


def _finished(results: TriggerResults, options: TriggerOptions) -> int:
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

    flat, context = results.flat, results.context
    queries = sum(len(each[0].queries) for each in results.suites)
    plans = {q.repetitions.describe() for s in flat for q in s.queries if q.repetitions}
    agent = (context.get("agent") or {}).get("name") or "claude-code"
    claude = agent == "claude-code"
    print(
        run_line(
            agent="claude" if claude else agent,
            version=context["claude_version"] if claude else context["agent"]["version"],
            backend=context["backend"],
            counted=f"{queries} queries" + (f", {', '.join(sorted(plans))}" if plans else ""),
            jobs=context["jobs"],
            output_dir=options.output_dir,
        )
    )
    print(render_table(flat))
    print()
    for suite in flat:
        print(render_suite_line(suite))
    print(render_costs(flat))
    print_blocks(render_failures(flat, allow_inconclusive=results.allow_inconclusive))
    if results.revisions:
        print_blocks(render_against(results.revisions, results.suites))
    else:
        print_blocks(*(render_comparison(*each) for each in results.suites if len(each) == 2))
    print_blocks("\n".join(f"warning: {w}" for w in warnings_of(flat)), render_misses(flat))
    return EXIT_OK if results.passed else EXIT_FAILED
