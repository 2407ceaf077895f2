"""``--plugin-dir`` and ``--plugin``: the plugin under test, for the commands that take one.

Its own module so that a command taking only these (``validate``, ``score``) does not import
every run option's defaults (shards, repetitions and their statistics).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from skilltest.errors import InputError


def add_plugin_dir_option(parser: argparse.ArgumentParser) -> None:
    """``--plugin-dir DIR`` (the plugin under test, for every suite of the command) and
    ``--plugin NAME`` (which plugin, when DIR is a marketplace's folder)."""
    parser.add_argument(
        "--plugin-dir",
        type=Path,
        metavar="DIR",
        help="a plugin folder to test instead of the suites' skill or plugin: its skills "
        "(and, in scenarios, its agents, commands, hooks and MCP servers); or a marketplace's "
        "folder with --plugin",
    )
    parser.add_argument(
        "--plugin",
        metavar="NAME",
        help="with --plugin-dir on a marketplace's folder: the plugin it lists to test",
    )


def check_plugin_choice(args: argparse.Namespace) -> None:
    """``--plugin NAME`` picks a plugin of the marketplace ``--plugin-dir`` names.

    Raises:
        InputError: ``--plugin`` without ``--plugin-dir``.
    """
    if getattr(args, "plugin", None) and getattr(args, "plugin_dir", None) is None:
        raise InputError(
            f"--plugin {args.plugin} needs --plugin-dir: it picks a plugin of the marketplace "
            "whose folder --plugin-dir names",
            location="--plugin",
            fix=f"add --plugin-dir DIR (the folder holding .claude-plugin/marketplace.json), "
            f"e.g. --plugin-dir . --plugin {args.plugin}",
        )
