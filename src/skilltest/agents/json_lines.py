"""Reading an agent's JSON-lines output, one JSON object a line (OpenCode's ``--format json``,
Codex's ``--json``, Gemini CLI's ``stream-json``).

A line that is not a JSON object (a stray print, a truncated line, JSON nested past what the
parser takes) is reported as ``None`` so that each parser can say what it skipped, never raised.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

STDERR_TAIL = 500
"""How many characters from the end of an agent's stderr a failed run's error quotes."""


def json_object(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def json_lines(lines: Iterable[str]) -> Iterator[dict[str, Any] | None]:
    """Each line's JSON object, ``None`` for a line that is not one (blank lines skipped)."""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            yield None
            continue
        yield event if isinstance(event, dict) else None
