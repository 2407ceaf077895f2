"""Finding a skill on disk: its folder, its SKILL.md, its frontmatter; and what its folder holds,
file by file, as a run copies it (:func:`tree_files`).

A repository with SKILL.md at its root is one skill (a *root skill*, :func:`is_root_skill`):
it is named by its front matter's ``name:`` (its folder, the repository's, says nothing of it),
and a run's copy of it leaves out the repository's own machinery (:func:`left_out`).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from skilltest.errors import InputError, SkillNotFoundError
from skilltest.files import decode, read_bytes
from skilltest.limits import MAX_YAML_BYTES
from skilltest.names import check_name, name_problem, nearest_name
from skilltest.suite.loader import parse_yaml
from skilltest.suite.repository import (
    NOT_COPIED,
    Repository,
    git_work_tree,
    holds_git,
    repository_of,
)

ROOT_SKILL_NOT_COPIED = (
    "tests",
    "out",
    "output",
    "outputs",
    ".venv",
    "venv",
    "node_modules",
    ".tox",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".github",
    "skilltest.mk",
    ".gitignore",
)
"""What a run's copy of a root skill also leaves out, at the repository's top: its tests (the
suites and their raw output), results (``out/``, as the docs write them), environments, caches,
CI and what ``skilltest init`` wrote; and anything git ignores."""

GIT_TIMEOUT_S = 10.0
"""How long asking git what a root skill's repository ignores may take."""


def is_root_skill(folder: Path) -> bool:
    """Whether the skill folder ``folder`` is a git repository's root: SKILL.md at the top of a
    single-skill repository."""
    return holds_git(folder)


def _git_ignored(folder: Path) -> set[str]:
    """The paths below ``folder`` git ignores (a folder as ``a/b``, all of it), relative to it;
    none when git cannot say."""
    import subprocess  # copying a skill for a run, not reading a suite

    try:
        done = subprocess.run(
            [
                "git",
                "-C",
                str(folder),
                "ls-files",
                "-z",
                "--others",
                "--ignored",
                "--exclude-standard",
                "--directory",
            ],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return set()
    if done.returncode != 0:
        return set()
    return {
        entry.rstrip("/")
        for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0")
        if entry
    }


def left_out(folder: Path) -> Callable[[str, list[str]], set[str]]:
    """What a run's copy of the skill folder ``folder`` leaves out, as ``shutil.copytree``'s
    ``ignore``: :data:`~skilltest.suite.repository.NOT_COPIED` everywhere and, for a root skill,
    :data:`ROOT_SKILL_NOT_COPIED` at its top and whatever git ignores."""
    top = os.path.normpath(folder.absolute())
    root_skill = is_root_skill(folder)
    ignored = _git_ignored(folder) if root_skill else set()

    def ignore(directory: str, names: list[str]) -> set[str]:
        relative = os.path.relpath(os.path.normpath(os.path.abspath(directory)), top)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        left = {name for name in names if _not_copied(name)}
        if root_skill:
            if not prefix:
                left |= {name for name in names if name in ROOT_SKILL_NOT_COPIED}
            left |= {name for name in names if prefix + name in ignored}
        return left

    return ignore


def tree_files(folder: Path) -> dict[str, str]:
    """Every file a run copies from ``folder`` (all but what :func:`left_out` says), by its path
    inside the folder (``/`` between parts), with the ``sha256:<hex>`` of its bytes; sorted by
    path. A file that cannot be read is listed with ``unreadable``; a missing folder gives
    ``{}``."""
    files: dict[str, str] = {}
    ignore = left_out(folder)
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(set(dirs) - ignore(root, dirs))
        skipped = ignore(root, names)
        for name in names:
            if name in skipped:
                continue
            path = Path(root) / name
            relative = path.relative_to(folder).as_posix()
            try:
                with path.open("rb") as handle:
                    files[relative] = "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()
            except OSError:
                files[relative] = "unreadable"
    return dict(sorted(files.items()))


def tree_checksum(files: Mapping[str, str]) -> str:
    """``sha256:<hex>`` of a folder's files (:func:`tree_files`): each path and its checksum,
    in path order, so that a file renamed, added, removed or changed changes it."""
    lines = "".join(f"{path}\0{sha}\n" for path, sha in sorted(files.items()))
    return "sha256:" + hashlib.sha256(lines.encode("utf-8", "surrogateescape")).hexdigest()


def _not_copied(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in NOT_COPIED)


@dataclass(frozen=True)
class Skill:
    """A skill under test."""

    name: str
    """The skill's name as the suite gives it."""
    skill_file: Path
    """Its SKILL.md."""
    text: str
    """The whole SKILL.md, frontmatter included, as the with-skill arm sees it."""
    description: str | None = None
    """The frontmatter's ``description``, when there is one."""
    naming: str | None = None
    """For a root skill named after its folder (its front matter has no usable ``name:``), the
    sentence that says so."""

    @property
    def directory(self) -> Path:
        """The skill's folder, with its references and scripts."""
        return self.skill_file.parent


def _frontmatter(text: str) -> dict[str, object]:
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        return {}
    try:
        # Through the suite loader's bounds: an alias bomb in a description must not hang us.
        data = parse_yaml(text[3:end], "SKILL.md frontmatter")
    except InputError:
        return {}  # the frontmatter only lends a description to reports
    return data if isinstance(data, dict) else {}


def safe_name(text: str) -> str:
    """``text`` made a skill name: lowercase letters, digits and single hyphens, at most 64
    characters (``My_Skill v2`` gives ``my-skill-v2``); ``skill`` when nothing is left."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-") or "skill"


def root_skill_name(skill_file: Path, text: str) -> tuple[str, str | None]:
    """The name of the root skill whose SKILL.md is ``skill_file``: its front matter's
    ``name:``; without a usable one, its folder's name made safe (:func:`safe_name`), with the
    sentence that says so."""
    written = _frontmatter(text).get("name")
    if isinstance(written, str) and name_problem(written) is None:
        return written, None
    folder = skill_file.absolute().parent.resolve().name
    name = safe_name(folder)
    why = "has no name:" if written is None else f"has a name that cannot be one ({written!r})"
    return name, (
        f"{skill_file}: the skill at the repository's root {why} in its front matter; "
        f"named {name!r} after its folder"
    )


def skill_name_from_file(skill_file: str, suite_path: Path | None = None) -> str | None:
    """The skill a ``skill_file:`` names: the folder holding its SKILL.md, as Claude Code
    names an installed skill; ``None`` when that folder's name could not be one (``..``).

    With ``suite_path``, a ``skill_file:`` that finds (as :func:`find_skill` looks, inside the
    suite's repository) the SKILL.md at a repository's root names that root skill by its front
    matter (:func:`root_skill_name`)."""
    if suite_path is not None:
        home = repository_of(suite_path).root
        for candidate in _candidates(Path(skill_file), suite_path):
            if candidate.is_file() and candidate.resolve().is_relative_to(home):
                if is_root_skill(candidate.parent):
                    try:
                        return root_skill_name(candidate, _read_skill(candidate))[0]
                    except InputError:
                        return None  # find_skill reads it again and says why
                break
    name = Path(skill_file).parent.name
    return name if name_problem(name) is None else None


def repository_root(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` that holds ``.git`` (a folder, or the file of a
    worktree or submodule), or ``None`` when ``path`` is in no repository."""
    return git_work_tree(path)


def search_folders(suite_path: Path) -> list[Path]:
    """Where a suite's skills are looked up: the suite's folder, then each folder above it up to
    the suite's repository (:func:`skilltest.suite.repository.repository_of`).

    The current directory is never searched unless it is the suite's repository, and nothing
    above that: a suite copied into another repository, or run from inside one, must not pick
    up that repository's different skill of the same name.
    """
    folder = suite_path.resolve().parent
    root = repository_of(suite_path).root
    folders = [folder]
    for parent in folder.parents:
        if not parent.is_relative_to(root):
            break
        folders.append(parent)
    return folders


def _candidates(relative: Path, suite_path: Path) -> list[Path]:
    """``relative`` against each folder of :func:`search_folders`."""
    if relative.is_absolute():
        return [relative]
    return [folder / relative for folder in search_folders(suite_path)]


def find_skill(
    name: str,
    *,
    suite_path: Path,
    skill_file: str | None = None,
    skills_dir: Path | None = None,
    location: str | None = None,
) -> Skill:
    """Locates a skill for a suite.

    ``skill_file`` (as public suites write it, relative to the suite or to the repository root)
    wins; otherwise ``<skills_dir>/<name>/SKILL.md``, where the skills folder is ``--skills-dir``
    or the nearest ``skills/`` (or ``.claude/skills/``) beside the suite or above it, never above
    the suite's repository root (:func:`search_folders`); last, the SKILL.md at that root when
    its front matter names it ``name`` (:func:`root_skill_name`).

    Raises:
        InputError: ``name`` cannot be a folder name (it becomes the skill's folder in a run).
        SkillNotFoundError: naming every place that was looked at.
    """
    check_name(name, what="the skill name", location=location or str(suite_path))
    tried: list[Path] = []
    written = skill_file
    if skill_file:
        tried = _candidates(Path(skill_file), suite_path)
    elif skills_dir is not None:
        tried = [skills_dir / name / "SKILL.md"]
    else:
        tried = _candidates(Path("skills") / name / "SKILL.md", suite_path)
        tried += _candidates(Path(".claude") / "skills" / name / "SKILL.md", suite_path)
        tried += _root_skill(name, suite_path)
    # A skill the suite names (not one of --skills-dir, the person's own choice) is read, copied
    # into every run and sent to the model: it must lie in the suite's repository.
    repository = None if skills_dir is not None and not skill_file else repository_of(suite_path)
    for candidate in tried:
        if candidate.is_file():
            if repository is not None:
                _confine(candidate, repository, written, location or str(suite_path))
            text = _read_skill(candidate)
            description = _frontmatter(text).get("description")
            return Skill(
                name=name,
                skill_file=candidate,
                text=text,
                description=str(description) if description is not None else None,
            )
    shown = "\n    ".join(str(p) for p in tried[:6])
    root = repository_root(suite_path.resolve().parent)
    limit = f"\n  (not above the suite's repository root, {root})" if root else ""
    fix = "create skills/<skill>/SKILL.md, pass --skills-dir DIR, or set skill_file:"
    guess = ""
    if skill_file:
        folder = _nearest_folder(Path(skill_file).parent.name, tried)
        if folder is not None:
            written_path = Path(skill_file)
            suggested = (written_path.parent.parent / folder / written_path.name).as_posix()
            guess, fix = f" (did you mean {suggested!r}?)", f"write skill_file: {suggested}"
    else:
        folder = _nearest_folder(name, tried)
        if folder is not None:
            guess = f" (did you mean {folder!r}?)"
            fix = f"name the skill {folder} (its folder), or {fix}"
    raise SkillNotFoundError(
        f"skill {name!r} not found{guess}; looked at:\n    {shown}{limit}",
        location=location or str(suite_path),
        fix=fix,
    )


def _nearest_folder(name: str, tried: list[Path]) -> str | None:
    """The skill folder beside the ones looked at (``<skills>/<name>/SKILL.md``) whose name is
    closest to ``name``, when it is close enough to be a misspelling of it."""
    folders: set[str] = set()
    for candidate in tried:
        skills = candidate.parent.parent
        # Only <skills>/<name>/SKILL.md: a root SKILL.md's grandparent is outside the repository.
        if candidate.name == "SKILL.md" and candidate.parent.name == name and skills.is_dir():
            folders.update(
                entry.name for entry in skills.iterdir() if (entry / "SKILL.md").is_file()
            )
    return nearest_name(name, folders)


def _root_skill(name: str, suite_path: Path) -> list[Path]:
    """The SKILL.md at the root of the suite's git repository, when it is the skill ``name``."""
    root = git_work_tree(suite_path.resolve().parent)
    skill_file = root / "SKILL.md" if root is not None else None
    if skill_file is None or not skill_file.is_file():
        return []
    try:
        found, _ = root_skill_name(skill_file, _read_skill(skill_file))
    except InputError:
        return []
    return [skill_file] if found == name else []


def _confine(skill_file: Path, repository: Repository, written: str | None, location: str) -> None:
    """Refuses a skill the suite names whose SKILL.md, or a link in whose folder, leads out of
    the suite's repository."""
    home = repository.root
    shown = written or (
        str(skill_file.relative_to(home)) if skill_file.is_relative_to(home) else str(skill_file)
    )
    resolved = repository.inside(skill_file, written=shown, location=location)
    repository.check_links(resolved.parent, location=location, left_out=left_out(resolved.parent))


def load_skill(skill_file: Path, name: str | None = None) -> Skill:
    """Reads one SKILL.md; the skill is named ``name``, else after its folder (as Claude Code
    names a skill), or, at a repository's root, by its front matter (:func:`root_skill_name`).

    Raises:
        InputError: the file cannot be read or is not UTF-8, or the name cannot be a folder name.
    """
    text = _read_skill(skill_file)
    description = _frontmatter(text).get("description")
    naming = None
    if name is None and is_root_skill(skill_file.absolute().parent):
        name, naming = root_skill_name(skill_file, text)
    name = check_name(
        name or skill_file.resolve().parent.name, what="the skill name", location=str(skill_file)
    )
    return Skill(
        name=name,
        skill_file=skill_file,
        text=text,
        description=str(description) if description is not None else None,
        naming=naming,
    )


def _read_skill(path: Path) -> str:
    raw = read_bytes(
        path, limit=MAX_YAML_BYTES, what="the skill", large_fix="check that this is SKILL.md"
    )
    return decode(raw, path, fix="save SKILL.md as UTF-8 (Claude Code reads it as UTF-8 too)")
