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
            "HTML report to --html FILE. A matrix's results file (--models, --claude-versions), "
            "given alone, gets the matrix's summary and page: a column per cell."
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
        "--report",
        dest="html",
        type=output_file,
        metavar="FILE",
        help="write the HTML report here (one self-contained file: tables, plots, every run; "
        "transcript links relative to its folder; --report, as the layers name it, is the same)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest.matrix.results import is_matrix_file
    from skilltest.report.files import read_any_results, write_report
    from skilltest.report.markdown import Document, render_markdown

    matrices = [path for path in args.results if is_matrix_file(path)]
    if matrices:
        return _report_matrix(args, matrices)
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


def _report_matrix(args: argparse.Namespace, matrices: list[Path]) -> int:
    """A matrix's file: its Markdown summary (printed, or to ``--markdown``) and its page with
    each cell's own report beside it (``--html``)."""
    from skilltest.errors import InputError
    from skilltest.matrix.html import write_matrix_html
    from skilltest.matrix.report import render_markdown
    from skilltest.matrix.results import read_matrix
    from skilltest.report.files import write_report

    if len(args.results) > 1:
        others = [str(path) for path in args.results if path != matrices[0]]
        raise InputError(
            "a matrix's results file is reported alone; also given: " + ", ".join(others),
            location=str(matrices[0]),
            fix="run skilltest report once per matrix's file (skilltest merge puts a matrix's "
            "shards together first)",
        )
    document = read_matrix(matrices[0])
    if args.html is not None:
        write_matrix_html(document, args.html, cwd=Path.cwd())
        print(f"wrote {args.html}")
    text = render_markdown(document)
    if args.markdown is not None:
        write_report(args.markdown, text)
        print(f"wrote {args.markdown}")
    elif args.html is None:
        print(text, end="")
    return EXIT_OK
