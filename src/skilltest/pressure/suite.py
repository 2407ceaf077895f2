"""Skill-pressure suites: YAML validated once, then typed.

A suite names a skill and lists scenarios. Each scenario's prompt goes to the model with the
skill as the system prompt (the with-skill arm) and without it (the baseline), K times each.

Two keys let the public harnesses' suites keep their own meaning: ``prompt_suffix`` (their
runners append "Describe your reasoning and what you would do. Do not call any tools." to each
prompt) and ``baseline_red`` (``criteria``, the default: a baseline run is RED when it fails the
with-skill criteria; ``expected_patterns``: when it matches every ``expected_patterns`` entry).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilltest.errors import InputError, SuiteError
from skilltest.formats.detect import read_suite_document
from skilltest.names import nearest_name
from skilltest.patterns import DEFAULT_TIMEOUT_S, Pattern, compile_patterns, parse_flags
from skilltest.replay.rules import Rules
from skilltest.skills import Skill, find_skill, skill_name_from_file
from skilltest.suite.ids import SuiteIds
from skilltest.suite.loader import model_script_path
from skilltest.suite.repository import repository_of

DEFAULT_THRESHOLD = 0.8
DEFAULT_MAX_TOKENS = 1024
RED_RATE_NEEDED = 0.5
"""A baseline must be RED at least this often for the test to measure."""
RED_BY_CRITERIA = "criteria"
"""``baseline_red: criteria`` (the default): a baseline run is RED when it fails the with-skill
criteria (a required pattern missing, or an anti-pattern matching)."""
RED_BY_EXPECTED = "expected_patterns"
"""``baseline_red: expected_patterns``: a baseline run is RED when it matches every entry of
``without_skill.expected_patterns`` (the author's description of the failure)."""
PATTERN_KEYS = (
    ("with_skill", "required_patterns"),
    ("with_skill", "anti_patterns"),
    ("without_skill", "expected_patterns"),
)
"""Where a scenario lists its patterns (``<arm>.<key>``), in the order they are compiled."""
PROMPT_SUFFIX_SEPARATOR = "\n\n"
"""Between a prompt and its ``prompt_suffix``: a blank line, so the suffix reads as an
instruction of its own whatever punctuation the prompt ends with."""


@dataclass(frozen=True)
class Overrides:
    """Options given on the command line; they win over the suite file."""

    repetitions: int | None = None
    """``-k``: runs per arm."""
    model: str | None = None
    """``--model``."""
    threshold: float | None = None
    """``--threshold``: the with-skill pass rate a scenario needs."""
    max_tokens: int | None = None
    """``--max-tokens``."""
    temperature: float | None = None
    """``--temperature``."""
    plugin_name: str | None = None
    """``--plugin``: the plugin of the marketplace ``plugin_dir`` is the folder of."""
    plugin_dir: Path | None = None
    """``--plugin-dir``: the plugin whose skills are under test, instead of the suite's
    ``plugin:``."""


@dataclass(frozen=True)
class PressureScenario:
    """One behavioural axis: a prompt and what the skill should make the model say."""

    id: str
    """Unique within the suite."""
    name: str | None
    """A title for reports."""
    prompt: str
    """The user message."""
    required_patterns: tuple[Pattern, ...]
    """Every one must match a with-skill answer."""
    anti_patterns: tuple[Pattern, ...]
    """None may match a with-skill answer."""
    expected_patterns: tuple[Pattern, ...]
    """The author's idea of what the model says without the skill: reported, and what a RED
    baseline run matches with ``baseline_red: expected_patterns``."""
    repetitions: int | None
    """Runs per arm; ``None`` when the suite does not fix K (adaptive repetitions)."""
    model: str | None
    """The model, or ``None`` for the backend's default."""
    threshold: float
    """The with-skill pass rate needed for ``steers``."""
    max_tokens: int
    """The longest answer."""
    temperature: float | None
    """Sampling temperature, or ``None`` for the backend's default."""
    location: str
    """``file#/scenarios/N`` for messages."""
    skip: str | None = None
    """Why the scenario is skipped, when it is."""
    prompt_suffix: str = ""
    """Appended to the prompt after a blank line (``prompt_suffix``); empty: nothing."""
    baseline_red: str = RED_BY_CRITERIA
    """When a baseline run is RED: ``criteria`` or ``expected_patterns``."""
    critical: bool = False
    """``critical: true`` (on the scenario, or the suite's default): ``skilltest gate`` blocks a
    release when its with-skill pass rate is credibly below the baseline's, or it is missing."""

    @property
    def message(self) -> str:
        """The user message sent: the prompt, then the suffix after a blank line."""
        if not self.prompt_suffix:
            return self.prompt
        return self.prompt + PROMPT_SUFFIX_SEPARATOR + self.prompt_suffix


@dataclass(frozen=True)
class PressureSuite:
    """A suite file, loaded."""

    path: Path
    """The suite file."""
    skill: Skill
    """The skill under test."""
    scenarios: tuple[PressureScenario, ...]
    """In file order."""
    model_script: Path | None
    """The emulator's model script for this suite, when it has one."""
    replay: Rules = field(default_factory=Rules)
    """The suite's own record-and-replay rules (``replay:``), on top of the built-in ones."""


def _option(
    key: str, scenario: dict[str, Any], suite: dict[str, Any], cli: Any, default: Any
) -> Any:
    if cli is not None:
        return cli
    if key in scenario:
        return scenario[key]
    if key in suite:
        return suite[key]
    return default


def load_pressure_suite(
    path: Path,
    *,
    skills_dir: Path | None = None,
    overrides: Overrides | None = None,
    skill_name: str | None = None,
) -> PressureSuite:
    """Loads, validates and types one suite file.

    Raises:
        SuiteError: unreadable file, YAML error, schema violation, duplicate ids.
        PatternError: a pattern that does not compile or is catastrophically slow.
        SkillNotFoundError: the skill's SKILL.md cannot be found.
    """
    overrides = overrides or Overrides()
    data, _ = read_suite_document(path, "pressure")
    plugin_skill = _plugin_skill(data, path, overrides, skill_name)
    skill_file = data.get("skill_file")
    # The same rule as scenario suites: `skill_file:` alone names the skill by its folder.
    name = (
        data.get("skill") or skill_name or (skill_file and skill_name_from_file(skill_file, path))
    )
    if not name and plugin_skill is None:
        raise SuiteError(
            "the suite names no skill",
            location=f"{path}#",
            fix="add `skill: <name>` at the top of the file, or pass --skill NAME",
        )
    skill = plugin_skill or find_skill(
        str(name),
        suite_path=path,
        skill_file=skill_file,
        skills_dir=skills_dir,
        location=f"{path}#/skill_file" if skill_file else f"{path}#/skill",
    )
    timeout = float(data.get("match_timeout_s", DEFAULT_TIMEOUT_S))
    ids = SuiteIds()
    scenarios = []
    for index, raw in enumerate(data["scenarios"]):
        where = f"{path}#/scenarios/{index}"
        ids.add(raw["id"], index, where)
        flag_names = raw.get("pattern_flags", data.get("pattern_flags", []))
        flags = parse_flags(flag_names, f"{where}/pattern_flags")
        without_skill = raw.get("without_skill") or {}
        skip = raw.get("skip")
        baseline_red = _option("baseline_red", raw, data, None, RED_BY_CRITERIA)
        if baseline_red == RED_BY_EXPECTED and not without_skill.get("expected_patterns"):
            # RED would then mean "matched all of nothing": every baseline run would be RED.
            own = "baseline_red" in raw
            raise SuiteError(
                "baseline_red: expected_patterns needs without_skill.expected_patterns, the "
                "patterns a RED baseline answer matches",
                location=f"{where}/baseline_red" if own else f"{where}/without_skill",
                fix="add without_skill: {expected_patterns: [...]} to the scenario, or give it "
                "baseline_red: criteria",
            )
        patterns = {
            (arm, key): compile_patterns(
                (raw.get(arm) or {}).get(key, []),
                f"{where}/{arm}/{key}",
                flags=flags,
                timeout_s=timeout,
            )
            for arm, key in PATTERN_KEYS
        }
        scenarios.append(
            PressureScenario(
                id=raw["id"],
                name=raw.get("name"),
                prompt=raw["prompt"],
                required_patterns=patterns["with_skill", "required_patterns"],
                anti_patterns=patterns["with_skill", "anti_patterns"],
                expected_patterns=patterns["without_skill", "expected_patterns"],
                repetitions=_optional_int(
                    _option("repetitions", raw, data, overrides.repetitions, None)
                ),
                model=_option("model", raw, data, overrides.model, None),
                threshold=float(
                    _option("threshold", raw, data, overrides.threshold, DEFAULT_THRESHOLD)
                ),
                max_tokens=int(
                    _option("max_tokens", raw, data, overrides.max_tokens, DEFAULT_MAX_TOKENS)
                ),
                temperature=_option("temperature", raw, data, overrides.temperature, None),
                location=where,
                skip=(skip if isinstance(skip, str) else "skipped in the suite") if skip else None,
                prompt_suffix=str(_option("prompt_suffix", raw, data, None, "")),
                baseline_red=baseline_red,
                critical=bool(_option("critical", raw, data, None, False)),
            )
        )
    return PressureSuite(
        path=path,
        skill=skill,
        scenarios=tuple(scenarios),
        model_script=model_script_path(data, path),
        replay=Rules.from_suite(data.get("replay"), f"{path}#/replay"),
    )


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _plugin_skill(
    data: dict[str, Any], path: Path, overrides: Overrides, skill_name: str | None
) -> Skill | None:
    """The system prompt of a suite that tests a plugin: the skill it names, or every skill of
    the plugin, each under its name (the model of one turn cannot load skills itself)."""
    plugin_name = None
    if overrides.plugin_dir is not None:
        folder, location = overrides.plugin_dir, "--plugin-dir"
        plugin_name = overrides.plugin_name
    elif data.get("plugin"):
        location = f"{path}#/plugin"
        repository = repository_of(path)
        folder = repository.inside(
            path.parent / str(data["plugin"]), written=str(data["plugin"]), location=location
        )
        repository.check_links(folder, location=location)
    else:
        return None
    if not folder.is_dir():
        raise SuiteError(
            f"plugin folder {folder.resolve()} does not exist",
            location=location,
            fix="give the plugin's folder (the one holding .claude-plugin/plugin.json), "
            "relative to the suite file",
        )
    from skilltest.plugins.plugin import load_plugin

    try:
        plugin = load_plugin(folder.resolve(), location=location, name=plugin_name)
    except InputError as exc:
        raise SuiteError(exc.message, location=exc.location, fix=exc.fix) from exc
    name = data.get("skill") or skill_name
    if name:
        skill = plugin.skill(str(name).rsplit(":", 1)[-1])
        if skill is None:
            known = ", ".join(s.name for s in plugin.skills) or "none"
            guess = nearest_name(str(name), (s.name for s in plugin.skills))
            raise SuiteError(
                f"plugin {plugin.name} has no skill {name!r}"
                + (f" (did you mean {guess!r}?)" if guess else "")
                + f" (its skills: {known})",
                location=f"{path}#/skill",
                fix="name one of the plugin's skills, or leave skill: out to test them all",
            )
        return skill
    if not plugin.skills:
        raise SuiteError(
            f"plugin {plugin.name} has no skill to test",
            location=location,
            fix="test a plugin with skills/<name>/SKILL.md",
        )
    text = "\n\n".join(f"# Skill: {s.name}\n\n{s.text}" for s in plugin.skills)
    return Skill(
        name=plugin.name,
        skill_file=plugin.root / ".claude-plugin" / "plugin.json",
        text=text,
        description=plugin.manifest.get("description"),
    )
