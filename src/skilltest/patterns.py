"""Regular expressions from suite files, compiled once and matched with a time limit.

Patterns use the ``regex`` module, whose ``timeout`` turns a catastrophic pattern into a
:class:`~skilltest.errors.PatternError` that names the pattern and where it was written, instead
of a hang. Python's inline flags (``(?i)``, ``(?s)``...) work as in ``re``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from skilltest.errors import PatternError

if TYPE_CHECKING:
    import regex

DEFAULT_TIMEOUT_S = 1.0
"""Time limit for one pattern against one text."""

# Inputs on which a catastrophically backtracking pattern blows up, tried when a suite is loaded
# so that most such patterns are reported before any model is called.
_PROBES: tuple[str, ...] = (
    "a" * 40 + "!",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" * 50 + "\n!",
    ("ab" * 30 + " ") * 20 + "!",
    "x " * 2000 + "!",
    ("0" * 40 + ".") + "!",
    '{"a": "' + "b" * 3000 + '"',
)

# ``regex`` takes ``re``'s values for these flags; naming them from ``re`` lets a suite be read
# without importing ``regex`` until a pattern is compiled.
FLAG_NAMES: dict[str, int] = {
    "IGNORECASE": re.IGNORECASE,
    "MULTILINE": re.MULTILINE,
    "DOTALL": re.DOTALL,
    "VERBOSE": re.VERBOSE,
}
"""Flags a suite may name in ``pattern_flags``."""


@dataclass(frozen=True)
class Pattern:
    """One compiled pattern and where it was written, for error messages."""

    source: str
    """The pattern as written."""
    location: str
    """``file#/json/pointer`` of the pattern."""
    compiled: regex.Pattern[str] = field(repr=False, compare=False)
    """The compiled pattern."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """Time limit for one match."""
    sticky: bool = False
    """Matches only where the text starts, and counts only matches that follow each other
    from there (a JavaScript pattern's ``y`` flag)."""

    def search(self, text: str) -> regex.Match[str] | None:
        """The first match in ``text``, or ``None``.

        Raises:
            PatternError: the match exceeded the time limit.
        """
        try:
            if self.sticky:
                return self.compiled.match(text, timeout=self.timeout_s)
            return self.compiled.search(text, timeout=self.timeout_s)
        except TimeoutError as exc:
            raise _timeout_error(self) from exc

    def matches(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text``."""
        return self.search(text) is not None

    def count(self, text: str) -> int:
        """How many non-overlapping matches ``text`` holds.

        Raises:
            PatternError: the search exceeded the time limit.
        """
        try:
            if self.sticky:
                return self._sticky_count(text)
            return len(self.compiled.findall(text, timeout=self.timeout_s))
        except TimeoutError as exc:
            raise _timeout_error(self) from exc

    def _sticky_count(self, text: str) -> int:
        # Each match must start where the previous one ended; an empty one ends the run of
        # matches at the next position, as JavaScript moves on by one there.
        found, position = 0, 0
        while position <= len(text):
            match = self.compiled.match(text, position, timeout=self.timeout_s)
            if match is None:
                break
            found += 1
            position = match.end() + (1 if match.end() == match.start() else 0)
        return found


def _timeout_error(pattern: Pattern) -> PatternError:
    return PatternError(
        f"pattern {pattern.source!r} took longer than {pattern.timeout_s:g}s to match "
        "(catastrophic backtracking)",
        location=pattern.location,
        fix="remove nested quantifiers such as (a+)+ or (.*)*, or anchor the pattern",
    )


def pattern_text(source: object, location: str) -> str:
    """A suite's pattern as written, which must be a string.

    Raises:
        PatternError: not a string.
    """
    if not isinstance(source, str):
        raise PatternError(
            f"a pattern must be a string, got {type(source).__name__} {source!r}",
            location=location,
            fix="quote the pattern in the YAML file",
        )
    return source


def compile_pattern(
    source: object,
    location: str,
    *,
    flags: int = 0,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    probe: bool = True,
    translated: str | None = None,
    sticky: bool = False,
) -> Pattern:
    """Compiles one pattern from a suite file.

    Args:
        source: The pattern as written in the file.
        location: ``file#/pointer`` used in error messages.
        flags: ``regex`` flags applied on top of the pattern's inline flags.
        timeout_s: Time limit for one match.
        probe: Try the pattern on inputs known to expose catastrophic backtracking.
        translated: What is compiled in place of ``source`` when the pattern was written in
            another dialect (:mod:`skilltest.javascript`); ``source`` is still what messages show.
        sticky: Match only where the text starts (:attr:`Pattern.sticky`).

    Raises:
        PatternError: not a string, does not compile, or exceeds the time limit on a probe.
    """
    written = pattern_text(source, location)
    import regex  # on first use, so that importing this module stays cheap for every command

    try:
        compiled = regex.compile(
            written if translated is None else translated, flags | regex.VERSION0
        )
    except regex.error as exc:
        raise PatternError(
            f"invalid regular expression {written!r}: {exc}",
            location=location,
            fix="escape special characters with a backslash (in YAML double quotes, write \\\\)",
        ) from exc
    pattern = Pattern(
        source=written, location=location, compiled=compiled, timeout_s=timeout_s, sticky=sticky
    )
    if probe:
        for text in _PROBES:
            pattern.search(text)
    return pattern


def compile_patterns(
    sources: Iterable[object],
    location: str,
    *,
    flags: int = 0,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> tuple[Pattern, ...]:
    """Compiles a list of patterns; ``location`` is the pointer of the list."""
    return tuple(
        compile_pattern(source, f"{location}/{index}", flags=flags, timeout_s=timeout_s)
        for index, source in enumerate(sources)
    )


def parse_flags(names: Iterable[str], location: str) -> int:
    """Turns ``pattern_flags: [IGNORECASE, ...]`` into ``regex`` flags."""
    flags = 0
    for name in names:
        try:
            flags |= FLAG_NAMES[name.upper()]
        except KeyError:
            raise PatternError(
                f"unknown pattern flag {name!r}",
                location=location,
                fix="use one of " + ", ".join(FLAG_NAMES),
            ) from None
    return flags


def snippet(text: str, start: int, end: int, context: int = 30) -> str:
    """The match ``text[start:end]`` with ``context`` characters around it, on one line."""
    left = max(0, start - context)
    right = min(len(text), end + context)
    inner = text[left:right].replace("\n", " ")
    return ("…" if left else "") + inner + ("…" if right < len(text) else "")
