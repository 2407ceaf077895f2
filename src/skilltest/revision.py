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
import hashlib
import io
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.decision import IMPROVED_ABOVE, MIN_DELTA, delta_verdict
from skilltest.errors import InputError
from skilltest.skills import Skill, load_skill
from skilltest.stats import EMPTY, Interval
from skilltest.stats.family import against_views as against_views  # for results readers

PREVIOUS = "previous"
"""The arm that runs the skill as it was at the first REF of ``--against``."""
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


MAX_REVISIONS = 9
"""How many ``--against`` REFs one run compares: arms ``previous`` to ``previous-9``, the
names results files may give an arm."""


def check_revision_count(refs: Sequence[str]) -> None:
    """Refuses more ``--against`` REFs than one run compares.

    Raises:
        InputError: naming the first REF past the limit.
    """
    if len(refs) > MAX_REVISIONS:
        raise InputError(
            f"--against was given {len(refs)} times; one run compares at most {MAX_REVISIONS} "
            "revisions",
            location=f"--against {refs[MAX_REVISIONS]}",
            fix=f"split the revisions over runs of at most {MAX_REVISIONS} --against each",
        )


def revision_arm(index: int) -> str:
    """The arm of the ``index``-th ``--against`` REF (from 0): ``previous``, then
    ``previous-2``, ``previous-3``... (a name that is also a folder and file name)."""
    return PREVIOUS if index == 0 else f"{PREVIOUS}-{index + 1}"


def revision_arms(refs: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Each REF of ``--against`` with its arm, in the order given."""
    return tuple((revision_arm(index), ref) for index, ref in enumerate(refs))


def is_revision_arm(arm: str) -> bool:
    """Whether ``arm`` runs the skill as it was at an ``--against`` REF."""
    return arm == PREVIOUS or arm.startswith(f"{PREVIOUS}-")


def against_refs(against: str | None, also_against: Sequence[str] = ()) -> tuple[str, ...]:
    """Every REF of ``--against``, in the order given (``against`` first)."""
    return () if against is None else (against, *also_against)


def revisions_of(scenario: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The arms and REFs of a results file's scenario run against several revisions (its
    ``revisions``); empty for one REF or none (read from ``against``)."""
    revisions = scenario.get("revisions")
    if not isinstance(revisions, list):
        return ()
    return tuple(
        (str(r.get("arm")), str(r.get("ref"))) for r in revisions if isinstance(r, Mapping)
    )


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


def _digest(skill: Skill) -> str:
    """What a skill's folder holds, as one digest: every file's path and bytes."""
    hasher = hashlib.sha256()
    folder = skill.skill_file.parent
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        hasher.update(path.relative_to(folder).as_posix().encode() + b"\0")
        hasher.update(path.read_bytes() + b"\0")
    return hasher.hexdigest()


def check_distinct(revisions: Mapping[str, Mapping[Path, Skill]]) -> None:
    """Refuses two REFs of ``--against`` that give the same skills: the same REF twice, or two
    that resolve to the same files (``HEAD~1`` and its commit id, a tag on it).

    Raises:
        InputError: naming both REFs.
    """
    seen: dict[tuple[str, ...], str] = {}
    for ref, skills in revisions.items():
        key = tuple(_digest(skills[path]) for path in sorted(skills))
        if key in seen:
            raise InputError(
                f"--against {seen[key]} and --against {ref} give the same skill files: the two "
                "arms would run the same revision twice",
                location=f"--against {ref}",
                fix=f"give each revision once (drop --against {ref}, or pick another revision)",
            )
        seen[key] = ref


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


@contextlib.contextmanager
def previous_revisions(
    refs: Sequence[str], skills: Iterable[Skill]
) -> Iterator[dict[str, dict[Path, Skill]]]:
    """While inside: for each REF (by its arm, :func:`revision_arm`), each skill as it was
    there, read into scratch folders removed afterwards; nothing without a REF.

    Raises:
        InputError: as :func:`previous_skill`; two REFs giving the same skills
            (:func:`check_distinct`).
    """
    if not refs:
        yield {}
        return
    skills = list(skills)
    with tempfile.TemporaryDirectory(prefix="skilltest-against-") as scratch:
        by_ref: dict[str, dict[Path, Skill]] = {}
        for index, ref in enumerate(refs):
            if ref in by_ref:
                raise InputError(
                    f"--against {ref} is given twice",
                    location=f"--against {ref}",
                    fix="give each revision once",
                )
            folder = Path(scratch) / str(index)
            folder.mkdir()
            by_ref[ref] = previous_skills(skills, ref, folder)
        check_distinct(by_ref)
        yield {revision_arm(index): by_ref[ref] for index, ref in enumerate(refs)}
