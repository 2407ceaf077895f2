"""``skilltest gate``: the release gate over results files already written."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from skilltest.cli import help_line
from skilltest.gate import decide, load_results, render
from skilltest.gate.cells import load_matrix


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gate",
        help=help_line("gate"),
        description=(
            "Reads results files (--results of skilltest pressure, scenarios and triggers; "
            "several, e.g. shards or layers) and blocks the release when the results come from "
            "the emulator (a scripted stand-in: told by what answered, not by --backend) or an "
            "address that is not the Anthropic API, a with-skill run violated authority in a "
            "controlled world, a scenario fails, a scenario or query regressed against the "
            "previous revision (a regression counts when it holds suite-wide: Holm, 5%% "
            "family-wise), a scenario marked critical: true is inconclusive, missing, or passes "
            "credibly less often than in the baseline, the results are incomplete, the suite or "
            "skill files changed since the run, or a figure of the file does not follow from the "
            "runs it holds. Each run counts once, known by its content: a file or run given "
            "twice, or copied under new ids, is read once. A matrix's results file (--models, "
            "--claude-versions) is gated cell by cell, each line naming its cell; "
            "--require-cell names the cells a release needs (default: every cell). Every rule is "
            "printed with PASS or BLOCK and its evidence. Exit 0 pass, 1 block, 2 bad input."
        ),
    )
    parser.add_argument(
        "results", type=Path, nargs="+", metavar="RESULTS.json", help="the new results files"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        nargs="+",
        default=[],
        metavar="RESULTS.json",
        help="results files of the release to compare with (critical scenarios' pass rates)",
    )
    parser.add_argument(
        "--allow-failing",
        action="append",
        default=[],
        metavar="ID",
        help="a failing scenario whose id (or skill/id) matches this glob does not block; "
        "it is listed as allowed (repeatable)",
    )
    parser.add_argument(
        "--allow-offline",
        action="store_true",
        help="gate on results of the emulator (or of cassettes recorded against it) anyway: "
        "they say nothing about a real model, and the output says so",
    )
    parser.add_argument(
        "--allow-undecided",
        action="store_true",
        help="pass even when no scenario is decided (every verdict inconclusive, error or skipped)",
    )
    parser.add_argument(
        "--per-scenario",
        action="store_true",
        help="block on every per-scenario regressed verdict, not only on those that hold "
        "suite-wide (Holm, 5%% family-wise): each claim errs at most 2.5%%, but a suite of many "
        "scenarios shows a false one far more often",
    )
    parser.add_argument(
        "--no-stale-check",
        action="store_true",
        help="do not compare the suite files and the skills' files the runs read with the files "
        "on disk (a gate in another checkout); the output says they were not checked",
    )
    parser.add_argument(
        "--require-cell",
        action="append",
        default=[],
        metavar="AXIS=VALUE[,AXIS=VALUE]",
        help="a matrix's cell the release needs (repeatable; model=opus requires every cell "
        "with that model): it must be there, complete and decided, and a failing, regressed or "
        "critical scenario blocks in it; in a cell not required they are listed, not blocking "
        "(an authority violation blocks in any cell). Default: every cell is required",
    )
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest.matrix.results import is_matrix_file

    stale_check = not args.no_stale_check
    given = [(path, is_matrix_file(path)) for path in args.results]
    results = [load_results(p, stale_check=stale_check) for p, matrix in given if not matrix]
    matrices = [load_matrix(p, stale_check=stale_check) for p, matrix in given if matrix]
    # The baseline ran another release's files: only its figures are checked.
    old = [(path, is_matrix_file(path)) for path in args.baseline]
    baseline = [load_results(p, stale_check=False) for p, matrix in old if not matrix]
    baseline_matrices = [load_matrix(p, stale_check=False) for p, matrix in old if matrix]
    decision = decide(
        results,
        baseline,
        matrices=matrices,
        baseline_matrices=baseline_matrices,
        require_cells=tuple(args.require_cell),
        allow_offline=args.allow_offline,
        allow_failing=tuple(args.allow_failing),
        allow_undecided=args.allow_undecided,
        per_scenario=args.per_scenario,
    )
    if args.json:
        print(json.dumps(decision.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(render(decision))
    return 1 if decision.blocked else 0
