"""A suite's own replay rules (its ``replay:`` key): request parts ignored, strings normalised and
values redacted on top of the built-in rules of :mod:`skilltest.replay.normalise`.

Its own module so that reading a suite checks the rules without importing what matching a
request needs.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from skilltest.errors import SuiteError
from skilltest.redact import declare_secrets


@dataclass(frozen=True)
class Rules:
    """A suite's own rules (`replay:` key), on top of the built-in ones."""

    ignore: tuple[str, ...] = ()
    """JSON pointers removed before hashing (``/metadata``, ``/system/2/text``); a segment ``*``
    stands for every key or index at that level."""
    normalise: tuple[tuple[str, str], ...] = ()
    """(regex, replacement) pairs applied to every string, after the built-in rules."""
    redact: tuple[str, ...] = ()
    """Values never written to a cassette, as the suite writes them: a literal value, or
    ``$NAME`` for the value of the environment variable NAME when the suite was loaded."""
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """The values ``redact`` stands for (literals as written, variables as read), longest first;
    replaced by ``[REDACTED]`` in every string. Never written anywhere."""

    def with_secrets(self, values: Iterable[str]) -> Rules:
        """These rules with more values replaced by ``[REDACTED]`` (a run's own secrets, such as
        a controlled world's tokens, which differ in every run)."""
        extra = [value for value in values if value and value not in self.secrets]
        if not extra:
            return self
        merged = sorted({*self.secrets, *extra}, key=len, reverse=True)
        return dataclasses.replace(self, secrets=tuple(merged))

    @classmethod
    def from_suite(
        cls,
        data: Mapping[str, Any] | None,
        location: str,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> Rules:
        """The rules of a suite's ``replay:`` mapping.

        Args:
            data: The mapping (``None`` when the suite has no ``replay:`` key).
            location: Where the mapping is, ``file#/replay``, for errors.
            environ: Where ``$NAME`` redactions are read; the process environment by default.

        Raises:
            SuiteError: a key that is not a list of the right things, a pointer that does not
                start with ``/``, a pattern that does not compile, or a redaction of fewer than
                4 characters (it would blank out ordinary words), naming the place.
        """
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise SuiteError(
                "`replay` must be a mapping",
                location=location,
                fix="write `replay: {ignore: [...], normalise: [{pattern, replacement}], "
                "redact: [...]}`",
            )
        unknown = sorted(set(data) - {"ignore", "normalise", "redact"})
        if unknown:
            raise SuiteError(
                f"unknown key {unknown[0]!r} under replay",
                location=f"{location}/{unknown[0]}",
                fix="the keys are ignore, normalise and redact",
            )
        ignore = tuple(_strings(data.get("ignore"), f"{location}/ignore"))
        for index, pointer in enumerate(ignore):
            if not pointer.startswith("/"):
                raise SuiteError(
                    f"{pointer!r} is not a JSON pointer",
                    location=f"{location}/ignore/{index}",
                    fix='write a JSON pointer into the request, starting with "/", e.g. '
                    '"/system/2/text" or "/messages/*/content/0/text"',
                )
        normalise = []
        raw_normalise = data.get("normalise") or []
        if not isinstance(raw_normalise, list):
            raise SuiteError(
                "`normalise` must be a list",
                location=f"{location}/normalise",
                fix="write a list of `{pattern: REGEX, replacement: TEXT}` mappings",
            )
        for index, entry in enumerate(raw_normalise):
            where = f"{location}/normalise/{index}"
            if (
                not isinstance(entry, Mapping)
                or not isinstance(entry.get("pattern"), str)
                or not isinstance(entry.get("replacement", ""), str)
                or set(entry) - {"pattern", "replacement"}
            ):
                raise SuiteError(
                    "each normalise entry is a mapping of `pattern` and `replacement`",
                    location=where,
                    fix="write `{pattern: REGEX, replacement: TEXT}`",
                )
            pattern, replacement = entry["pattern"], entry.get("replacement", "")
            try:
                compiled = re.compile(pattern)
                compiled.sub(replacement, "")  # a bad group reference fails only when used
            except (re.error, IndexError) as exc:
                raise SuiteError(
                    f"the pattern {pattern!r} (or its replacement) is not valid: {exc}",
                    location=where,
                    fix="write a Python regular expression; refer to groups as \\1 or \\g<name>",
                ) from None
            normalise.append((pattern, replacement))
        redact = tuple(_strings(data.get("redact"), f"{location}/redact"))
        env = os.environ if environ is None else environ
        secrets: list[str] = []
        for index, entry in enumerate(redact):
            value = env.get(entry[1:], "") if entry.startswith("$") else entry
            if not entry.startswith("$") and len(entry) < 4:
                raise SuiteError(
                    f"{entry!r} is too short to redact (it would blank out ordinary text)",
                    location=f"{location}/redact/{index}",
                    fix="redact values of at least 4 characters, or name an environment "
                    "variable as $NAME",
                )
            if len(value) >= 4:
                secrets.append(value)
                # Kept out of what the command prints and writes, not only of cassettes.
                declare_secrets([value])
        secrets.sort(key=len, reverse=True)
        return cls(
            ignore=ignore,
            normalise=tuple(normalise),
            redact=redact,
            secrets=tuple(dict.fromkeys(secrets)),
        )

    def describe(self) -> list[str]:
        """The rules as a cassette lists them; a literal redaction is counted, never shown."""
        lines = [f"ignore {pointer}" for pointer in self.ignore]
        lines += [f"normalise {pattern} -> {repl}" for pattern, repl in self.normalise]
        literals = sum(1 for entry in self.redact if not entry.startswith("$"))
        lines += [f"redact {entry}" for entry in self.redact if entry.startswith("$")]
        if literals:
            lines.append(f"redact {literals} literal value{'s' if literals > 1 else ''}")
        return lines


def _strings(value: Any, location: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SuiteError(
            "expected a list of non-empty strings",
            location=location,
            fix='write a YAML list of strings, e.g. ["/system/2/text"]',
        )
    return list(value)
