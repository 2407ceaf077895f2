"""Reads the JSON files of a plugin (manifest, hooks, MCP servers) within the project's bounds.

JSON errors are reported as JSON (``Expecting ',' delimiter`` at file:line:column), not as the
YAML errors ``read_yaml`` would give for the same text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skilltest.errors import InputError, PluginError
from skilltest.files import decode, read_bytes
from skilltest.limits import MAX_YAML_BYTES


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # JSON.parse keeps the last of two equal keys without a word, and so does Claude Code: a
    # server declared twice under one name would silently lose its first definition.
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _line_of_second(text: str, key: str) -> int | None:
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    matches = list(pattern.finditer(text))
    if len(matches) < 2:
        return None
    return text.count("\n", 0, matches[1].start()) + 1


def read_json(path: Path, error: type[InputError] = PluginError) -> Any:
    """Parses a JSON file no larger than the project's file bound, without duplicate keys.

    Raises:
        InputError: (of class ``error``) a missing, unreadable, too large, non-UTF-8 or
            malformed file, or a key written twice in one object, at ``file:line:column``.
    """
    raw = read_bytes(
        path,
        limit=MAX_YAML_BYTES,
        error=error,
        large_fix="a plugin's JSON files hold a few declarations; check that this is the "
        "right file",
    )
    text = decode(
        raw,
        path,
        error=error,
        bom=True,
        fix="save the file as UTF-8 (Claude Code reads it as UTF-8 too)",
    )
    try:
        return json.loads(text, object_pairs_hook=_refuse_duplicates)
    except json.JSONDecodeError as exc:
        raise error(
            f"not valid JSON: {exc.msg}",
            location=f"{path}:{exc.lineno}:{exc.colno}",
            fix="check commas, quotes and brackets (JSON has no comments and no trailing "
            "commas); `python -m json.tool FILE` points at the same place",
        ) from None
    except _DuplicateKey as exc:
        second = _line_of_second(text, exc.key)
        raise error(
            f"duplicate key {exc.key!r}",
            location=f"{path}:{second}" if second else str(path),
            fix="keep one of the two; Claude Code would silently use only the last",
        ) from None
    except RecursionError:
        raise error(
            "nested too deeply to read",
            location=str(path),
            fix="flatten the structure; plugin files need only a few levels",
        ) from None
