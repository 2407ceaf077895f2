"""``skilltest merge``: the shards of one run (``--shard i/n``) as one results file."""

from __future__ import annotations

import argparse
from pathlib import Path

from skilltest.cli import EXIT_OK, help_line
from skilltest.cli.options import output_file


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "merge",
        help=help_line("merge"),
        description=(
            "Reads the results files of every shard of one run (skilltest pressure, scenarios "
            "or triggers with --shard 1/N ... N/N) and writes one results file equal to what "
            "the run would have written unsharded: the scenarios (trigger queries) in suite "
            "order, the summaries and suite metrics recomputed, the provenance joined. Refuses "
            "shards of different suites, versions, layers or options that change verdicts, a "
            "missing shard and a shard given twice (exit 2)."
        ),
    )
    parser.add_argument(
        "results", nargs="+", type=Path, metavar="RESULTS.json", help="the shards' results files"
    )
    parser.add_argument(
        "-o",
        "--output",
        type=output_file,
        required=True,
        metavar="MERGED.json",
        help="where to write the merged results file",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest.matrix.results import is_matrix_file
    from skilltest.merge import merge, read_shards
    from skilltest.report.files import write_results

    if is_matrix_file(args.results[0]):
        return _merge_matrices(args)
    shards = read_shards(args.results)
    merged = merge(shards, command=getattr(args, "command_line", ()))
    write_results(args.output, merged)
    noun = "queries" if shards.layer == "triggers" else "scenarios"
    sizes = ", ".join(str(len(file.shard["assigned"])) for file in shards.files)
    state = "" if merged["complete"] else " (incomplete: a shard did not finish)"
    print(
        f"merged {len(shards.files)} shards of a {shards.layer} run ({len(shards.units)} "
        f"{noun}: {sizes}) into {args.output}{state}"
    )
    return EXIT_OK


def _merge_matrices(args: argparse.Namespace) -> int:
    from skilltest.merge.matrices import merge_matrices
    from skilltest.report.files import write_results

    merged = merge_matrices(args.results, command=getattr(args, "command_line", ()))
    write_results(args.output, merged)
    cells = merged["cells"]
    units = len(cells[0]["results"].get("scenarios") or []) if cells else 0
    state = "" if merged["complete"] else " (incomplete: a shard did not finish)"
    print(
        f"merged {len(args.results)} shards of a {merged['layer']} matrix ({len(cells)} cells x "
        f"{units} scenarios) into {args.output}{state}"
    )
    return EXIT_OK
