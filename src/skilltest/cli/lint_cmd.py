"""``skilltest lint``: static checks of the skills and plugins a repository ships."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path

from skilltest.cli import help_line
from skilltest.cli.options import positive_float
from skilltest.errors import McpServerError
from skilltest.lint import LintReport, find_targets, lint
from skilltest.mcp import ServerTools
from skilltest.plugins import McpServer, mcp_servers_in_document
from skilltest.plugins.json_file import read_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lint",
        help=help_line("lint"),
        description=(
            "Checks skill folders (SKILL.md front matter within the limits of the Agent Skills "
            "format, the files it links to, the scripts it runs), plugin folders (plugin.json, "
            "hooks, MCP servers and their skills) and marketplace files; MCP tool names a skill "
            "mentions (mcp__server__tool) are compared with what the plugin's servers list, "
            "which starts them. Without paths, every plugin, marketplace and skill folder "
            "below the current folder is checked. Exit 0 without findings, 1 with findings, "
            "2 for bad input."
        ),
    )
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="SKILL_OR_PLUGIN",
        help="skill folders or SKILL.md files, plugin or marketplace folders, or folders to "
        "search (default: the current folder)",
    )
    parser.add_argument(
        "--mcp-config",
        type=Path,
        metavar="FILE",
        help='MCP servers for every skill besides its plugin\'s ({"mcpServers": {...}}, as '
        "claude --mcp-config reads it)",
    )
    parser.add_argument(
        "--no-mcp",
        action="store_true",
        help="do not start MCP servers: MCP tool names are not checked",
    )
    parser.add_argument(
        "--mcp-timeout",
        type=positive_float,
        default=30.0,
        metavar="S",
        help="seconds a server has to answer initialize and tools/list (default 30)",
    )
    parser.add_argument(
        "--plugin",
        metavar="NAME",
        help="check only the plugin of this name (in a marketplace that lists several)",
    )
    parser.set_defaults(handler=run)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(report: LintReport) -> str:
    """``2 skills, 1 plugin: no findings``."""
    parts = [_plural(report.skills, "skill"), _plural(report.plugins, "plugin")]
    if report.marketplaces:
        parts.append(_plural(report.marketplaces, "marketplace"))
    if report.cases:
        parts.append(_plural(report.cases, "eval case"))
    found = _plural(len(report.findings), "finding") if report.findings else "no findings"
    return f"{', '.join(parts)}: {found}"


def run(args: argparse.Namespace) -> int:
    targets = find_targets(args.paths or [Path(".")], Path.cwd())
    servers: tuple[McpServer, ...] = ()
    if args.mcp_config is not None:
        servers = mcp_servers_in_document(
            read_json(args.mcp_config), args.mcp_config, args.mcp_config.parent.resolve()
        )
    probe = None
    if not args.no_mcp:
        probe = functools.partial(_probe, timeout_s=args.mcp_timeout)
    report = lint(targets, probe=probe, servers=servers, plugin=args.plugin)
    for finding in report.findings:
        print(finding)
    for note in report.notes:
        print(f"note: {note}")
    if report.findings or report.notes:
        print()
    print(summary(report))
    return 1 if report.findings else 0


def _probe(
    servers: Sequence[McpServer], *, timeout_s: float
) -> Mapping[str, ServerTools | McpServerError]:
    from skilltest.mcp import probe_servers

    return probe_servers(servers, timeout_s=timeout_s)
