"""``skilltest report``: the views of results files already written (shards or layers)."""

from __future__ import annotations

import argparse
from pathlib import Path

from skilltest.cli import EXIT_OK, help_line
from skilltest.cli.options import output_file


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help=help_line("report"),
        description=(
            "Reads results files written by --results (any layer, shards of one run combined) "
            "and writes their Markdown summary to --markdown FILE (or prints it) and their "
            "HTML report to --html FILE."
        ),
    )
    parser.add_argument(
        "results", nargs="+", type=Path, metavar="RESULTS.json", help="results files"
    )
    parser.add_argument(
        "--markdown",
        type=output_file,
        metavar="FILE",
        help="write the Markdown summary here (transcript links relative to its folder); "
        "default: print it",
    )
    parser.add_argument(
        "--html",
        type=output_file,
        metavar="FILE",
        help="write the HTML report here (one self-contained file: tables, plots, every run; "
        "transcript links relative to its folder)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest.report.files import read_any_results, write_report
    from skilltest.report.markdown import Document, render_markdown

    documents = [Document(str(path), read_any_results(path)) for path in args.results]
    cwd = Path.cwd()
    if args.html is not None:
        from skilltest.report.html import render_html

        page = render_html(documents, cwd=cwd, link_from=(cwd / args.html).parent)
        write_report(args.html, page)
        print(f"wrote {args.html}")
        if args.markdown is None:
            return EXIT_OK
    if args.markdown is None:
        print(render_markdown(documents, link_from=cwd, cwd=cwd), end="")
        return EXIT_OK
    text = render_markdown(documents, link_from=(cwd / args.markdown).parent, cwd=cwd)
    write_report(args.markdown, text)
    print(f"wrote {args.markdown}")
    return EXIT_OK
