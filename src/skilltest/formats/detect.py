"""Which eval format a file is written in, from its content.

A file of skilltest's own formats is left to the layers (:func:`foreign_format` gives ``None``);
a file of a format skilltest reads is named, with the layer that runs it and the function that
reads it into that layer's suite document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.errors import SuiteError
from skilltest.suite.loader import read_yaml, validate


@dataclass(frozen=True)
class ReadOptions:
    """What the command line allows a foreign format's reader."""

    allow_code_graders: bool = False
    """``--allow-code-graders``: a waza ``code`` grader's Python assertions become
    ``python_assertion`` checks, which run after each run; without it the grader is refused by
    name."""


@dataclass(frozen=True)
class Format:
    """A foreign eval format skilltest reads."""

    name: str
    """What ``validate`` and the layers call it, e.g. ``skill-creator trigger eval set``."""
    layer: str
    """The layer that runs it: ``triggers`` or ``scenarios``."""
    command: str
    """How a person runs such a file, for messages."""
    how: str
    """How its parts become the layer's, said when a run reads one."""
    read: Callable[[Any, Path, ReadOptions], dict[str, Any]]
    """The file's parsed content, path and the options allowed in, the layer's suite document
    out.

    Raises SuiteError naming the file, the place and the fix."""


def foreign_format(data: Any) -> Format | None:
    """The foreign format ``data`` (a file's parsed content) is written in, or ``None`` for one
    of skilltest's own (or none at all: the layer's schema then says what is wrong)."""
    from skilltest.formats import skill_creator, waza

    if skill_creator.is_trigger_eval_set(data):
        return skill_creator.TRIGGER_EVAL_SET
    if skill_creator.is_evals_file(data):
        return skill_creator.EVALS_FILE
    if waza.is_eval_file(data):
        return waza.EVAL_FILE
    return None


def read_suite_document(
    path: Path, layer: str, options: ReadOptions | None = None
) -> tuple[dict[str, Any], Format | None]:
    """A suite file for ``layer``, read and validated against the layer's schema, whatever
    format it is written in; with the foreign format it was read from (``None``: skilltest's).

    Raises:
        SuiteError: unreadable file, a foreign file that is not valid in its own format, a file
            of another layer's format (naming the command that runs it), or a schema violation.
    """
    data = read_yaml(path)
    found = foreign_format(data)
    if found is not None:
        if found.layer != layer:
            raise SuiteError(
                f"this is a {found.name}, which `skilltest {found.layer}` runs, "
                f"not `skilltest {layer}`",
                location=str(path),
                fix=f"run it with {found.command}",
            )
        data = found.read(data, path, options or ReadOptions())
    validate(data, layer, path)
    return data, found
