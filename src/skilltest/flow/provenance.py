"""What every layer records about how a run started (:mod:`skilltest.report.provenance`).

The command line gives its own argv (``RunOptions.command_line``); a Python caller's run records
``python``, the entry point and the options it set, so that a results file always says how to
run it again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from skilltest import __version__
from skilltest.flow.options import RunOptions
from skilltest.report.provenance import Provenance, SourceTree, SuiteFile
from skilltest.skills import tree_checksum, tree_files


def checksum(path: Path) -> str | None:
    """``sha256:<hex>`` of a file's bytes; ``None`` when it cannot be read."""
    try:
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def source_tree(kind: str, folder: Path) -> SourceTree:
    """A folder the runs read (``kind``: ``skill`` or ``plugin``), with its files' checksums;
    named relative to the current folder when it is inside it (a gate run in another checkout
    of the same repository finds it there)."""
    files = tree_files(folder)
    return SourceTree(shown_path(folder), kind, tree_checksum(files), files)


def shown_path(folder: Path) -> str:
    """``folder`` relative to the current folder when it lies inside it, else absolute."""
    absolute = folder.resolve()
    try:
        return absolute.relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return str(absolute)


def source_trees(
    skills: Iterable[Path] = (), plugins: Iterable[Path] = ()
) -> tuple[SourceTree, ...]:
    """Each skill and plugin folder the runs read, once, in path order."""
    kinds: dict[Path, str] = {}
    for folder in skills:
        kinds.setdefault(folder, "skill")
    for folder in plugins:
        kinds.setdefault(folder, "plugin")
    trees = (source_tree(kind, folder) for folder, kind in kinds.items())
    return tuple(sorted(trees, key=lambda tree: tree.path))


def _shown(value: Any) -> str:
    if isinstance(value, tuple | list):
        return "(" + ", ".join(_shown(item) for item in value) + ")"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        given = [
            f"{f.name}={_shown(getattr(value, f.name))}"
            for f in dataclasses.fields(value)
            if getattr(value, f.name) is not None
        ]
        return f"{type(value).__name__}({', '.join(given)})"
    return str(value)


def python_command(options: RunOptions, entry: str) -> tuple[str, ...]:
    """``("python", entry, "name=value", ...)``: the options a Python caller set (the fields
    that differ from their defaults)."""
    defaults = type(options)()
    given = [
        f"{item.name}={_shown(getattr(options, item.name))}"
        for item in dataclasses.fields(options)
        if item.name not in ("command_line", "budget")
        and getattr(options, item.name) != getattr(defaults, item.name)
    ]
    return ("python", entry, *given)


def start_provenance(
    options: RunOptions,
    *,
    entry: str,
    backend: str,
    suites: Sequence[Path],
    model: str | None = None,
    claude_version: str | None = None,
    agent: tuple[str, str | None] | None = None,
    trees: Sequence[SourceTree] = (),
) -> Provenance:
    """A run's provenance as it starts; the models are added as the answers come.

    Args:
        options: The run's options (the command line, or what a Python caller set).
        entry: The Python entry point (``skilltest.pressure.run``), for a Python caller.
        backend: The backend chosen (``anthropic``, ``claude``, ``emulator``, ``replay``).
        suites: The suite files read.
        model: The model the run asks for, when it names one.
        claude_version: The ``claude`` CLI version, for runs through the CLI.
        agent: The agent the runs go through and its version (``("codex", "0.171.0")``).
        trees: The skills' and plugins' folders the runs read, with their files' checksums
            (:func:`source_trees`).
    """
    return Provenance(
        run_id=uuid.uuid4().hex[:12],
        backend=backend,
        model_requested=model or options.model,
        claude_version=claude_version,
        agent=None if agent is None else agent[0],
        agent_version=None if agent is None else agent[1],
        skilltest_version=__version__,
        started_at=_now(),
        suites=tuple(SuiteFile(str(path), checksum(path)) for path in suites),
        trees=tuple(trees),
        command=options.command_line or python_command(options, entry),
        shard=None if options.shard is None else (options.shard.index, options.shard.count),
        clock=time.monotonic(),
    )


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def finish_provenance(provenance: Provenance) -> Provenance:
    """``provenance`` with the time now as its ``finished_at`` and the wall time since the run
    started as its ``duration_s``: each time the results are written, so an interrupted run's
    file says how long it ran too."""
    if provenance.clock is None:
        return provenance
    return dataclasses.replace(
        provenance,
        finished_at=_now(),
        duration_s=round(time.monotonic() - provenance.clock, 1),
    )
