"""``skilltest compare``: what changed between two results files of one layer."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from skilltest.cli import EXIT_OK, help_line
from skilltest.cli.options import output_file


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help=help_line("compare"),
        description=(
            "Matches the scenarios of two results files of one layer and shows, per scenario, "
            "the verdict before and after and the change of the with-skill figure and of the "
            "delta with intervals; scenarios that are new or vanished. Exit 0; 2 for bad input."
        ),
    )
    parser.add_argument("old", type=Path, metavar="OLD.json", help="the earlier results file")
    parser.add_argument("new", type=Path, metavar="NEW.json", help="the later results file")
    view = parser.add_mutually_exclusive_group()
    view.add_argument("--json", action="store_true", help="print the comparison as JSON")
    view.add_argument(
        "--markdown", type=output_file, metavar="FILE", help="write the comparison as Markdown"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest.matrix.results import is_matrix_file
    from skilltest.report.compare import compare, render_markdown, render_text, to_dict
    from skilltest.report.files import read_any_results, write_report

    if is_matrix_file(args.old) or is_matrix_file(args.new):
        return _compare_matrices(args)
    documents = [read_any_results(args.old), read_any_results(args.new)]
    comparison = compare(*documents, old_name=str(args.old), new_name=str(args.new))
    warn_of_claims(zip((args.old, args.new), documents, strict=True))
    if args.json:
        print(json.dumps(to_dict(comparison), indent=2, ensure_ascii=False))
    elif args.markdown is not None:
        write_report(args.markdown, render_markdown(comparison))
        print(f"wrote {args.markdown}")
    else:
        print(render_text(comparison))
    return EXIT_OK


def _compare_matrices(args: argparse.Namespace) -> int:
    from skilltest.matrix.changes import compare_matrices
    from skilltest.matrix.results import read_matrix
    from skilltest.report.files import write_report

    changes = compare_matrices(
        read_matrix(args.old), read_matrix(args.new), old_name=str(args.old), new_name=str(args.new)
    )
    if args.json:
        print(json.dumps(changes.to_dict(), indent=2, ensure_ascii=False))
    elif args.markdown is not None:
        write_report(args.markdown, changes.render(markdown=True))
        print(f"wrote {args.markdown}")
    else:
        print(changes.render(), end="")
    return EXIT_OK


def warn_of_claims(files: Iterable[tuple[Path, Mapping[str, Any]]]) -> None:
    """Says on stderr, per file, what it claims that its runs do not give (the first of each
    file, and how many)."""
    from skilltest.merge.claims import check

    for path, document in files:
        found = check(document)
        if found:
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            print(
                f"skilltest: warning: {path}: {found[0]}{more}; skilltest gate blocks it",
                file=sys.stderr,
            )
