"""``skilltest setup``: installs the pinned Claude Code CLI where skilltest finds it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from skilltest.claude.binary import PINNED_VERSION
from skilltest.cli import EXIT_OK, help_line


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "setup",
        help=help_line("setup"),
        description=(
            "Installs @anthropic-ai/claude-code at the version skilltest is verified against "
            "with npm into skilltest's cache ($SKILLTEST_CACHE_DIR, else "
            "$XDG_CACHE_HOME/skilltest, else ~/.cache/skilltest), checks that it reports that "
            "version, and prints where it is. skilltest finds it there without PATH; --claude "
            "and $SKILLTEST_CLAUDE still win. Already installed: nothing to do. Exit 0; 2 when "
            "node or npm is missing or the install fails."
        ),
    )
    parser.add_argument(
        "--force", action="store_true", help="install again even when it is already there"
    )
    parser.add_argument(
        "--claude-version",
        action="append",
        metavar="V",
        help=f"install this version instead of the pinned {PINNED_VERSION}, beside any other "
        "(repeatable: each in a folder of its own, for --claude-versions A,B)",
    )
    parser.add_argument(
        "--agent",
        action="append",
        metavar="NAME",
        help="install this agent's pinned version instead (repeatable): opencode installs "
        "opencode-ai into <cache>/opencode-<version>, codex @openai/codex into "
        "<cache>/codex-<version>, gemini @google/gemini-cli into <cache>/gemini-<version>, "
        "where --agent NAME finds them; claude-code is the default "
        "install (docs/agents.md)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest.agents.claude_install import install_claude
    from skilltest.claude.binary import check_version

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    if args.agent:
        return _install_agents(args.agent, force=args.force, progress=progress)

    versions = args.claude_version or [PINNED_VERSION]
    for version in versions:  # every version checked before the first install
        check_version(version, location="--claude-version")
    for version in dict.fromkeys(versions):
        done = install_claude(version=version, force=args.force, progress=progress)
        state = "installed" if done.installed else "already installed"
        print(f"claude {done.version} {state} at {done.path}")
    if args.claude_version is None:
        print("skilltest finds it there (--claude PATH and $SKILLTEST_CLAUDE still win)")
    else:
        print(f"--claude-versions {','.join(dict.fromkeys(versions))} finds them there")
    return EXIT_OK


def _install_agents(names: list[str], *, force: bool, progress: Callable[[str], None]) -> int:
    """Each named agent's pinned version, installed into skilltest's cache."""
    from skilltest.agents import agent

    chosen = [agent(name, location="--agent") for name in dict.fromkeys(names)]
    for each in chosen:  # every name checked before the first install
        done = each.install(version=each.pinned_version, force=force, progress=progress)
        state = "installed" if done.installed else "already installed"
        print(f"{each.name} {done.version} {state} at {done.path}")
    return EXIT_OK
