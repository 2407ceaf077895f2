"""Scenario suites: YAML validated once by ``scenarios.schema.json``, then typed.

A suite lists scenarios. Each scenario is a prompt (and optional follow-up turns) given to the
real ``claude`` CLI with the skill installed (the with-skill arm) and without it (the
without-skill arm), K times each, and a rubric over the tool calls each run made.

The format is compatible with the public harnesses this layer comes from: ``skill:`` may be
missing (then each scenario's ``skill:``, ``--skill``, or the scenario's ``expected_skills``, all
of which the with-skill arm installs), ``name``, ``comparison`` (``true`` marks the core subset),
``canary`` and ``skill_file`` are accepted, and an empty list in ``expected`` means "not
defined". ``Skill`` entries of ``expected`` (``Skill``, ``Skill(name)``) join the expected skills
instead of the score (see :mod:`skilltest.scenarios.rubric`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from skilltest.decision import MIN_DELTA
from skilltest.errors import InputError, SuiteError
from skilltest.formats.detect import Format, ReadOptions, read_suite_document
from skilltest.names import canonical_tool_name
from skilltest.patterns import DEFAULT_TIMEOUT_S, Pattern, compile_patterns, parse_flags
from skilltest.plugins.servers import McpServer, mcp_servers_from
from skilltest.redact import SHORTEST_DECLARED
from skilltest.replay.rules import Rules
from skilltest.scenarios.rubric import (
    DEFAULT_PATTERN_SCOPE,
    Expected,
    Weights,
    skill_requirement,
)
from skilltest.scenarios.scoring import Scoring, SuiteScoring, suite_scoring
from skilltest.skills import Skill, find_skill, skill_name_from_file
from skilltest.suite.ids import SuiteIds
from skilltest.suite.loader import model_script_path, validate
from skilltest.suite.repository import Repository, repository_of
from skilltest.world.expect import WorldExpectations, expectations_from
from skilltest.world.model import World, load_world

if TYPE_CHECKING:
    from skilltest.checks.model import Check
    from skilltest.evalcases.mocks import MockServer
    from skilltest.plugins.plugin import Plugin

DEFAULT_MAX_TURNS = 8
DEFAULT_TIMEOUT_MS = 180_000
DEFAULT_MIN_SCORE = 0.6

_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._-]")

PLUGIN_MANIFEST = Path(".claude-plugin") / "plugin.json"
"""What makes a folder a plugin's root."""
"""The with-skill mean a scenario needs to pass."""
DEFAULT_MIN_DELTA = MIN_DELTA
"""The lower edge of the neutral band: a delta credibly below it is a regression."""
DECIDE_BY: tuple[str, ...] = ("pass", "mean")
"""What a verdict compares: the arms' pass rates (the default) or their mean scores."""
DEFAULT_ALLOWED_TOOLS: tuple[str, ...] = ("Bash", "Read", "Glob", "Grep", "Skill", "Agent")
"""Tools both arms may use without a permission prompt when a scenario names none. ``-p``
refuses anything else that needs permission (``Write``, ``Edit``...)."""


@dataclass(frozen=True)
class Overrides:
    """Options given on the command line; they win over the suite file."""

    repetitions: int | None = None
    """``-k``: runs per arm."""
    min_score: float | None = None
    """``--min-score``."""
    min_delta: float | None = None
    """``--min-delta``."""
    model: str | None = None
    """``--model``."""
    skill_only: bool = False
    """``--skill-only``: run only the with-skill arm."""
    plugin_dir: Path | None = None
    """``--plugin-dir``: the plugin under test, instead of the suite's ``plugin:``."""
    plugin_name: str | None = None
    """``--plugin``: the plugin of the marketplace ``plugin_dir`` is the folder of."""
    allow_code_graders: bool = False
    """``--allow-code-graders``: run a waza eval's ``code`` graders (Python assertions)."""


@dataclass(frozen=True)
class RunConfig:
    """How the CLI runs one conversation; the same in both arms."""

    max_turns: int = DEFAULT_MAX_TURNS
    """``--max-turns`` for each user message."""
    timeout_s: float = DEFAULT_TIMEOUT_MS / 1000
    """Wall-time limit for the whole conversation."""
    allowed_tools: tuple[str, ...] = DEFAULT_ALLOWED_TOOLS
    """``--allowedTools`` rules."""
    disallowed_tools: tuple[str, ...] = ()
    """``--disallowedTools`` rules (the tools disappear from the agent's tool list)."""
    model: str | None = None
    """``--model``; ``None`` leaves the CLI's default."""
    mcp_servers: tuple[McpServer, ...] = ()
    """``config.mcp_servers``: stdio MCP servers both arms get (``--mcp-config``)."""
    append_system_prompt: str | None = None
    """``--append-system-prompt``: text added to Claude Code's system prompt."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables the agent's process gets besides the isolated environment."""
    add_dirs: tuple[Path, ...] = ()
    """``--add-dir`` folders the agent may also read."""


@dataclass(frozen=True)
class Scenario:
    """One task for the agent and the rubric its tool calls are scored against."""

    id: str
    """Unique within the suite."""
    name: str | None
    """A title for reports."""
    skill: Skill
    """The skill the with-skill arm installs."""
    prompt: str
    """The first user message."""
    turns: tuple[str, ...]
    """Follow-up user messages, sent after each answer in the same conversation."""
    expected: Expected
    """The rubric: required and recommended tools, patterns, ordering, weights."""
    expected_skills: tuple[str, ...]
    """Skills the with-skill arm must invoke: ``expected_skills`` and the skills the rubric's
    ``Skill`` requirements name (an indicator, not scored); empty when neither is defined."""
    config: RunConfig
    """How the CLI runs."""
    repetitions: int | None
    """Runs per arm (K); ``None`` when the suite does not fix K (adaptive repetitions)."""
    comparison: bool
    """Whether the without-skill arm runs too."""
    min_score: float
    """The with-skill mean needed to pass."""
    min_delta: float
    """The lower edge of the neutral band: a delta credibly below it is a regression."""
    workspace: Path | None
    """A fixture folder copied into the working directory in both arms."""
    location: str
    """``file#/scenarios/N`` for messages."""
    skip: str | None = None
    """Why the scenario is skipped, when it is."""
    skills: tuple[Skill, ...] = ()
    """Every skill the with-skill arm installs, ``skill`` first (``(skill,)`` when left empty):
    a suite that names no skill installs all of its scenario's ``expected_skills``."""
    workspace_files: tuple[tuple[Path, str], ...] = ()
    """Files or folders copied into the working directory in both arms after ``workspace``:
    ``(source, relative path in the working directory)``."""
    canary: bool = False
    """``canary: true``: a smoke scenario, run before the others with the skill only; when it
    fails, the comparison results are not meaningful."""
    core: bool = False
    """``comparison: true``: in the core subset, the scenarios ``--comparison-only`` runs."""
    require_skills_fired: bool = True
    """Whether passing needs the expected skills to fire (``require_skills_fired``); the firing
    rate is reported either way."""
    decide_by: str = "pass"
    """``decide_by``: ``pass`` compares the arms' pass rates, ``mean`` their mean scores."""
    plugin: Plugin | None = None
    """The plugin under test: the with-skill arm loads all of it (``--plugin-dir``); ``skills``
    are the plugin's skills the scenario is about."""
    world: World | None = None
    """The controlled world the runs act on (the suite's ``world:``), or ``None``."""
    world_profile: str | None = None
    """The world's fault profile for this scenario (``world: {profile: NAME}``)."""
    world_expected: WorldExpectations = field(default_factory=WorldExpectations)
    """What the world must have seen: writes, forbidden writes, confirmation, claims..."""
    plugin_mcp: Literal["both", "with"] = "both"
    """Which arms get the plugin's MCP servers: ``both`` (default; the comparison measures what
    the skills add, not what the tools add) or ``with`` (only the with-skill arm)."""
    critical: bool = False
    """``critical: true`` (on the scenario, or the suite's default): ``skilltest gate`` blocks a
    release when its with-skill pass rate is credibly below the baseline's, or it is missing."""
    score_partial: bool = False
    """``score_partial: true``: a run cut short by its time limit (or a model gone silent) is
    scored on what it did; by default it is unscored, as an outage is."""
    mocks: tuple[MockServer, ...] = ()
    """MCP mocks of ``mocks/<server>/<tool>.md`` folders, served as MCP servers in the runs: a
    mock named after a server of the plugin stands in for it (in the arms that get the plugin's
    servers), any other is a server of its own in both arms."""
    plugin_servers: Literal["all", "mocked"] = "all"
    """``mocked``: a plugin server no mock stands in for is not started (as Claude Code's plugin
    eval does not start it)."""
    setup: Path | None = None
    """A bash script run in the working directory before the agent starts, in both arms."""
    resume: Path | None = None
    """A Claude Code session file the run resumes before the prompt (``--resume``)."""
    file_label: str | None = None
    """The name of the file the scenario comes from, when neither it nor its suite names a skill
    (a public suite that lists each scenario's ``expected_skills``): see :attr:`label`."""

    def __post_init__(self) -> None:
        if not self.skills:
            object.__setattr__(self, "skills", (self.skill,))

    @property
    def label(self) -> str:
        """What the scenario is shown and kept under, before its id (``label/id``): the skill
        it names, or the file it comes from when it names none, so that scenarios of files
        that share ids stay apart and none is put under one of the skills it expects."""
        return self.file_label or self.skill.name

    @property
    def messages(self) -> tuple[str, ...]:
        """Every user message in order."""
        return (self.prompt, *self.turns)


@dataclass(frozen=True)
class ScenarioSuite:
    """A suite file, loaded."""

    path: Path
    """The suite file."""
    name: str | None
    """Its title."""
    scenarios: tuple[Scenario, ...]
    """In file order."""
    model_script: Path | None
    """The emulator's model script, when the suite has one."""
    replay: Rules = field(default_factory=Rules)
    """The suite's own record-and-replay rules (``replay:``), on top of the built-in ones."""
    output: Path | None = None
    """Where its runs' raw output is kept by default; ``None``: ``output/`` beside the file."""
    notes: tuple[str, ...] = ()
    """What loading it noticed that is worth saying (a mocks folder with no responder)."""
    source_format: Format | None = None
    """The foreign format the file was read from (skill-creator's ``evals.json``, waza's
    ``eval.yaml``); ``None`` for a skilltest scenario suite."""
    plugin_found: Path | None = None
    """The plugin under test found from where the suite lives (no ``--plugin-dir``, no
    ``plugin:``): the run says so."""
    scoring: SuiteScoring = field(default_factory=SuiteScoring)
    """How its runs' rubric sections add up (``scoring:``, or Honeycomb's from the file's
    shape)."""

    @property
    def output_folder(self) -> Path:
        """Where its runs' raw output is kept unless ``--output-dir`` says otherwise."""
        return self.output if self.output is not None else self.path.parent / "output"

    @property
    def skills(self) -> tuple[str, ...]:
        """The skills under test, in order of first use."""
        return tuple(dict.fromkeys(s.skill.name for s in self.scenarios))


def _pick(key: str, scenario: dict[str, Any], suite: dict[str, Any], default: Any) -> Any:
    for source in (scenario, suite):
        if source.get(key) is not None:
            return source[key]
    return default


def _config(
    raw: dict[str, Any],
    suite: dict[str, Any],
    model: str | None,
    *,
    path: Path,
    where: str,
    base: Path,
    repository: Repository,
) -> RunConfig:
    merged = {**(suite.get("config") or {}), **(raw.get("config") or {})}
    servers = {
        **((suite.get("config") or {}).get("mcp_servers") or {}),
        **((raw.get("config") or {}).get("mcp_servers") or {}),
    }
    origin = (
        f"{where}/config/mcp_servers"
        if (raw.get("config") or {}).get("mcp_servers")
        else f"{path}#/config/mcp_servers"
    )
    allowed = merged.get("allowed_tools")
    return RunConfig(
        max_turns=int(merged.get("max_turns", DEFAULT_MAX_TURNS)),
        timeout_s=int(merged.get("timeout_ms", DEFAULT_TIMEOUT_MS)) / 1000,
        allowed_tools=tuple(allowed) if allowed is not None else DEFAULT_ALLOWED_TOOLS,
        disallowed_tools=tuple(merged.get("disallowed_tools") or ()),
        model=model or merged.get("model"),
        mcp_servers=tuple(
            _beside_suite(server, base, repository)
            for server in mcp_servers_from(servers or None, origin, base, error=SuiteError)
        ),
        append_system_prompt=merged.get("append_system_prompt") or None,
        env={str(key): str(value) for key, value in (merged.get("env") or {}).items()},
        add_dirs=tuple(
            _existing(
                base,
                entry,
                _add_dirs_place(raw, path, where, index),
                repository,
                folder=True,
            )
            for index, entry in enumerate(merged.get("add_dirs") or ())
        ),
    )


def _add_dirs_place(raw: dict[str, Any], path: Path, where: str, index: int) -> str:
    """Where ``config.add_dirs/N`` is written: in the scenario, or in the suite's ``config``."""
    own = (raw.get("config") or {}).get("add_dirs") is not None
    return f"{where if own else f'{path}#'}/config/add_dirs/{index}"


def _existing(
    base: Path, name: str, where: str, repository: Repository, *, folder: bool = False
) -> Path:
    """A file (or folder) the suite names, relative to it, that must exist in the suite's
    repository; a folder's links must point inside it too."""
    resolved = repository.inside(base / name, written=name, location=where)
    if not (resolved.is_dir() if folder else resolved.is_file()):
        raise SuiteError(
            f"{'folder' if folder else 'file'} {resolved} does not exist",
            location=where,
            fix=f"give a {'folder' if folder else 'file'} relative to the suite file",
        )
    if folder:
        repository.check_links(resolved, location=where)
    return resolved


def _mocks(
    raw: dict[str, Any],
    suite: dict[str, Any],
    base: Path,
    where: str,
    top: str,
    repository: Repository,
) -> tuple[tuple[MockServer, ...], tuple[str, ...]]:
    """The scenario's MCP mocks: its own ``mocks:`` folders, else the suite's, else a
    ``mocks/`` folder beside the suite file."""
    if raw.get("mocks") is not None:
        named, place = raw["mocks"], f"{where}/mocks"
    elif suite.get("mocks") is not None:
        named, place = suite["mocks"], f"{top}/mocks"
    elif (base / "mocks").is_dir():
        named, place = "mocks", str(base / "mocks")
    else:
        return (), ()
    folders = [named] if isinstance(named, str) else list(named)
    layers = [
        _existing(
            base,
            folder,
            f"{place}" + ("" if isinstance(named, str) else f"/{i}"),
            repository,
            folder=True,
        )
        for i, folder in enumerate(folders)
    ]
    from skilltest.evalcases.mocks import read_mocks

    return read_mocks(layers)


def _parse_checks(entries: Any, where: str, **options: Any) -> tuple[Check, ...]:
    """:func:`skilltest.checks.model.parse_checks`, imported for a suite that has checks."""
    if entries is None:
        return ()
    from skilltest.checks.model import parse_checks

    return parse_checks(entries, where, **options)


def _beside_suite(server: McpServer, folder: Path, repository: Repository) -> McpServer:
    """A suite's server with the files it names resolved against the suite's folder: runs
    start servers in their own sandbox, where a relative path means nothing. A relative path
    naming a file is a file of the suite, so it must lie in the suite's repository; an absolute
    one names a program of the machine (``/usr/bin/python3``)."""

    def resolved(value: str, place: str) -> str:
        candidate = folder / value
        if not value or Path(value).is_absolute() or not candidate.exists():
            return value
        return str(repository.inside(candidate, written=value, location=place))

    return replace(
        server,
        command=resolved(server.command, f"{server.origin}/command"),
        args=tuple(
            resolved(arg, f"{server.origin}/args/{index}") for index, arg in enumerate(server.args)
        ),
    )


def _world(data: dict[str, Any], path: Path, repository: Repository) -> World | None:
    """The suite's controlled world (``world:``, relative to the suite file)."""
    if not data.get("world"):
        return None
    file = repository.inside(
        path.parent / str(data["world"]), written=str(data["world"]), location=f"{path}#/world"
    )
    try:
        return load_world(file, repository)
    except InputError as exc:
        raise SuiteError(
            exc.message, location=exc.location or f"{path}#/world", fix=exc.fix
        ) from exc


def _profile(raw: dict[str, Any], world: World | None, where: str) -> str | None:
    spec = raw.get("world")
    name = spec.get("profile") if isinstance(spec, dict) else None
    if name is None:
        return None
    if world is None:
        raise SuiteError(
            "the scenario picks a world profile, but the suite names no world",
            location=f"{where}/world",
            fix="add `world: <world file>` at the top of the suite",
        )
    if name not in world.profiles():
        known = ", ".join(sorted(world.profiles())) or "none"
        raise SuiteError(
            f"the world has no profile {name!r} (its profiles: {known})",
            location=f"{where}/world/profile",
            fix=f"use a profile of {world.path}, or add it there",
        )
    return str(name)


def _world_expected(
    raw: dict[str, Any], world: World | None, where: str, *, flags: int, timeout_s: float
) -> WorldExpectations:
    expected = expectations_from(
        raw.get("expected"),
        f"{where}/expected",
        flags=flags,
        timeout_s=timeout_s,
        turns=len(raw.get("turns") or ()),
        has_profile=isinstance(raw.get("world"), dict) and bool(raw["world"].get("profile")),
    )
    if expected.defined and world is None:
        raise SuiteError(
            "the scenario expects writes or claims of a world, but the suite names no world",
            location=f"{where}/expected",
            fix="add `world: <world file>` at the top of the suite (see docs/world.md)",
        )
    return expected


def _plugin(
    data: dict[str, Any],
    path: Path,
    overrides: Overrides,
    cache: dict[Path, Plugin],
    repository: Repository,
    *,
    around: bool = False,
) -> Plugin | None:
    """The plugin under test: ``--plugin-dir``, else the suite's ``plugin:`` (relative to it,
    in the suite's repository), else, for a suite that names no skill, the plugin it lives in
    (:func:`plugin_around`)."""
    name = None
    if overrides.plugin_dir is not None:
        folder, location = overrides.plugin_dir.resolve(), "--plugin-dir"
        name = overrides.plugin_name
    elif data.get("plugin"):
        location = f"{path}#/plugin"
        written = str(data["plugin"])
        folder = repository.inside(path.parent / written, written=written, location=location)
        repository.check_links(folder, location=location)
    elif around and not _names_a_skill(data) and (found := plugin_around(path, repository)):
        folder, location = found, f"{path} (the plugin it lives in)"
    else:
        return None
    if folder not in cache:
        if not folder.is_dir():
            raise SuiteError(
                f"plugin folder {folder} does not exist",
                location=location,
                fix="give the plugin's folder (the one holding .claude-plugin/plugin.json), "
                "relative to the suite file",
            )
        from skilltest.plugins.plugin import load_plugin

        try:
            cache[folder] = load_plugin(folder, location=location, name=name)
        except InputError as exc:
            raise SuiteError(exc.message, location=exc.location, fix=exc.fix) from exc
    return cache[folder]


def _names_a_skill(data: dict[str, Any]) -> bool:
    """Whether the suite names its skill (``skill``, ``skill_file``, on it or a scenario)."""
    keys = ("skill", "skill_file")
    return any(data.get(k) for k in keys) or any(
        raw.get(k) for raw in data.get("scenarios") or () for k in keys
    )


def plugin_around(path: Path, repository: Repository) -> Path | None:
    """The plugin a suite file lives in: the nearest folder above it (up to the repository's
    root) holding ``.claude-plugin/plugin.json``, else the one folder at the repository's root
    that holds one (a marketplace repository keeping its plugin beside its tests, as
    Honeycomb's agent-skill does); ``None`` when there is none, or several at the root."""
    folder = path.resolve().parent
    while repository.holds(folder):
        if (folder / PLUGIN_MANIFEST).is_file():
            return folder
        if folder == repository.root or folder.parent == folder:
            break
        folder = folder.parent
    at_root = sorted(
        child
        for child in repository.root.iterdir()
        if child.is_dir() and (child / PLUGIN_MANIFEST).is_file()
    )
    return at_root[0] if len(at_root) == 1 else None


def _plugin_skills(plugin: Plugin, names: list[str], where: str) -> tuple[Skill, ...]:
    """The plugin's skills a scenario names (bare or ``plugin:skill``), or all of them."""
    if not names:
        if not plugin.skills:
            raise SuiteError(
                f"plugin {plugin.name} has no skill to test",
                location=where,
                fix="test a plugin with skills/<name>/SKILL.md, or name a skill with skill:",
            )
        return plugin.skills
    found = []
    for name in names:
        skill = plugin.skill(name.rsplit(":", 1)[-1])
        if skill is None:
            known = ", ".join(s.name for s in plugin.skills) or "none"
            raise SuiteError(
                f"plugin {plugin.name} has no skill {name!r} (its skills: {known})",
                location=where,
                fix="name one of the plugin's skills",
            )
        found.append(skill)
    return tuple(found)


def _weights(raw: dict[str, Any], suite: dict[str, Any]) -> Weights:
    merged = {**(suite.get("weights") or {}), **(raw.get("weights") or {})}
    return Weights(**{key: float(value) for key, value in merged.items()})


def _expected(
    raw: dict[str, Any],
    where: str,
    suite: dict[str, Any],
    *,
    skill: str,
    flags: int,
    timeout_s: float,
    base: Path | None = None,
    repository: Repository | None = None,
    scoring: Scoring = "skilltest",
) -> Expected:
    """The scenario's rubric, its ``Skill`` requirements moved to the expected skills (under
    honeycomb's scoring also kept in the tool lists, where its evaluator scores them)."""
    spec = raw.get("expected") or {}
    weights = _weights(raw, suite)
    skills: list[str] = list(raw.get("expected_skills") or ())
    indicators: list[str] = []

    def tools(entries: Any) -> tuple[str, ...]:
        # Only the with-skill arm can invoke the skill: a Skill entry is an indicator (`fired`),
        # never points the baseline could not earn.
        kept = []
        for entry in entries or ():
            named = skill_requirement(entry, skill)
            if named is None or scoring == "honeycomb":
                kept.append(entry)
            if named is not None:
                indicators.append(named)
        return tuple(kept)

    def patterns(key: str) -> tuple[Pattern, ...]:
        return compile_patterns(
            spec.get(key) or (), f"{where}/expected/{key}", flags=flags, timeout_s=timeout_s
        )

    # An anti-pattern is a pattern, or {pattern, veto}: a vetoing one zeroes the run.
    anti_entries = list(spec.get("anti_patterns") or ())
    vetoes = {
        str(entry["pattern"])
        for entry in anti_entries
        if isinstance(entry, dict) and entry.get("veto") is True
    }
    anti_patterns = compile_patterns(
        [entry["pattern"] if isinstance(entry, dict) else entry for entry in anti_entries],
        f"{where}/expected/anti_patterns",
        flags=flags,
        timeout_s=timeout_s,
    )
    # The suite's checks apply to every scenario, before the scenario's own.
    suite_file = where.split("#", 1)[0]
    checks = tuple(
        check
        for entries, place in (
            (suite.get("checks"), f"{suite_file}#/checks"),
            (raw.get("checks"), f"{where}/checks"),
        )
        for check in _parse_checks(
            entries, place, flags=flags, timeout_s=timeout_s, base=base, repository=repository
        )
    )
    named = [check.name for check in checks]
    for check in checks:
        if named.count(check.name) > 1:
            raise SuiteError(
                f"two checks of the scenario are named {check.name!r} (the suite's and its own)",
                location=check.location,
                fix="give one of them its own name: (name: ...)",
            )

    required_tools = tools(spec.get("required_tools"))
    recommended_tools = tools(spec.get("recommended_tools"))
    listed = {canonical_tool_name(name) for name in (*required_tools, *recommended_tools)}
    ordering: list[tuple[str, ...]] = []
    for chain in spec.get("tool_ordering") or ():
        kept = tools(chain)
        # [Skill, Bash] leaves [Bash]: "Bash was called", already scored when a tool list names
        # it; a chain left empty asked for nothing but the skill.
        if scoring == "honeycomb" or (
            len(kept) > 1 or (kept and canonical_tool_name(kept[0]) not in listed)
        ):
            ordering.append(kept)
    expected = Expected(
        required_tools=required_tools,
        required_patterns=patterns("required_patterns"),
        anti_patterns=anti_patterns,
        tool_ordering=tuple(ordering),
        recommended_tools=recommended_tools,
        weights=weights,
        text_patterns=patterns("text_patterns"),
        pattern_scope=_pick("pattern_scope", raw, suite, DEFAULT_PATTERN_SCOPE),
        expected_skills=tuple(dict.fromkeys([*skills, *indicators])),
        vetoes=frozenset(vetoes),
        expect_no_action=bool(spec.get("expect_no_action")),
        require_success=bool(_pick("require_success", raw, suite, False)),
        checks=checks,
        scoring=scoring,
    )
    if not expected.defined and not any(check.scored for check in checks):
        # A scenario with nothing to score can never fail: that is a defect of the suite.
        if indicators:
            raise SuiteError(
                "the scenario's only rubric entries are Skill requirements, which are an "
                "indicator (whether the skill fired), not part of the score: no run could ever "
                "be scored",
                location=f"{where}/expected",
                fix="add what the agent should do once the skill is loaded (required_patterns on "
                "the commands it runs, required_tools, anti_patterns, tool_ordering of other "
                "tools); keep the skill in expected_skills",
            )
        raise SuiteError(
            "the scenario defines no rubric component, so no run could ever be scored",
            location=f"{where}/expected",
            fix="give `expected:` at least one non-empty list (required_tools, required_patterns, "
            "text_patterns, anti_patterns, tool_ordering or recommended_tools), "
            "expect_no_action: true, or `checks:`",
        )
    if sum(weights.of(name) for name in (*expected.defined, *(("checks",) if checks else ()))) <= 0:
        raise SuiteError(
            "every component the scenario defines weighs 0, so no run could ever be scored",
            location=f"{where}/weights",
            fix="give a positive weight to at least one of: " + ", ".join(expected.defined),
        )
    return expected


def load_scenario_suite(
    path: Path,
    *,
    skills_dir: Path | None = None,
    overrides: Overrides | None = None,
    skill_name: str | None = None,
) -> ScenarioSuite:
    """Loads, validates and types one suite file.

    Args:
        path: The suite file.
        skills_dir: ``--skills-dir``: the folder holding ``<skill>/SKILL.md``.
        overrides: Command-line options that win over the file.
        skill_name: ``--skill``: the skill for suites and scenarios that name none.

    Raises:
        SuiteError: unreadable file, YAML error, schema violation, duplicate ids, no skill.
        PatternError: a pattern that does not compile or is catastrophically slow.
        SkillNotFoundError: a skill's SKILL.md cannot be found.
    """
    allowed = ReadOptions(allow_code_graders=bool(overrides and overrides.allow_code_graders))
    data, source = read_suite_document(path, "scenarios", allowed)
    suite = suite_from_document(
        data, path, skills_dir=skills_dir, overrides=overrides, skill_name=skill_name
    )
    return suite if source is None else replace(suite, source_format=source)


def load_eval_cases(
    target: Path,
    *,
    overrides: Overrides | None = None,
    model_script: Path | None = None,
) -> ScenarioSuite:
    """Loads Claude Code eval cases (a plugin's ``evals/`` folder or one case folder) as a
    scenario suite (:mod:`skilltest.evalcases.suite`).

    Args:
        target: The eval folder, a case folder, or a case's ``case.yaml``.
        overrides: Command-line options that win over the cases (``--plugin-dir`` names the
            plugin under test).
        model_script: The emulator's model script (default: the eval folder's
            ``model-script.yaml``).

    Raises:
        SuiteError: a case or mock the CLI would refuse, or no plugin to test.
        PatternError: a grader's pattern that does not compile.
    """
    from skilltest.evalcases.suite import (
        OUTPUT_FOLDER,
        case_locations,
        read_eval_target,
        suite_document,
    )

    overrides = overrides or Overrides()
    found = read_eval_target(target, plugin_dir=overrides.plugin_dir)
    document = suite_document(found, model_script=model_script)
    # What the cases became must be a valid suite; a failure here is skilltest's own defect.
    validate(document, "scenarios", found.root)
    suite = suite_from_document(
        document,
        found.root,
        base=found.root,
        overrides=replace(overrides, plugin_dir=found.plugin.root if found.plugin else None),
        locations=case_locations(found),
        repository=found.repository,
    )
    if found.plugin is not None:
        # The plugin is what a case tests: reports, kept output and cassettes name it, and it
        # counts as fired when any of its skills did.
        suite = replace(
            suite,
            scenarios=tuple(
                replace(s, skill=replace(s.skill, name=found.plugin.name), file_label=None)
                for s in suite.scenarios
            ),
        )
    return replace(suite, output=found.root / OUTPUT_FOLDER, notes=found.notes)


def _workspace_files(
    raw: dict[str, Any], base: Path, repository: Repository, where: str
) -> tuple[tuple[Path, str], ...]:
    """A scenario's ``workspace_files``: each source inside the repository and existing, each
    destination a relative path that stays in the working directory."""
    files = []
    for index, entry in enumerate(raw.get("workspace_files") or ()):
        at = f"{where}/workspace_files/{index}"
        source = repository.inside(
            base / entry["path"], written=entry["path"], location=f"{at}/path"
        )
        if not source.exists():
            raise SuiteError(
                f"workspace file {entry['path']!r} does not exist (looked at {source})",
                location=f"{at}/path",
                fix="give a file or folder relative to the suite file",
            )
        repository.check_links(source, location=f"{at}/path")
        to = PurePosixPath(entry["to"])
        if to.is_absolute() or ".." in to.parts or str(to) in ("", "."):
            raise SuiteError(
                f"{entry['to']!r} leaves the run's working directory",
                location=f"{at}/to",
                fix="give a relative path without '..', e.g. evals/files/sample.pdf",
            )
        files.append((source, to.as_posix()))
    return tuple(files)


def suite_from_document(
    data: dict[str, Any],
    path: Path,
    *,
    base: Path | None = None,
    skills_dir: Path | None = None,
    overrides: Overrides | None = None,
    skill_name: str | None = None,
    locations: Sequence[str] | None = None,
    repository: Repository | None = None,
) -> ScenarioSuite:
    """Types a validated suite document.

    Args:
        data: The document, valid against ``scenarios.schema.json``.
        path: The file (or folder) it comes from.
        base: The folder its paths are relative to (default: ``path``'s folder).
        skills_dir: ``--skills-dir``.
        overrides: Command-line options that win over the document.
        skill_name: ``--skill``.
        locations: Where each scenario was written, for messages (default:
            ``path#/scenarios/N``).
        repository: Where every path it names must lie (default: the repository of ``path``,
            :func:`skilltest.suite.repository.repository_of`).

    Raises:
        SuiteError: duplicate ids, no skill, a file it names that does not exist or lies
            outside the repository.
        PatternError: a pattern that does not compile or is catastrophically slow.
        SkillNotFoundError: a skill's SKILL.md cannot be found.
    """
    overrides = overrides or Overrides()
    base = base if base is not None else path.parent
    repository = repository or repository_of(path)
    timeout = float(data.get("match_timeout_s", DEFAULT_TIMEOUT_S))
    scoring = suite_scoring(data)
    # --skill names the skill; a suite that names none tests the plugin it lives in, if any.
    plugin = _plugin(data, path, overrides, {}, repository, around=not skill_name)
    world = _world(data, path, repository)
    skills: dict[tuple[str, str | None], Skill] = {}
    ids = SuiteIds()
    scenarios = []
    notes: list[str] = []
    for index, raw in enumerate(data["scenarios"]):
        where = locations[index] if locations is not None else f"{path}#/scenarios/{index}"
        ids.add(raw["id"], index, where)
        if plugin is not None:
            named = [
                n
                for n in (raw.get("skill"), data.get("skill"), skill_name)
                if isinstance(n, str) and n
            ][:1] or [name for _, name in _expected_skill_names(raw)]
            in_plugin = _plugin_skills(plugin, named, f"{where}")
            for skill in in_plugin:
                skills.setdefault((f"{plugin.name}:{skill.name}", None), skill)
            wanted_plugin: list[tuple[tuple[str, str | None], str]] = [
                ((f"{plugin.name}:{skill.name}", None), where) for skill in in_plugin
            ]
        skill_file = raw.get("skill_file") or (None if raw.get("skill") else data.get("skill_file"))
        name = raw.get("skill") or data.get("skill") or skill_name
        if not name and skill_file:
            # Public suites name only the file: the skill is the folder holding SKILL.md.
            name = skill_name_from_file(skill_file, path)
        # A suite that names no skill (as public scenario suites do) tests the skills each
        # scenario expects: the with-skill arm installs all of them.
        expected_names = () if name else _expected_skill_names(raw)
        if plugin is None and not name and not expected_names:
            raise SuiteError(
                "no skill named for this scenario",
                location=where,
                fix="add `skill: <name>` at the top of the suite or to the scenario, "
                "list the skills in `expected_skills:`, or pass --skill NAME",
            )
        if plugin is not None:
            wanted = wanted_plugin
        else:
            wanted = (
                [((name, skill_file), _skill_location(raw, data, where, f"{path}#"))]
                if name
                else [((expected, None), f"{where}/{place}") for place, expected in expected_names]
            )
        for wanted_key, location in wanted:
            if wanted_key not in skills:
                skills[wanted_key] = find_skill(
                    _folder_name(wanted_key[0]),
                    suite_path=path,
                    skill_file=wanted_key[1],
                    skills_dir=skills_dir,
                    location=location,
                )
        key = wanted[0][0]
        flags = parse_flags(
            raw.get("pattern_flags", data.get("pattern_flags", [])), f"{where}/pattern_flags"
        )
        workspace = raw.get("workspace")
        workspace_path = (
            repository.inside(base / workspace, written=workspace, location=f"{where}/workspace")
            if workspace
            else None
        )
        if workspace_path is not None and not workspace_path.is_dir():
            raise SuiteError(
                f"workspace folder {workspace_path} does not exist",
                location=f"{where}/workspace",
                fix="give a folder relative to the suite file",
            )
        if workspace_path is not None:
            repository.check_links(workspace_path, location=f"{where}/workspace")
        workspace_files = _workspace_files(raw, base, repository, where)
        expected = _expected(
            raw,
            where,
            data,
            skill=skills[key].name,
            flags=flags,
            timeout_s=timeout,
            base=base,
            repository=repository,
            scoring=scoring.scoring,
        )
        mocks, mock_notes = _mocks(raw, data, base, where, f"{path}#", repository)
        notes += [note for note in mock_notes if note not in notes]
        skip = raw.get("skip")
        scenarios.append(
            Scenario(
                id=raw["id"],
                name=raw.get("name"),
                skill=skills[key],
                prompt=raw["prompt"],
                turns=tuple(raw.get("turns") or ()),
                expected=expected,
                expected_skills=expected.expected_skills,
                config=_config(
                    raw,
                    data,
                    overrides.model,
                    path=path,
                    where=where,
                    base=base,
                    repository=repository,
                ),
                repetitions=overrides.repetitions
                or _optional_int(_pick("repetitions", raw, data, None)),
                comparison=not overrides.skill_only
                and not raw.get("canary")
                and bool(_pick("comparison", raw, data, True)),
                min_score=float(
                    _first(
                        overrides.min_score,
                        _pick("min_score", raw, data, None),
                        DEFAULT_MIN_SCORE,
                    )
                ),
                min_delta=float(
                    _first(
                        overrides.min_delta,
                        _pick("min_delta", raw, data, None),
                        DEFAULT_MIN_DELTA,
                    )
                ),
                decide_by=str(_pick("decide_by", raw, data, "pass")),
                workspace=workspace_path,
                workspace_files=workspace_files,
                location=where,
                skip=(skip if isinstance(skip, str) else "skipped in the suite") if skip else None,
                skills=tuple(skills[wanted_key] for wanted_key, _ in wanted),
                canary=bool(raw.get("canary")),
                core=_pick("comparison", raw, data, None) is True,
                require_skills_fired=bool(_pick("require_skills_fired", raw, data, True)),
                plugin=plugin,
                plugin_mcp=_pick("plugin_mcp", raw, data, "both"),
                critical=bool(_pick("critical", raw, data, False)),
                score_partial=bool(_pick("score_partial", raw, data, False)),
                world=world,
                world_profile=_profile(raw, world, where),
                world_expected=_world_expected(raw, world, where, flags=flags, timeout_s=timeout),
                mocks=mocks,
                plugin_servers=_pick("plugin_servers", raw, data, "all"),
                setup=(
                    _existing(base, raw["setup"], f"{where}/setup", repository)
                    if raw.get("setup")
                    else None
                ),
                resume=(
                    _existing(base, raw["resume"], f"{where}/resume", repository)
                    if raw.get("resume")
                    else None
                ),
                file_label=None if name else _file_label(path),
            )
        )
    return ScenarioSuite(
        path=path,
        name=data.get("name"),
        scenarios=tuple(scenarios),
        model_script=model_script_path(data, path, repository),
        replay=_replay_rules(data, path, world),
        notes=tuple(notes),
        scoring=scoring,
        plugin_found=(
            plugin.root
            if plugin is not None and overrides.plugin_dir is None and not data.get("plugin")
            else None
        ),
    )


def _replay_rules(data: dict[str, Any], path: Path, world: World | None) -> Rules:
    """The suite's ``replay:`` rules; the caller's values of the variables its world names are
    secrets it redacts too (a run's agent gets a token of its own in each)."""
    rules = Rules.from_suite(data.get("replay"), f"{path}#/replay")
    if world is None:
        return rules
    values = (os.environ.get(name, "") for name in world.variables())
    return rules.with_secrets(value for value in values if len(value) >= SHORTEST_DECLARED)


def _file_label(path: Path) -> str:
    """A suite file's name without its ``.yaml``/``.yml`` ending, made a safe folder name (the
    runs' output is kept under it): each character a folder name cannot hold becomes ``-``, so
    ``core@9d1d0ce.yml`` is kept under ``core-9d1d0ce``."""
    stem = path.stem if path.suffix in {".yaml", ".yml"} else path.name
    safe = _UNSAFE_IN_NAME.sub("-", stem).lstrip("._-")[:128]
    return safe or "suite"


def _skill_location(raw: dict[str, Any], suite: dict[str, Any], where: str, top: str) -> str:
    """The key that chose the skill, so that a missing one is reported where it is wrong."""
    if raw.get("skill_file"):
        return f"{where}/skill_file"
    if raw.get("skill"):
        return f"{where}/skill"
    if suite.get("skill_file"):
        return f"{top}/skill_file"
    return f"{top}/skill"


def _expected_skill_names(raw: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The skills a scenario expects, each once, with where it is named (``expected_skills/N``,
    or ``expected`` for a ``Skill(name)`` entry of the rubric)."""
    spec = raw.get("expected") or {}
    entries = [
        *(spec.get("required_tools") or ()),
        *(spec.get("recommended_tools") or ()),
        *(tool for chain in spec.get("tool_ordering") or () for tool in chain),
    ]
    found: dict[str, str] = {}
    for index, entry in enumerate(raw.get("expected_skills") or ()):
        found.setdefault(str(entry), f"expected_skills/{index}")
    for entry in entries:
        named = skill_requirement(str(entry), "")
        if named:
            found.setdefault(named, "expected")
    return tuple((place, name) for name, place in found.items())


def _folder_name(name: str) -> str:
    """The skill folder an expected skill names: ``plugin:skill`` is the folder ``skill``."""
    return name.rsplit(":", 1)[-1]


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)
