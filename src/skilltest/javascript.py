"""What Claude Code, a JavaScript program, makes of text: its regular expressions and its JSON.

**Regular expressions.**
Claude Code's plugin eval cases write patterns as JavaScript ``RegExp`` sources with flags from
``dgimsuvy``. :func:`compile_js_pattern` rewrites such a source into the ``regex`` module's
syntax where the two dialects read the same text differently, so a pattern matches the same
strings in both places:

* ``.`` stops at ``\\n``, ``\\r``, U+2028 and U+2029 (any character with ``s``);
* ``^`` and ``$`` are the start and end of the text (of any line with ``m``, where JavaScript's
  lines also end at ``\\r``, U+2028 and U+2029); Python's ``$`` would also match before a final
  newline;
* ``\\d``, ``\\w`` and ``\\b`` are ASCII (``[0-9]``, ``[A-Za-z0-9_]``); ``\\s`` is JavaScript's
  list of white space;
* ``(?<name>...)`` and ``\\k<name>`` are named groups, ``[^]`` is any character and ``[]`` none,
  ``\\cX`` a control character, ``\\u{...}`` a code point, ``\\/`` a slash, and an escaped
  letter with no meaning (``\\a``) the letter itself;
* ``i`` ignores case; ``y`` (sticky) matches only from the start and counts only matches that
  follow each other; ``g``, ``d``, ``u`` and ``v`` change nothing a grader can see.

Patterns use the ``regex`` module's time limit as every suite pattern does
(:mod:`skilltest.patterns`).

**JSON.** :func:`js_json` writes a value as ``JSON.stringify`` does (compact, numbers as
JavaScript writes them: ``1e-7``, ``0.00001``, ``2`` for ``2.0``), so that a pattern written
against the CLI's JSON matches the same text here.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from skilltest.errors import PatternError
from skilltest.patterns import DEFAULT_TIMEOUT_S, Pattern, compile_pattern, pattern_text

JS_FLAGS = frozenset("dgimsuvy")
"""The flags a JavaScript ``RegExp`` takes."""

_WORD = "A-Za-z0-9_"
_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_LINE_END = "\\n\\r\\u2028\\u2029"
_ANY = "(?s:.)"

# Outside a character class: each escape as its own class.
_CLASS_ESCAPES = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
}
# Inside a character class: the same sets as ranges (complements written out).
_IN_CLASS = {
    "d": "0-9",
    "D": "\\x00-/:-\\U0010ffff",
    "w": _WORD,
    "W": "\\x00-/:-@\\[-^`{-\\U0010ffff",
    "s": _SPACE,
    "S": (
        "\\x00-\\x08\\x0e-\\x1f!-\\x9f\\xa1-\\u167f\\u1681-\\u1fff\\u200b-\\u2027"
        "\\u202a-\\u202e\\u2030-\\u205e\\u2060-\\u2fff\\u3001-\\ufefe\\uff00-\\U0010ffff"
    ),
}
_BOUNDARY = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_NOT_BOUNDARY = f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"
# Escapes with a meaning in JavaScript that the regex module reads the same way.
_KEPT = set("fnrtv0123456789xupP")


def parse_js_flags(flags: object, location: str) -> str:
    """Checks a grader's ``flags`` the way the CLI does: letters of ``dgimsuvy``.

    Raises:
        PatternError: anything else.
    """
    if not isinstance(flags, str) or not set(flags) <= JS_FLAGS:
        raise PatternError(
            f"{flags!r} must be JS RegExp flags (d g i m s u v y)",
            location=location,
            fix='write flags: "" or letters of dgimsuvy, e.g. flags: i',
        )
    return flags


def translate(source: str, flags: str) -> str:
    """``source`` (a JavaScript pattern with ``flags``) in the ``regex`` module's syntax.

    Raises:
        ValueError: an escape the pattern cannot end with (a lone ``\\`` or ``\\c``).
    """
    multiline, dotall, unicode = "m" in flags, "s" in flags, bool({"u", "v"} & set(flags))
    out: list[str] = []
    index, in_class = 0, False
    while index < len(source):
        char = source[index]
        if char == "\\":
            if index + 1 >= len(source):
                raise ValueError("\\ at end of pattern")
            escape, index = _escape(source, index + 1, in_class=in_class, unicode=unicode)
            out.append(escape)
            continue
        if in_class:
            if char == "]":
                in_class = False
                out.append("]")
            elif char in "[&~|":
                out.append("\\" + char)
            else:
                out.append(char)
            index += 1
            continue
        if char == "[":
            if source.startswith("[^]", index):
                out.append(_ANY)
                index += 3
            elif source.startswith("[]", index):
                out.append("(?!)")
                index += 2
            else:
                in_class = True
                out.append("[")
                index += 1
                if index < len(source) and source[index] == "^":
                    out.append("^")
                    index += 1
            continue
        if char == ".":
            out.append(_ANY if dotall else f"[^{_LINE_END}]")
        elif char == "^":
            out.append(f"(?:(?<=[{_LINE_END}])|\\A)" if multiline else "\\A")
        elif char == "$":
            out.append(f"(?=[{_LINE_END}]|\\Z)" if multiline else "\\Z")
        elif (
            char == "("
            and source.startswith("(?<", index)
            and source[index + 3 : index + 4] not in ("=", "!")
        ):
            out.append("(?P<")
            index += 3
            continue
        else:
            out.append(char)
        index += 1
    return "".join(out)


def _escape(source: str, index: int, *, in_class: bool, unicode: bool) -> tuple[str, int]:
    """The escape whose letter is at ``index`` and the index after it."""
    letter = source[index]
    if letter in _CLASS_ESCAPES:
        return (_IN_CLASS[letter] if in_class else _CLASS_ESCAPES[letter]), index + 1
    if letter == "b":
        return ("\\x08" if in_class else _BOUNDARY), index + 1
    if letter == "B" and not in_class:
        return _NOT_BOUNDARY, index + 1
    if letter == "c":
        control = source[index + 1 : index + 2]
        if not control.isalpha() or not control.isascii():
            raise ValueError("\\c must be followed by a letter")
        return f"\\x{ord(control) % 32:02x}", index + 2
    if letter == "k" and source.startswith("<", index + 1):
        end = source.find(">", index)
        if end != -1:
            return f"(?P={source[index + 2 : end]})", end + 1
    if letter == "u" and unicode and source.startswith("{", index + 1):
        end = source.find("}", index)
        if end != -1:
            return f"\\U{int(source[index + 2 : end], 16):08x}", end + 1
    if letter in _KEPT:
        return "\\" + letter, index + 1
    if letter.isalpha():
        # JavaScript reads an escaped letter with no meaning as the letter (\a is "a").
        return letter, index + 1
    return "\\" + letter, index + 1


def compile_js_pattern(
    source: object,
    flags: str,
    location: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Pattern:
    """Compiles a JavaScript pattern (``new RegExp(source, flags)``) to match as it would there.

    Args:
        source: The pattern as written.
        flags: Its flags, letters of ``dgimsuvy``.
        location: ``file#/pointer`` used in error messages.
        timeout_s: Time limit for one match.

    Raises:
        PatternError: not a string, or not a pattern this reads.
    """
    written = pattern_text(source, location)
    try:
        translated = translate(written, flags)
    except (ValueError, OverflowError) as exc:
        raise PatternError(
            f"invalid regular expression /{source}/{flags}: {exc}",
            location=location,
            fix="fix the escape (a JavaScript RegExp source, as the plugin eval reads it)",
        ) from exc
    return compile_pattern(
        source,
        location,
        flags=re.IGNORECASE if "i" in flags else 0,
        timeout_s=timeout_s,
        translated=translated,
        sticky="y" in flags,
    )


def js_number(value: float) -> str:
    """A number as JavaScript writes it (``Number.prototype.toString``): ``1e-7``, ``0.00001``,
    ``1e+21``, ``2`` for ``2.0``."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    # The shortest digits that read back as the same float, as both languages choose them.
    _, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    text = "".join(map(str, digits))
    k = len(text)
    n = int(exponent) + k  # value = 0.<text> * 10**n
    minus = "-" if value < 0 else ""
    if k <= n <= 21:
        return minus + text + "0" * (n - k)
    if 0 < n <= 21:
        return minus + text[:n] + "." + text[n:]
    if -6 < n <= 0:
        return minus + "0." + "0" * -n + text
    power = n - 1
    mantissa = text[0] + ("." + text[1:] if k > 1 else "")
    return f"{minus}{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"


def js_json(value: Any) -> str:
    """``JSON.stringify(value)``: compact, keys in their order, non-ASCII as written."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, int):
        # JavaScript reads a whole number beyond 2**53 as the nearest float.
        return str(value) if abs(value) <= 2**53 else js_number(float(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{js_json(str(k))}:{js_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_json(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def js_json_indented(value: Any, depth: int = 0) -> str:
    """``JSON.stringify(value, null, 2)``."""
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, Mapping) and value:
        items = [
            f"{inner}{js_json(str(k))}: {js_json_indented(v, depth + 1)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list | tuple) and value:
        items = [f"{inner}{js_json_indented(v, depth + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return js_json(value)
