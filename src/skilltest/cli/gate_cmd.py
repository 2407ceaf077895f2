"""``skilltest gate``: the release gate over results files already written."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from skilltest.gate import decide, load_results, render


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gate",
        help="decide whether a skill may ship, from pressure and scenario results files",
        description=(
            "Reads results files (--results of skilltest pressure and skilltest scenarios; "
            "several, e.g. shards or both layers) and blocks the release when a with-skill run "
            "violated authority in a controlled world, a scenario regressed, a scenario marked "
            "critical: true passes credibly less often than in the baseline or is missing from "
            "the new results, or the results are incomplete. Every rule is printed with PASS or "
            "BLOCK and its evidence. Exit 0 pass, 1 block, 2 bad input."
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
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    results = [load_results(path) for path in args.results]
    baseline = [load_results(path) for path in args.baseline]
    decision = decide(results, baseline)
    if args.json:
        print(json.dumps(decision.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(render(decision))
    return 1 if decision.blocked else 0
