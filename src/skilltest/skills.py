"""Finding a skill on disk: its folder, its SKILL.md, its frontmatter."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skilltest.errors import InputError, SkillNotFoundError
from skilltest.files import decode, read_bytes
from skilltest.limits import MAX_YAML_BYTES
from skilltest.names import check_name, name_problem
from skilltest.suite.loader import parse_yaml
from skilltest.suite.repository import Repository, git_work_tree, repository_of


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


def skill_name_from_file(skill_file: str) -> str | None:
    """The skill a ``skill_file:`` names: the folder holding its SKILL.md, as Claude Code
    names an installed skill; ``None`` when that folder's name could not be one (``..``)."""
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
    the suite's repository root (:func:`search_folders`).

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
    raise SkillNotFoundError(
        f"skill {name!r} not found; looked at:\n    {shown}{limit}",
        location=location or str(suite_path),
        fix="create skills/<skill>/SKILL.md, pass --skills-dir DIR, or set skill_file:",
    )


def _confine(skill_file: Path, repository: Repository, written: str | None, location: str) -> None:
    """Refuses a skill the suite names whose SKILL.md, or a link in whose folder, leads out of
    the suite's repository."""
    home = repository.root
    shown = written or (
        str(skill_file.relative_to(home)) if skill_file.is_relative_to(home) else str(skill_file)
    )
    resolved = repository.inside(skill_file, written=shown, location=location)
    repository.check_links(resolved.parent, location=location)


def load_skill(skill_file: Path, name: str | None = None) -> Skill:
    """Reads one SKILL.md; the skill is named ``name``, else after its folder (as Claude Code
    names a skill).

    Raises:
        InputError: the file cannot be read or is not UTF-8, or the name cannot be a folder name.
    """
    text = _read_skill(skill_file)
    description = _frontmatter(text).get("description")
    name = check_name(
        name or skill_file.resolve().parent.name, what="the skill name", location=str(skill_file)
    )
    return Skill(
        name=name,
        skill_file=skill_file,
        text=text,
        description=str(description) if description is not None else None,
    )


def _read_skill(path: Path) -> str:
    raw = read_bytes(
        path, limit=MAX_YAML_BYTES, what="the skill", large_fix="check that this is SKILL.md"
    )
    return decode(raw, path, fix="save SKILL.md as UTF-8 (Claude Code reads it as UTF-8 too)")
