"""The matrix a suite names (``matrix: {models: [...], claude_versions: [...], agents:
[...]}``).

A suite file may say which matrix it runs in; a run of several suites runs one matrix, so
suites that name different ones are bad input, naming both files. The command line's
``--models``, ``--claude-versions`` and ``--agents`` override what the suites name. Pure but for
reading the suite files, which the layer reads again (and validates the same way) when it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skilltest.errors import InputError
from skilltest.formats.detect import ReadOptions, read_suite_document
from skilltest.suite.loader import discover_suites


@dataclass(frozen=True)
class NamedMatrix:
    """A matrix as a suite file names it."""

    source: Path
    """The suite file that names it (the first, when several name the same)."""
    models: tuple[str, ...] = ()
    """Its ``models`` (a cell each), in the order given; empty: no model axis."""
    claude_versions: tuple[str, ...] = ()
    """Its ``claude_versions`` (a cell each); empty: no CLI version axis."""
    agents: tuple[str, ...] = ()
    """Its ``agents`` (a cell each; scenario suites); empty: no agent axis."""

    @property
    def values(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each key of the suite's ``matrix`` with its values, in the axes' order."""
        return (
            ("models", self.models),
            ("claude_versions", self.claude_versions),
            ("agents", self.agents),
        )

    def describe(self) -> str:
        """``models: haiku, sonnet; claude_versions: 2.1.328``."""
        return "; ".join(f"{name}: {', '.join(values)}" for name, values in self.values if values)


def suite_matrix(
    targets: Sequence[Path],
    default_dir: Path,
    *,
    layer: str,
    example: str,
    options: ReadOptions | None = None,
) -> NamedMatrix | None:
    """The matrix the suites ``targets`` name (files, folders, names; none: ``default_dir``);
    ``None`` when none names one. A suite that names none runs in the matrix the others name.
    ``options``: what the command line allows a foreign format's reader.

    Raises:
        InputError: a suite that is not valid (a bad ``matrix`` value names the file and its
            JSON pointer), or two suites naming different matrices (naming both files).
    """
    named: NamedMatrix | None = None
    for path in discover_suites(list(targets), default_dir, example=example):
        data, _ = read_suite_document(path, layer, options)
        block = data.get("matrix")
        if not isinstance(block, dict):
            continue
        found = NamedMatrix(
            path,
            tuple(str(v) for v in block.get("models") or ()),
            tuple(str(v) for v in block.get("claude_versions") or ()),
            tuple(str(v) for v in block.get("agents") or ()),
        )
        if named is None:
            named = found
        elif named.values != found.values:
            raise InputError(
                f"{named.source} names the matrix ({named.describe()}) and {path} names another "
                f"({found.describe()}): one run runs one matrix",
                location=str(path),
                fix="give both suites the same matrix:, run them apart, or name the matrix for "
                "this run with --models (and --claude-versions)",
            )
    return named
