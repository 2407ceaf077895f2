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
    from skilltest.merge import merge, read_shards
    from skilltest.report.files import write_results

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
