"""Names that become folder or file names: a plugin's, a skill's, an MCP server's, a scenario's.

A name read from a suite, a plugin manifest, a ``.mcp.json`` or the command line ends up as one
component of a path inside a run's sandbox or output folder (``.claude/plugins/<plugin>``,
``.claude/skills/<skill>``, ``output/<skill>/<scenario>``). A name such as ``../../x`` would
write outside them, so every such name is checked where it is read (:func:`check_name`), and
every path built from one is checked again where it is joined (:func:`child`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from skilltest.errors import InputError

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
"""Letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit, at most 128
characters: never a separator, never ``.`` or ``..``, the same on every file system."""

_NAME = re.compile(NAME_PATTERN)

NAME_RULE = "letters, digits, '.', '_' or '-', starting with a letter or digit (at most 128)"
"""The rule in words, for error messages and schema descriptions."""


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be one component of a path, or ``None`` when it can."""
    if not isinstance(name, str) or not name:
        return "is not a non-empty string"
    if _NAME.fullmatch(name) is None:
        return f"is not a safe folder name ({NAME_RULE})"
    return None


def check_name(
    name: object,
    *,
    what: str,
    location: str | None,
    error: type[InputError] = InputError,
    fix: str | None = None,
) -> str:
    """``name``, when it can be one component of a path.

    Args:
        name: The name as read.
        what: What it names, for the message (``"the plugin name"``).
        location: The file and place it was read from.
        error: The class of error raised (``PluginError`` for a plugin, ``SuiteError`` ...).
        fix: The fix to print; by default, the rule.

    Raises:
        InputError: (of class ``error``) a name with a separator, ``..``, a space, a control
            character, or nothing.
    """
    problem = name_problem(name)
    if problem is not None:
        raise error(
            f"{what} {name!r} {problem}",
            location=location,
            fix=fix or f"rename it with {NAME_RULE}, e.g. my-skill",
        )
    assert isinstance(name, str)
    return name


def child(parent: Path, name: str, *, what: str = "name") -> Path:
    """``parent / name`` for a name checked by :func:`check_name`.

    The second line of defence: a name that reached here unchecked and would leave ``parent``
    raises instead of being joined.

    Raises:
        InputError: ``name`` is not a safe folder name.
    """
    check_name(name, what=what, location=str(parent))
    return parent / name


def nearest_name(name: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` closest to ``name`` when it is close enough to be a misspelling of
    it (``safe-migration`` for ``safe-migrations``), else ``None``."""
    import difflib

    found = difflib.get_close_matches(name, sorted(set(names) - {name}), n=1, cutoff=0.75)
    return found[0] if found else None


TOOL_ALIASES: dict[str, str] = {"Task": "Agent"}
"""Tools that are one tool under two names: Claude Code renamed ``Task`` to ``Agent``."""


def canonical_tool_name(name: str) -> str:
    """The name a tool is scored under: ``Task`` and ``Agent`` are the same tool."""
    return TOOL_ALIASES.get(name, name)
