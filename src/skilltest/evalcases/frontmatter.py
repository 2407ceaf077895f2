"""Markdown files with a YAML frontmatter: ``prompt.md``, ``graders/*.md``, ``mocks/*/*.md``.

Read as Claude Code's plugin eval reads them: a byte-order mark and ``\\r\\n`` line ends are
normalised, a first line ``---`` opens the frontmatter and the next ``---`` line closes it, an
empty frontmatter is an empty mapping, and a file without one is all body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilltest.errors import SuiteError
from skilltest.files import decode, read_bytes
from skilltest.suite.loader import parse_yaml

MAX_MARKDOWN_BYTES = 1024 * 1024
"""The largest prompt, grader or mock file read (the CLI's own cap)."""


@dataclass(frozen=True)
class Markdown:
    """A markdown file split into its frontmatter and its body."""

    path: Path
    """The file."""
    frontmatter: dict[str, Any] = field(default_factory=dict)
    """The frontmatter's keys (empty without one)."""
    body: str = ""
    """What follows the frontmatter."""
    had_frontmatter: bool = False
    """Whether the file opens with a frontmatter (a grader file without one is skipped)."""
    body_line: int = 1
    """The line the body starts on, for messages."""

    def line_of(self, key: str) -> int:
        """The line a frontmatter key is written on (1 when it cannot be found)."""
        for number, line in enumerate(self.path.read_text(errors="replace").splitlines(), 1):
            if line.startswith(f"{key}:"):
                return number
        return 1


def read_markdown(path: Path) -> Markdown:
    """Reads ``path`` and splits off its frontmatter.

    Raises:
        SuiteError: an unreadable file, a frontmatter that is not closed, not YAML or not a
            mapping; each names the file and the line.
    """
    raw = read_bytes(
        path,
        limit=MAX_MARKDOWN_BYTES,
        error=SuiteError,
        too_large="a prompt, grader or mock file may be",
        large_fix="keep the file under 1 MB (move long fixtures to a file {{file:...}} reads)",
        missing_fix="check the path",
    )
    text = decode(raw, path, error=SuiteError, fix="save the file as UTF-8")
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return Markdown(path=path, body=text)
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise SuiteError(
            'unterminated frontmatter (opening "---" with no closing "---")',
            location=f"{path}:1",
            fix='close the frontmatter with a line "---" before the body',
        )
    source = "\n".join(lines[1:end])
    # A blank first line keeps the YAML's line numbers those of the file.
    data = parse_yaml("\n" + source, str(path)) if source.strip() else None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SuiteError(
            "frontmatter must be a YAML object",
            location=f"{path}:2",
            fix="write key: value lines between the two --- lines",
        )
    return Markdown(
        path=path,
        frontmatter=data,
        body="\n".join(lines[end + 1 :]),
        had_frontmatter=True,
        body_line=end + 2,
    )
