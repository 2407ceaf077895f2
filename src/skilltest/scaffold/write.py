"""Puts the scaffold on disk: new files only, and the ignore entries added to ``.gitignore``.

Nothing that exists is overwritten (unless asked): a suite already there is the author's work.
All files are checked before the first is written, so a refusal leaves the project untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skilltest.errors import InputError
from skilltest.scaffold.render import GITIGNORE, IGNORE_COMMENT, IGNORED, GeneratedFile


@dataclass(frozen=True)
class Written:
    """What :func:`write_scaffold` did, relative to the project root."""

    created: tuple[Path, ...]
    """Files written."""
    kept: tuple[Path, ...]
    """Shared files that were already there and left alone."""
    ignore_lines: tuple[str, ...]
    """Lines added to ``.gitignore`` (none when it already had them)."""


def _ignored_already(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines()}


def write_scaffold(root: Path, files: Sequence[GeneratedFile], *, force: bool = False) -> Written:
    """Writes ``files`` below ``root`` and adds the raw-output folders to ``root/.gitignore``.

    Args:
        root: The project root.
        files: What :func:`skilltest.scaffold.render_scaffold` made.
        force: Overwrite suites and model scripts that exist.

    Raises:
        InputError: a file exists (naming it, with the fix), before anything is written.
    """
    existing = [f.path for f in files if not f.shared and (root / f.path).exists()]
    if existing and not force:
        shown = ", ".join(p.as_posix() for p in existing)
        raise InputError(
            f"{len(existing)} file(s) skilltest init would write exist already: {shown}",
            location=str(root / existing[0]),
            fix="move them aside, or pass --force to overwrite them",
        )
    created: list[Path] = []
    kept: list[Path] = []
    for generated in files:
        path = root / generated.path
        if generated.shared and path.exists():
            kept.append(generated.path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generated.text, encoding="utf-8")
        created.append(generated.path)
    gitignore = root / GITIGNORE
    text = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
    missing = [line for line in IGNORED if line not in _ignored_already(text)]
    if missing:
        block = "\n".join([IGNORE_COMMENT, *missing]) + "\n"
        separator = (
            "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        )
        gitignore.write_text(text + separator + block, encoding="utf-8")
    return Written(tuple(created), tuple(kept), tuple(missing))
