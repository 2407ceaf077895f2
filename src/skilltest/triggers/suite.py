"""Trigger suites: YAML validated once by ``triggers.schema.json``, then typed.

A trigger suite names one skill and lists user messages (*queries*), each with whether the skill
should fire for it. Each query runs K times (or, by default, adaptively until its verdict is
decided) through the real ``claude`` CLI with the skill (and any distractor skills) installed;
nothing else is scored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from skilltest.errors import SuiteError
from skilltest.formats.detect import Format, read_suite_document
from skilltest.replay.rules import Rules
from skilltest.scenarios.suite import DEFAULT_ALLOWED_TOOLS
from skilltest.skills import Skill, find_skill, skill_name_from_file
from skilltest.suite.ids import SuiteIds
from skilltest.suite.loader import model_script_path

DEFAULT_THRESHOLD = 0.5
"""The share of runs that decides a query (see :mod:`skilltest.triggers.verdict`)."""
DEFAULT_MAX_TOOL_CALLS = 3
"""Other tool calls a run may make before the skill."""
DEFAULT_TIMEOUT_MS = 120_000
"""Wall-time limit of one run."""
MAX_TURNS = 8
"""``--max-turns`` of a trigger run: more than the tool-call budget ever lets it use."""


@dataclass(frozen=True)
class TriggerQuery:
    """One user message and whether the skill should fire for it."""

    id: str
    """Unique within the suite."""
    query: str
    """The user's message, sent as the prompt."""
    should_trigger: bool
    """Whether the skill should be invoked for it."""
    location: str
    """``file#/queries/N`` for messages."""


@dataclass(frozen=True)
class TriggerSuite:
    """A trigger suite file, loaded."""

    path: Path
    """The suite file."""
    skill: Skill
    """The skill under test."""
    queries: tuple[TriggerQuery, ...]
    """In file order."""
    repetitions: int | None = None
    """Runs per query under each description, as the suite (or the ``repetitions`` the loader
    was given) fixes them; ``None``: adaptive (``-k auto``), unless ``-k`` fixes them."""
    threshold: float = DEFAULT_THRESHOLD
    """The share of scored runs that decides a query."""
    distractors: tuple[Skill, ...] = ()
    """Other skills installed beside the skill under test."""
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    """Other tool calls a run may make before the skill; the next one stops it (``budget``)."""
    timeout_s: float = DEFAULT_TIMEOUT_MS / 1000
    """Wall-time limit of one run."""
    allowed_tools: tuple[str, ...] = DEFAULT_ALLOWED_TOOLS
    """``--allowedTools`` rules of every run."""
    model: str | None = None
    """``--model``; ``None`` leaves the CLI's default."""
    model_script: Path | None = None
    """The emulator's model script, resolved against the suite's folder."""
    description: str | None = None
    """Another description tested instead of the skill's own (``description:``); ``None``
    keeps SKILL.md's."""
    name: str | None = None
    """A title for reports."""
    replay: Rules = field(default_factory=Rules)
    """The suite's own record-and-replay rules (``replay:``), on top of the built-in ones."""
    source_format: Format | None = None
    """The foreign format the file was read from (skill-creator trigger eval set);
    ``None`` for a skilltest trigger suite."""


def load_trigger_suite(
    path: Path,
    *,
    skills_dir: Path | None = None,
    repetitions: int | None = None,
    model: str | None = None,
    threshold: float | None = None,
) -> TriggerSuite:
    """Loads, validates and types one trigger suite, or a foreign trigger eval set
    (:mod:`skilltest.formats`) read as one.

    Args:
        path: The suite file.
        skills_dir: ``--skills-dir``: the folder holding ``<skill>/SKILL.md``.
        repetitions: Runs per query (``-k``, ``--runs-per-query``), winning over the suite's
            (``None``: the suite's, else adaptive).
        model: ``--model``, winning over the suite's.
        threshold: ``--trigger-threshold``: the share of runs that decides a query, winning
            over the suite's.

    Raises:
        SuiteError: unreadable file, YAML error, schema violation, duplicate ids, a distractor
            named like the skill under test or named twice.
        SkillNotFoundError: a skill's SKILL.md cannot be found.
    """
    data, source = read_suite_document(path, "triggers")
    skill_file = data.get("skill_file")
    if not data.get("skill") and not skill_file:
        raise SuiteError(
            "the suite names no skill",
            location=f"{path}#",
            fix="add skill: <name> (skills/<name>/SKILL.md) or skill_file: <path to its SKILL.md>",
        )
    # As in the other layers: `skill_file:` alone names the skill by its folder.
    name = str(data.get("skill") or skill_name_from_file(str(skill_file), path) or "")
    skill = find_skill(
        name,
        suite_path=path,
        skill_file=skill_file,
        skills_dir=skills_dir,
        location=f"{path}#/skill_file" if skill_file else f"{path}#/skill",
    )
    distractors: list[Skill] = []
    seen_distractors: dict[str, int] = {}
    for index, entry in enumerate(data.get("distractors") or ()):
        where = f"{path}#/distractors/{index}"
        # A name has no /: an entry with one is the path of the distractor's SKILL.md.
        other_file = entry if "/" in entry else None
        other = (skill_name_from_file(entry, path) or entry) if other_file else entry
        if other == name:
            # Two skills of one name in .claude/skills/ are one folder: the distractor would
            # replace (shadow) the skill under test, and every result would be about it instead.
            raise SuiteError(
                f"distractor {other!r} has the name of the skill under test",
                location=where,
                fix="a distractor is another skill; remove it or name a different skill",
            )
        if other in seen_distractors:
            raise SuiteError(
                f"distractor {other!r} is named twice (first at /distractors/"
                f"{seen_distractors[other]})",
                location=where,
                fix="name each distractor once",
            )
        seen_distractors[other] = index
        distractors.append(
            find_skill(
                other,
                suite_path=path,
                skill_file=other_file,
                skills_dir=skills_dir,
                location=where,
            )
        )
    queries = []
    ids = SuiteIds(noun="query", items="queries")
    for index, raw in enumerate(data["queries"]):
        where = f"{path}#/queries/{index}"
        ids.add(raw["id"], index, where)
        queries.append(
            TriggerQuery(
                id=raw["id"],
                query=raw["query"],
                should_trigger=bool(raw["should_trigger"]),
                location=where,
            )
        )
    allowed = data.get("allowed_tools")
    return TriggerSuite(
        path=path,
        skill=skill,
        queries=tuple(queries),
        repetitions=repetitions or data.get("repetitions"),
        threshold=threshold
        if threshold is not None
        else float(data.get("threshold", DEFAULT_THRESHOLD)),
        distractors=tuple(distractors),
        max_tool_calls=int(data.get("max_tool_calls", DEFAULT_MAX_TOOL_CALLS)),
        timeout_s=int(data.get("timeout_ms", DEFAULT_TIMEOUT_MS)) / 1000,
        allowed_tools=tuple(allowed) if allowed is not None else DEFAULT_ALLOWED_TOOLS,
        model=model or data.get("model"),
        model_script=model_script_path(data, path),
        description=data.get("description"),
        name=data.get("name"),
        replay=Rules.from_suite(data.get("replay"), f"{path}#/replay"),
        source_format=source,
    )
