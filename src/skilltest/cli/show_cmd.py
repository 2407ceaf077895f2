"""``skilltest show``: a run's trace as a readable timeline."""

from __future__ import annotations

import argparse
from pathlib import Path

from skilltest.cli import EXIT_OK, help_line


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "show",
        help=help_line("show"),
        description=(
            "Prints a trace written beside a run's transcript: the suite, scenario, arm and "
            "versions; each user turn, model response, assistant text, tool call with its "
            "result, HTTP call to a fake and error, numbered; then the score, its components, "
            "the world's verdict, tokens, cost and duration. Exit 0; 2 for an unreadable trace."
        ),
    )
    parser.add_argument("trace", type=Path, metavar="TRACE", help="a .trace.jsonl file")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest.trace.read import read_trace
    from skilltest.trace.timeline import render

    print(render(read_trace(args.trace)))
    return EXIT_OK
