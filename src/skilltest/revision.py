"""Revision A/B (``--against REF``): the skill as it was, and how the edit moved each scenario.

REF is a folder holding the previous skill, or a git revision of the repository that holds the
current one. A revision is read with ``git archive`` into a folder the caller owns, so the user's
work tree and index are never touched. The comparison itself is pure: the with-skill pass rate
(or mean score) minus the previous revision's, with the interval the layer reads the
with-vs-without comparison from (exact for pass rates, a betting confidence sequence for
means), read against the same band as the with-vs-without verdict
(:func:`skilltest.decision.delta_verdict`).
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.decision import IMPROVED_ABOVE, MIN_DELTA, delta_verdict
from skilltest.errors import InputError
from skilltest.skills import Skill, load_skill
from skilltest.stats import EMPTY, Interval

PREVIOUS = "previous"
"""The arm that runs the skill as it was at REF."""
ERROR = "error"
"""The against-verdict when an arm has too few judged runs to compare."""
MOVES = ("improved", "neutral", "regressed", "inconclusive", ERROR)
"""The against-verdicts, in the order the summary counts them."""
BAND = f"[{100 * MIN_DELTA:+.0f}%, {100 * IMPROVED_ABOVE:+.0f}%]"
"""The neutral band as the reports show it."""


@dataclass(frozen=True)
class Against:
    """How the current skill compares with the previous revision on one scenario."""

    ref: str
    """The revision or folder as the user gave it."""
    delta: Interval
    """With-skill pass rate (or mean) minus the previous revision's, with its interval."""
    verdict: str
    """``improved``, ``neutral``, ``regressed``, ``inconclusive`` or ``error``."""

    def to_dict(self) -> dict[str, Any]:
        """The ``against`` entry of a scenario in a results file."""
        return {
            "ref": self.ref,
            "delta": self.delta.value,
            "ci": None if self.delta.empty else [self.delta.low, self.delta.high],
            "verdict": self.verdict,
        }


def compare(ref: str, delta: Interval, min_delta: float = MIN_DELTA) -> Against:
    """The verdict on ``delta``, current minus previous with its interval (empty: ``error``)."""
    if delta.empty:
        return Against(ref, EMPTY, ERROR)
    return Against(ref, delta, str(delta_verdict(delta, min_delta)))


def summary_line(ref: str, verdicts: Iterable[str]) -> str:
    """``against HEAD~1: 2 improved, 1 neutral, 0 regressed`` (other verdicts when present)."""
    counts = {move: 0 for move in MOVES}
    for verdict in verdicts:
        counts[verdict] = counts.get(verdict, 0) + 1
    shown = [m for m in MOVES if m in ("improved", "neutral", "regressed") or counts[m]]
    return f"against {ref}: " + ", ".join(f"{counts[m]} {m}" for m in shown)


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)


def previous_skill(skill: Skill, ref: str, into: Path) -> Skill:
    """The skill as it was at ``ref``, loaded under the current skill's name.

    ``ref`` is a folder (holding SKILL.md, or ``<name>/SKILL.md``) when one exists at that path;
    otherwise a git revision of the repository holding the skill, whose copy of the skill folder
    is extracted below ``into``.

    Raises:
        InputError: ``ref`` is neither a folder nor a revision of that repository, or the skill
            folder (or its SKILL.md) does not exist there.
    """
    folder = Path(ref)
    if folder.is_dir():
        for candidate in (folder / "SKILL.md", folder / skill.name / "SKILL.md"):
            if candidate.is_file():
                return load_skill(candidate, skill.name)
        raise InputError(
            f"no SKILL.md in {folder} (nor in {folder / skill.name})",
            location=f"--against {ref}",
            fix="give the folder of the previous skill (the one holding its SKILL.md) "
            "or a git revision",
        )
    directory = skill.directory.resolve()
    top = _git(directory, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise InputError(
            f"{ref!r} is not a folder, and the skill {skill.name!r} ({directory}) is in no git "
            "repository to read a revision from",
            location=f"--against {ref}",
            fix="give the folder of the previous skill, or commit the skill to git",
        )
    root = Path(top.stdout.decode().strip()).resolve()
    commit = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if commit.returncode != 0:
        raise InputError(
            f"{ref!r} is not a folder nor a revision of the repository {root}",
            location=f"--against {ref}",
            fix="give a commit, branch or tag of that repository (git log --oneline "
            f"-- {directory}) or the folder of the previous skill",
        )
    sha = commit.stdout.decode().strip()
    relative = directory.relative_to(root).as_posix()
    listed = _git(root, "ls-tree", "--name-only", sha, "--", f"{relative}/SKILL.md")
    if listed.returncode != 0 or not listed.stdout.strip():
        raise InputError(
            f"the skill folder {relative} has no SKILL.md at {ref} ({sha[:12]})",
            location=f"--against {ref}",
            fix="pick a revision where the skill existed (git log --oneline -- "
            f"{relative}/SKILL.md)",
        )
    archive = _git(root, "archive", "--format=tar", sha, "--", relative)
    if archive.returncode != 0:
        raise InputError(
            f"git archive could not read {relative} at {ref}: "
            f"{archive.stderr.decode(errors='replace').strip()}",
            location=f"--against {ref}",
            fix="check that the repository is readable (git archive works offline)",
        )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        # The "data" filter refuses absolute paths, links out of the folder and device files.
        tar.extractall(into, filter="data")
    return load_skill(into / relative / "SKILL.md", skill.name)


def previous_skills(skills: Iterable[Skill], ref: str, scratch: Path) -> dict[Path, Skill]:
    """Each skill as it was at ``ref``, keyed by its current SKILL.md's path, each read once
    into its own folder below ``scratch``."""
    previous: dict[Path, Skill] = {}
    for current in skills:
        if current.skill_file not in previous:
            into = scratch / str(len(previous))
            into.mkdir()
            previous[current.skill_file] = previous_skill(current, ref, into)
    return previous


@contextlib.contextmanager
def previous_revision(ref: str | None, skills: Iterable[Skill]) -> Iterator[dict[Path, Skill]]:
    """While inside: each skill as it was at ``ref`` (:func:`previous_skills`), read into a
    scratch folder that is removed afterwards; nothing when ``ref`` is ``None``.

    Raises:
        InputError: as :func:`previous_skill`.
    """
    if ref is None:
        yield {}
        return
    with tempfile.TemporaryDirectory(prefix="skilltest-against-") as scratch:
        yield previous_skills(skills, ref, Path(scratch))
