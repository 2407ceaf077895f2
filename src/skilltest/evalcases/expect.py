"""A mock's ``expect:`` guard on a call's input, and the templates of its canned answer.

A guard maps an argument (``project``, or a dotted path into it: ``filter.status``,
``labels.0``) to what it must be:

* a value: the argument equals it (a number or a boolean by its text: ``5``, ``true``);
* a list of values: it equals one of them;
* a type name (``string``, ``number``, ``bool``/``boolean``, ``object``, ``array``): it is one;
* ``/regex/`` (flags ``i`` and ``s`` only): its text matches; a small dialect, no groups,
  alternation or back references, so a guard cannot backtrack without end;
* a mapping: guards on the fields below it.

A call that breaks a guard aborts the run (that is the regression a guard exists to catch).
Messages are the CLI's own. A canned answer may hold ``{{input.<path>}}`` (the argument: text
as is, anything else as JSON; nothing when missing) and ``{{file:NAME}}`` (a file beside the
mock, its name possibly built from ``{input.<path>}`` parts).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skilltest.errors import PatternError
from skilltest.javascript import compile_js_pattern

MAX_GUARDS = 32
"""The most guards one responder may carry."""
TYPE_NAMES = frozenset({"string", "number", "bool", "boolean", "object", "array"})
MAX_FIXTURE_BYTES = 1024 * 1024
_REGEX = re.compile(r"^/(.+)/([a-z]*)$", re.DOTALL)
_TEMPLATE = re.compile(
    r"\{\{\s*(input\.[A-Za-z0-9_.-]+|file:(?:[^{}]|\{input\.[A-Za-z0-9_.-]+\})+?)\s*\}\}"
)
_PLAIN_SEGMENT = re.compile(r"^(?!\.{1,2}$)[A-Za-z0-9._-]+$")
_DIALECT = (
    'expect: /regex/ guards use a small dialect — literals, ".", escapes, character classes, and '
    'quantifiers (* + ? {m,n}) on single atoms, with optional ^ and $; no groups "(…)", '
    'alternation "|", backreferences, or lookaround. Use a list of literals, a type name, or '
    "several simpler guards instead"
)


def _count(guards: Mapping[str, Any]) -> int:
    return sum(_count(v) if isinstance(v, Mapping) else 1 for v in guards.values())


def _regex_problem(source: str) -> str | None:
    index = 0
    while index < len(source):
        char = source[index]
        if char == "\\":
            following = source[index + 1 : index + 2]
            if not following:
                return "pattern ends with a lone backslash"
            if (following.isdigit() and following != "0") or following == "k":
                return _DIALECT
            index += 2
            continue
        if char == "[":
            end = index + 1
            while end < len(source) and source[end] != "]":
                end += 2 if source[end] == "\\" else 1
            if end >= len(source):
                return "unterminated character class"
            index = end + 1
            continue
        if (
            char in "()|"
            or (char == "^" and index != 0)
            or (char == "$" and index != len(source) - 1)
        ):
            return _DIALECT
        index += 1
    return None


def guard_problems(guards: Mapping[str, Any], prefix: str = "") -> list[str]:
    """What is wrong with a guard, in the CLI's words (empty when nothing is)."""
    problems: list[str] = []
    if not prefix and _count(guards) > MAX_GUARDS:
        return [
            f"expect: {_count(guards)} guards is more than the {MAX_GUARDS} one responder may "
            "carry — every call checks each of them; keep the ones that catch a wrong call"
        ]
    for key, value in guards.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, list):
            if not value:
                problems.append(
                    f"expect.{path}: an empty list of allowed values can never be satisfied — "
                    "list at least one"
                )
            continue
        if isinstance(value, Mapping):
            problems += guard_problems(value, path)
            continue
        found = _REGEX.match(str(value))
        if found:
            if not set(found.group(2)) <= {"i", "s"}:
                problems.append(
                    f"expect.{path}: {value} — only the i and s flags are supported in "
                    "expect: guards"
                )
                continue
            problem = _regex_problem(found.group(1))
            if problem is not None:
                problems.append(f"expect.{path}: {value} — {problem}")
    return problems


def lookup(value: Any, path: str) -> Any:
    """The argument at a dotted path (``a.b``, ``items.0``); ``None`` stands for missing."""
    current = value
    for part in path.split("."):
        if isinstance(current, list):
            if not part.isdigit() or int(part) >= len(current):
                return _MISSING
            current = current[int(part)]
        elif isinstance(current, Mapping):
            current = current.get(part, _MISSING) if part in current else _MISSING
        else:
            return _MISSING
    return current


class _Missing:
    def __repr__(self) -> str:
        return "(missing)"


_MISSING: Any = _Missing()


def _text(value: Any) -> str | None:
    """A scalar's text as JavaScript's ``String()`` gives it; ``None`` for anything else."""
    from skilltest.javascript import js_number

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return value
    return None


def _shown(value: Any) -> str:
    from skilltest.javascript import js_json

    if value is _MISSING:
        return "(missing)"
    text = js_json(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if value is None or value is _MISSING:
        return "missing"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def violation(
    arguments: Mapping[str, Any], guards: Mapping[str, Any], prefix: str = ""
) -> str | None:
    """The first guard ``arguments`` break, in the CLI's words; ``None`` when they meet all."""
    for key, expected in guards.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        actual = lookup(arguments, path)
        problem = _check(actual, expected, path, arguments)
        if problem is not None:
            return problem
    return None


def _check(actual: Any, expected: Any, path: str, arguments: Mapping[str, Any]) -> str | None:
    if isinstance(expected, list):
        if any(_text(actual) == str(option) for option in expected):
            return None
        return f"{path} = {_shown(actual)} is not one of [{', '.join(map(str, expected))}]"
    if isinstance(expected, Mapping):
        return violation(arguments, expected, path)
    found = _REGEX.match(str(expected))
    if found:
        try:
            pattern = compile_js_pattern(found.group(1), found.group(2), f"expect.{path}")
        except PatternError as exc:
            return f"{path}: {expected} is not a usable guard ({exc.message})"
        text = _text(actual)
        if text is not None and pattern.matches(text):
            return None
        return f"{path} = {_shown(actual)} does not match {expected}"
    if expected in TYPE_NAMES:
        wanted = "bool" if expected == "boolean" else expected
        if _kind(actual) == wanted:
            return None
        return f"{path} = {_shown(actual)} is not a {expected}"
    if _text(actual) == str(expected):
        return None
    return f'{path} = {_shown(actual)} is not "{expected}"'


def render(body: str, arguments: Mapping[str, Any], base: Path) -> tuple[str | None, str]:
    """A canned answer with its templates filled in; or ``None`` and why it cannot be."""
    from skilltest.javascript import js_json

    problem: str | None = None

    def fill(found: re.Match[str]) -> str:
        nonlocal problem
        spec = found.group(1)
        if spec.startswith("input."):
            value = lookup(arguments, spec[6:])
            if value is _MISSING:
                return ""
            return value if isinstance(value, str) else js_json(value)
        name = spec[5:].strip()

        def part(inner: re.Match[str]) -> str:
            nonlocal problem
            value = lookup(arguments, inner.group(1))
            text = "" if value is _MISSING or value is None else (_text(value) or js_json(value))
            if not _PLAIN_SEGMENT.match(text):
                problem = problem or (
                    f"{{input.{inner.group(1)}}} = {_shown(value)} is not a plain file-name segment"
                )
            return text

        name = re.sub(r"\{input\.([A-Za-z0-9_.-]+)\}", part, name)
        if problem is not None:
            return ""
        path = (base / name).resolve()
        if base.resolve() not in path.parents:
            problem = problem or f"{{{{file:{name}}}}} names a path outside the mock's directory"
            return ""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            problem = problem or f"{{{{file:{name}}}}}: no such fixture"
            return ""
        except OSError as exc:
            problem = problem or f"{{{{file:{name}}}}}: could not be read ({exc.strerror})"
            return ""
        if len(data) > MAX_FIXTURE_BYTES:
            problem = problem or (
                f"{{{{file:{name}}}}}: is {len(data)} bytes, over the {MAX_FIXTURE_BYTES}-byte "
                "fixture limit"
            )
            return ""
        return data.decode("utf-8", errors="replace")

    text = _TEMPLATE.sub(fill, body)
    return (None, problem) if problem is not None else (text, "")
