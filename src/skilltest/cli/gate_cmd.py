"""``skilltest gate``: the release gate over results files already written."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from skilltest.cli import help_line
from skilltest.gate import decide, load_results, render


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gate",
        help=help_line("gate"),
        description=(
            "Reads results files (--results of skilltest pressure, scenarios and triggers; "
            "several, e.g. shards or layers) and blocks the release when the results come from "
            "the emulator (a scripted stand-in) rather than a real model, a with-skill run "
            "violated authority in a controlled world, a scenario fails, a scenario or query "
            "regressed against the previous revision (a regression counts when it holds "
            "suite-wide: Holm, 5%% family-wise), a scenario marked critical: true is "
            "inconclusive, missing, or passes credibly less often than in the baseline, or the "
            "results are incomplete. Each run counts once: a file or run given twice is read "
            "once. Every rule is printed with PASS or BLOCK and its evidence. Exit 0 pass, "
            "1 block, 2 bad input."
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
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    results = [load_results(path) for path in args.results]
    baseline = [load_results(path) for path in args.baseline]
    decision = decide(
        results,
        baseline,
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
