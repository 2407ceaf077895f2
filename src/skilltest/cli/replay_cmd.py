"""``skilltest replay status``: each cassette of a folder, when and against what it was recorded,
and whether it is stale."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

from skilltest.cli import EXIT_FAILED, EXIT_OK, _usage, help_line
from skilltest.cli.options import positive_float


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help=help_line("replay"),
        description="What the cassettes of --record DIR / --replay DIR hold.",
    )
    actions = parser.add_subparsers(dest="replay_command", metavar="SUBCOMMAND")
    status = actions.add_parser(
        "status",
        help="each cassette's age and what it was recorded against; which are stale",
        description=(
            "Lists each cassette under DIR: when it was recorded, the backend that answered, "
            "the model as the API named it, the claude version and its normalisation rules "
            "(a short fingerprint), then fresh or stale with the reasons. A cassette is stale "
            "when it was recorded under other rules than its suite's now, with another claude "
            "version (--claude-version; by default the claude a run would use) or model "
            "(--model; by default the suite's model, if it names one) than asked for now, or "
            "longer ago than --max-age DAYS; a cassette of another agent (--agent opencode, "
            "codex) is judged by the version of that agent's executable instead of claude's; "
            "a fact a cassette lacks counts as stale when a "
            "criterion needs it. Exit 0; with --check, 1 when any cassette is stale; 2 for a "
            "folder that does not exist or a cassette that cannot be read."
        ),
    )
    status.add_argument("directory", type=Path, metavar="DIR", help="the cassette folder")
    status.add_argument(
        "--check", action="store_true", help="exit 1 when any cassette is stale (for CI)"
    )
    status.add_argument(
        "--max-age",
        type=positive_float,
        metavar="DAYS",
        help="a cassette recorded longer ago than this is stale",
    )
    status.add_argument(
        "--suite",
        type=Path,
        metavar="FILE",
        help="judge every cassette against this suite's rules and model (default: the suite "
        "each cassette names, looked for from here and from the folders above DIR)",
    )
    status.add_argument(
        "--claude-version",
        metavar="V",
        help="the claude version asked for now (default: that of the claude a run would use: "
        "--claude, $SKILLTEST_CLAUDE, .tools/, skilltest's cache, PATH)",
    )
    status.add_argument(
        "--claude", type=Path, help="the claude binary whose version is asked for now"
    )
    status.add_argument("--model", metavar="MODEL", help="the model asked for now")
    status.add_argument(
        "--remove-stale",
        action="store_true",
        help="delete the stale cassettes, so that --replay DIR --record-missing records them again",
    )
    status.add_argument("--json", action="store_true", help="print JSON instead of a table")
    status.set_defaults(handler=run)
    parser.set_defaults(handler=lambda args: _usage(parser))


def run(args: argparse.Namespace) -> int:
    from skilltest.claude.binary import check_version
    from skilltest.replay.status import (
        CLI_LAYERS,
        Wanted,
        read_cassettes,
        status_of,
        suite_now,
        summary,
        table,
    )

    directory: Path = args.directory
    cassettes = read_cassettes(directory)
    cli_version = args.claude_version
    if cli_version is not None:
        check_version(cli_version, location="--claude-version")
    elif any(c.layer in CLI_LAYERS and c.agent is None for c in cassettes):
        cli_version = _claude_version_now(args.claude)
    agents = sorted({c.agent for c in cassettes if c.agent and c.layer in CLI_LAYERS})
    wanted = Wanted(
        now=dt.datetime.now(dt.UTC),
        cli_version=cli_version,
        model=args.model,
        max_age_days=args.max_age,
        agent_versions={name: _agent_version_now(name) for name in agents},
    )
    suites = {}
    statuses = []
    for cassette in cassettes:
        key = cassette.suite
        if key not in suites:
            suites[key] = suite_now(key, directory=directory, given=args.suite)
        statuses.append(status_of(cassette, directory=directory, wanted=wanted, suite=suites[key]))
    if args.json:
        print(
            json.dumps(
                {
                    "directory": str(directory),
                    "claude_version": cli_version,
                    "cassettes": [s.to_dict() for s in statuses],
                },
                indent=2,
            )
        )
    else:
        print("\n".join(table(statuses)))
    stale = [s for s in statuses if s.stale]
    if args.json:
        print(summary(statuses), file=sys.stderr)
    if args.remove_stale and stale:
        for status in stale:
            status.path.unlink(missing_ok=True)
        print(
            f"removed {len(stale)} stale cassette{'s' if len(stale) != 1 else ''}: record them "
            f"again with --replay {directory} --record-missing",
            file=sys.stderr,
        )
    return EXIT_FAILED if args.check and stale else EXIT_OK


def _claude_version_now(explicit: Path | None) -> str | None:
    """The version of the claude a run would use; ``None`` (said on stderr) when none is
    found, and then no cassette is judged by its claude version."""
    from skilltest.claude.binary import find_claude
    from skilltest.errors import ClaudeNotFoundError

    try:
        return find_claude(explicit).version
    except ClaudeNotFoundError:
        if explicit is not None:
            raise
        print(
            "skilltest: no claude found: claude versions are not checked (give --claude-version V)",
            file=sys.stderr,
        )
        return None


def _agent_version_now(name: str) -> str | None:
    """The version of another agent's CLI a run would use (``--agent NAME``); ``None`` (said
    on stderr) when it is not found or not an agent skilltest knows, and then its cassettes are
    not judged by their version."""
    from skilltest.agents import agent
    from skilltest.errors import ConfigurationError, InputError

    try:
        return agent(name).find().version
    except (ConfigurationError, InputError):
        print(
            f"skilltest: no {name} found: {name} versions are not checked (install it with "
            f"`skilltest setup --agent {name}`)",
            file=sys.stderr,
        )
        return None
