"""``skilltest mcp contract``: a plugin's MCP mocks held against the real servers they stand
in for."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from skilltest.cli import EXIT_FAILED, EXIT_OK, _usage, help_line
from skilltest.cli.options import positive_float


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help=help_line("mcp"),
        description="MCP servers and the mocks that stand in for them.",
    )
    actions = parser.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND")
    contract = actions.add_parser(
        "contract",
        help="compare a plugin's eval mocks with the tools its real MCP servers list now",
        description=(
            "Starts each MCP server the plugin declares (stdio, or connects to an http/sse "
            "one, as its .mcp.json says) that a mocks/<server>/ folder of its eval cases "
            "stands in for, asks its tools/list and compares it with the mock's _tools.json "
            "and <tool>.md files: tools added or removed, descriptions, and in each input "
            "schema parameters added, removed or renamed, types and required. Each drift "
            "names the mock file and the JSON pointer to change. Exit 0 when every tool is "
            "the same, 1 on drift, 2 for no plugin, no mocks, or a server that does not "
            "start."
        ),
    )
    contract.add_argument(
        "path",
        type=Path,
        metavar="PATH",
        help="a plugin folder, its evals/ folder, or one case folder",
    )
    contract.add_argument(
        "--timeout",
        type=positive_float,
        default=30.0,
        metavar="SECONDS",
        help="how long each server has to answer initialize and tools/list (default: 30)",
    )
    contract.add_argument("--json", action="store_true", help="print JSON instead of a list")
    contract.set_defaults(handler=run_contract)
    parser.set_defaults(handler=lambda args: _usage(parser))


def run_contract(args: argparse.Namespace) -> int:
    from skilltest.evalcases.contract import mocked_plugin
    from skilltest.mcp.contract import check_contracts, report_lines, summary

    mocked = mocked_plugin(args.path)
    contracts = check_contracts(mocked.mocks, timeout_s=args.timeout, cwd=mocked.plugin.root)
    for note in mocked.notes:
        print(f"skilltest: note: {note}", file=sys.stderr)
    if args.json:
        print(
            json.dumps(
                {
                    "plugin": mocked.plugin.name,
                    "contracts": [contract.to_dict() for contract in contracts],
                    "notes": list(mocked.notes),
                },
                indent=2,
            )
        )
        print(summary(contracts), file=sys.stderr)
    else:
        print("\n".join([*report_lines(contracts, base=Path.cwd()), summary(contracts)]))
    return EXIT_OK if all(contract.same for contract in contracts) else EXIT_FAILED
