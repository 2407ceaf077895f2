"""TODO comments in suites and model scripts: what a person still has to fill in.

``skilltest init`` writes files that run at once and marks what only their author can know (a
real prompt, what the answer must say) with a whole-line YAML comment::

    # TODO: a request where the skill should change the answer
    prompt: "..."

The comment applies to the line after it. ``skilltest validate`` lists every one with its file,
its line, the line it is about and the fix, so that none is forgotten; a file with a TODO left
is not finished.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

MARKER = "TODO:"
"""How a TODO comment starts after the ``#``."""

_TODO = re.compile(r"^\s*#\s*TODO\b[:\s]*(?P<text>.*?)\s*$")


@dataclass(frozen=True)
class Todo:
    """One TODO comment."""

    path: Path
    """The file."""
    line: int
    """Its line (1-based)."""
    text: str
    """What it asks for."""
    subject: str
    """The first line after it that is neither blank nor a comment, stripped ("" at the end of
    the file): what to fill in."""

    @property
    def place(self) -> str:
        """``file:line``."""
        return f"{self.path}:{self.line}"

    def __str__(self) -> str:
        about = f"line {self.line + 1}" if not self.subject else f"`{_shorten(self.subject)}`"
        return (
            f"{self.place}: TODO: {self.text}\n"
            f"  fix: fill in {about} below it, then delete the TODO line"
        )


def comment(text: str, indent: str = "") -> str:
    """A TODO line for a generated file (no newline)."""
    return f"{indent}# {MARKER} {text}"


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def todos(path: Path, text: str) -> list[Todo]:
    """Every TODO comment of a file's text, in order."""
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        match = _TODO.match(line)
        if match is None:
            continue
        subject = next(
            (
                after.strip()
                for after in lines[index + 1 :]
                if after.strip() and not after.lstrip().startswith("#")
            ),
            "",
        )
        found.append(Todo(path, index + 1, match.group("text"), subject))
    return found
