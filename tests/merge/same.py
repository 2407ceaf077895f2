"""Two results documents compared field by field, what differs between any two runs left out."""

from __future__ import annotations

import re
from typing import Any

TIMINGS = frozenset({"latency_ms", "duration_s"})
"""How long something took: never the same twice."""
RUN_OWN = frozenset({"run_id", "command", "started_at", "finished_at", "merged_from"})
"""What names one invocation in a provenance (the merge's own, or a shard's), and when it
ran."""
LOOPBACK_PORT = re.compile(r"^(http://127\.0\.0\.1):\d+$")
"""The address of an emulator a run started for itself: a port of its own every time."""


def comparable(value: Any, *, folders: tuple[str, ...] = (), where: str = "") -> Any:
    """``value`` without timings, run ids and each invocation's own provenance fields; the
    ``folders`` (a run's output folders) replaced by one name in every string."""
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            if key in TIMINGS or (key == "id" and where.endswith("runs")):
                continue
            if where == "provenance" and key in RUN_OWN:
                continue
            kept[key] = comparable(item, folders=folders, where=key)
        return kept
    if isinstance(value, list):
        items = [comparable(item, folders=folders, where=where) for item in value]
        # Each emulator a shard started answered at a port of its own: one address, once.
        return _once(items) if where == "answered_by" else items
    if isinstance(value, str) and where == "base_url":
        return LOOPBACK_PORT.sub(r"\1:<port>", value)
    if isinstance(value, str):
        for folder in folders:
            value = value.replace(folder, "<output>")
    return value


def differences(a: Any, b: Any, place: str = "") -> list[str]:
    """Where two comparable documents differ, as JSON pointers with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                found.append(f"{place}/{key}: only in {'first' if key in a else 'second'}")
            else:
                found += differences(a[key], b[key], f"{place}/{key}")
        return found
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{place}: {len(a)} items vs {len(b)}"]
        found = []
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found += differences(x, y, f"{place}/{index}")
        return found
    return [] if a == b else [f"{place}: {a!r} != {b!r}"]


def _once(items: list[Any]) -> list[Any]:
    kept: list[Any] = []
    for item in items:
        if item not in kept:
            kept.append(item)
    return kept
