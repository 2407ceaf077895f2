"""What ``skilltest lint`` checks, from the paths it is given.

A path is a skill (a folder holding ``SKILL.md``, or the ``SKILL.md`` itself), a plugin (a
folder holding ``.claude-plugin/plugin.json``, or that file), a marketplace (a folder holding
``.claude-plugin/marketplace.json``, or that file), a plugin's eval folder or one of its case
folders (which stand for the plugin), or any other folder, which is searched: every plugin,
marketplace and skill below it, where a skill inside a plugin is checked as part of the plugin.
Hidden folders (but ``.claude``), ``node_modules``, ``output`` and ``__pycache__`` are not
searched. Without paths, the current folder is searched.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skilltest.errors import InputError
from skilltest.evalcases import names_eval_cases
from skilltest.files import kind_of
from skilltest.plugins import is_marketplace, is_plugin

SKIPPED_FOLDERS = frozenset({"node_modules", "output", "__pycache__"})
"""Folders never searched (besides hidden ones): installed packages, kept run output."""


@dataclass(frozen=True)
class Targets:
    """The skills, plugins and marketplaces to check."""

    skills: tuple[Path, ...]
    """Skill folders that are not part of a plugin checked here."""
    plugins: tuple[Path, ...]
    """Plugin folders."""
    marketplaces: tuple[Path, ...]
    """Folders holding ``.claude-plugin/marketplace.json``."""


def _searched(name: str) -> bool:
    return name not in SKIPPED_FOLDERS and (not name.startswith(".") or name == ".claude")


def find_targets(paths: Sequence[Path], cwd: Path) -> Targets:
    """The targets the paths stand for (see the module's docstring).

    Raises:
        InputError: a path that does not exist, or a file that is no SKILL.md, plugin.json or
            marketplace.json.
    """
    skills: list[Path] = []
    plugins: list[Path] = []
    marketplaces: list[Path] = []
    for path in paths or [cwd]:
        if not path.exists():
            raise InputError(
                "no such file or folder",
                location=str(path),
                fix="pass skill folders, SKILL.md files, plugin folders or folders to search",
            )
        if names_eval_cases(path) and not is_plugin(path):
            # A plugin's eval folder (or one case) is checked with its plugin.
            root = next((p for p in path.resolve().parents if is_plugin(p)), None)
            if root is not None:
                plugins.append(root)
                continue
        if path.is_file():
            if path.name == "SKILL.md":
                skills.append(path.parent)
            elif path.name == "plugin.json" and path.parent.name == ".claude-plugin":
                plugins.append(path.parent.parent)
            elif path.name == "marketplace.json" and path.parent.name == ".claude-plugin":
                marketplaces.append(path.parent.parent)
            else:
                raise InputError(
                    "not a skill, a plugin or a folder to search",
                    location=str(path),
                    fix="pass a SKILL.md, a .claude-plugin/plugin.json or "
                    ".claude-plugin/marketplace.json, or a folder",
                )
            continue
        if not path.is_dir():
            raise InputError(
                f"not a skill folder or file: it is {kind_of(path) or 'not a regular file'}",
                location=str(path),
                fix="pass skill folders, SKILL.md files, plugin folders or folders to search",
            )
        for folder, names, files in os.walk(path):
            here = Path(folder)
            names[:] = sorted(name for name in names if _searched(name))
            if is_marketplace(here):
                marketplaces.append(here)
            if is_plugin(here):
                plugins.append(here)
                names[:] = []  # its skills are checked as part of it
            elif "SKILL.md" in files:
                skills.append(here)
                names[:] = []
    plugin_roots = [p.resolve() for p in plugins]
    skills = [s for s in skills if not any(s.resolve().is_relative_to(p) for p in plugin_roots)]
    return Targets(_unique(skills), _unique(plugins), _unique(marketplaces))


def _unique(paths: list[Path]) -> tuple[Path, ...]:
    seen: dict[Path, Path] = {}
    for path in paths:
        seen.setdefault(path.resolve(), path)
    return tuple(seen.values())
