"""What ``skilltest init`` scaffolds: a skill folder, or every skill of a plugin, in its project.

The project is the git repository the skill is in (else the current folder): the suites go to
its ``tests/`` folders, where ``skilltest pressure``, ``scenarios`` and ``triggers`` look by
default. The skill's neighbours (the other skills of its ``skills/`` folder, or of its plugin)
become the trigger suite's distractors.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skilltest.errors import InputError
from skilltest.lint.targets import find_targets
from skilltest.plugins import Plugin, is_plugin, load_plugin
from skilltest.skills import Skill, is_root_skill, load_skill
from skilltest.suite.repository import git_work_tree

MAX_DISTRACTORS = 10
"""At most this many neighbours are installed beside the skill in each trigger run."""


@dataclass(frozen=True)
class SkillToTest:
    """One skill the scaffold writes suites for."""

    skill: Skill
    """The skill (its SKILL.md and description)."""
    neighbours: tuple[Skill, ...]
    """Other skills of the project that a user's request could also fit: the trigger suite's
    distractors."""


@dataclass(frozen=True)
class Target:
    """Everything the scaffold is about."""

    root: Path
    """The project: the skill's git repository, else the current folder."""
    skills: tuple[SkillToTest, ...]
    """The skill, or every skill of the plugin, in name order."""
    plugin: Plugin | None = None
    """The plugin under test, when a plugin folder was named."""


def _usage_fix() -> str:
    return "name a skill folder (skilltest init skills/<name>) or a plugin folder"


def _skill(folder: Path) -> Skill:
    skill = load_skill(folder / "SKILL.md")
    if not (skill.description or "").strip():
        raise InputError(
            "the skill has no description in its front matter: without one it can never "
            "fire, and the trigger suite has nothing to test",
            location=str(folder / "SKILL.md"),
            fix="add description: (what it does and when to use it); `skilltest lint` checks it",
        )
    return skill


def _neighbours(folder: Path) -> tuple[Skill, ...]:
    """The other skills beside ``folder`` (its siblings that hold a SKILL.md); none for a root
    skill, whose folder's siblings are other repositories."""
    if is_root_skill(folder):
        return ()
    found = []
    for sibling in sorted(folder.parent.iterdir()):
        if sibling.resolve() == folder.resolve() or not (sibling / "SKILL.md").is_file():
            continue
        try:
            skill = load_skill(sibling / "SKILL.md")
        except InputError:
            continue  # a broken neighbour is lint's business, not a distractor
        if (skill.description or "").strip():
            found.append(skill)
    return tuple(found[:MAX_DISTRACTORS])


def _only_one(root: Path) -> Path:
    """The one skill or plugin below ``root``, when nothing was named."""
    targets = find_targets([root], root)
    found = [*targets.plugins, *targets.skills]
    if len(found) == 1:
        return found[0]
    listed = ", ".join(str(p.relative_to(root)) for p in found[:8]) or "none"
    raise InputError(
        f"{'no' if not found else len(found)} skills or plugins below {root} ({listed}): "
        "which one?",
        location=str(root),
        fix=_usage_fix(),
    )


def read_target(path: Path | None, cwd: Path) -> Target:
    """Reads the skill or plugin at ``path`` (the only one below ``cwd`` when ``None``).

    Raises:
        InputError: no such folder, a folder that is neither a skill nor a plugin, a plugin
            without skills, a skill without a description.
    """
    folder = _only_one(cwd) if path is None else path
    if folder.is_file() and folder.name == "SKILL.md":
        folder = folder.parent
    if not folder.is_dir():
        raise InputError("no such skill or plugin folder", location=str(folder), fix=_usage_fix())
    folder = folder.absolute()
    root = git_work_tree(folder.resolve()) or cwd.absolute()
    if (folder / "SKILL.md").is_file():
        skill = _skill(folder)
        return Target(root, (SkillToTest(skill, _neighbours(folder)),))
    if is_plugin(folder):
        plugin = load_plugin(folder)
        if not plugin.skills:
            raise InputError(
                f"the plugin {plugin.name} has no skill to test",
                location=str(folder),
                fix="add skills/<name>/SKILL.md to the plugin",
            )
        skills = sorted((_skill(s.directory) for s in plugin.skills), key=lambda s: s.name)
        units = tuple(
            SkillToTest(skill, tuple(s for s in skills if s.name != skill.name)[:MAX_DISTRACTORS])
            for skill in skills
        )
        return Target(root, units, plugin)
    raise InputError(
        "not a skill folder (no SKILL.md) and not a plugin (no .claude-plugin/plugin.json)",
        location=str(folder),
        fix=_usage_fix(),
    )
