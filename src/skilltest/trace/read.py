"""Reading a trace file back, with errors that name the file, the line and the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.files import decode, nesting, read_bytes
from skilltest.limits import MAX_JSON_DEPTH, MAX_RESULTS_BYTES
from skilltest.suite.loader import validate
from skilltest.trace import SCHEMA_VERSION

REWRITE = (
    "a trace is a header, its events and an outcome, one JSON object per line; write it again "
    "by rerunning the run"
)
"""What to do about a trace line that is not a run's."""


class TraceError(InputError):
    """A trace file that cannot be read: missing, not JSONL, or of an unknown layout."""


def read_trace(path: Path) -> list[dict[str, Any]]:
    """The lines of a trace file, each a mapping; the first is the header.

    Raises:
        TraceError: the file is missing or unreadable, a line is not a JSON object, the first
            line has no ``schema_version`` or one this version does not know.
    """
    fix = "give the .trace.jsonl file written beside a run's transcript"
    raw = read_bytes(
        path,
        limit=MAX_RESULTS_BYTES,
        error=TraceError,
        what="the trace",
        large_fix=fix,
        missing="no such trace",
        missing_fix=fix,
    )
    text = decode(raw, path, error=TraceError, fix=fix)
    lines: list[dict[str, Any]] = []
    numbers: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
            if nesting(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
                raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
        except (ValueError, RecursionError) as exc:
            raise TraceError(
                f"line {number} is not JSON: {exc.args[0] if exc.args else exc}",
                location=f"{path}:{number}",
                fix="a trace has one JSON object per line; write it again by rerunning the run",
            ) from exc
        if not isinstance(value, dict):
            raise TraceError(
                f"line {number} is not a JSON object",
                location=f"{path}:{number}",
                fix="a trace has one JSON object per line; write it again by rerunning the run",
            )
        lines.append(value)
        numbers.append(number)
    if not lines:
        raise TraceError(
            "the trace is empty",
            location=str(path),
            fix="give the .trace.jsonl file written beside a run's transcript",
        )
    version = lines[0].get("schema_version")
    if version != SCHEMA_VERSION:
        found = "no schema_version" if version is None else f"schema_version {version!r}"
        raise TraceError(
            f"line 1 has {found}; this skilltest reads trace schema_version {SCHEMA_VERSION}",
            location=f"{path}:1",
            fix="show it with the skilltest version that wrote it, or rerun the run to write "
            "it again",
        )
    for index, (number, value) in enumerate(zip(numbers, lines, strict=True)):
        kind = "header" if index == 0 else value.get("kind")
        if kind not in ("header", "event", "outcome"):
            # An empty line object, or one of no kind a run writes, is no part of a run.
            raise TraceError(
                f"line {number} is not a header, event or outcome "
                f"(its kind is {'missing' if kind is None else repr(kind)})",
                location=f"{path}:{number}",
                fix=REWRITE,
            )
        # What `show` formats has the type and range a run writes: a hand-edited trace is
        # refused at its line and place, never met part way through printing it.
        validate(
            value, "trace", f"{path}:{number}", TraceError, definition=str(kind),
            numbers="a trace can hold",
        )  # fmt: skip
    if not any(value.get("kind") == "outcome" for value in lines[1:]):
        raise TraceError(
            "the trace has no outcome line (a run's trace ends with its score or error)",
            location=str(path),
            fix=REWRITE,
        )
    return lines
