"""The files ``skilltest init`` writes, as text: three suites and their model scripts per skill,
a Makefile snippet and the ignore entries for raw run output.

Every suite runs green at once on the emulator: the model scripts answer with the skill the way
the suites expect and without it the plain way. Values only the author can know are examples
made from the description, each under a ``# TODO:`` line that ``skilltest validate`` lists.
Strings are written as JSON string literals, which YAML reads as double-quoted scalars. Pure
functions; :mod:`skilltest.scaffold.write` puts the files on disk.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skilltest.errors import InputError, SkillNotFoundError
from skilltest.scaffold.target import SkillToTest, Target
from skilltest.scaffold.words import (
    fires,
    first_instruction,
    should_not_requests,
    should_trigger_requests,
)
from skilltest.skills import Skill, find_skill
from skilltest.suite.todo import comment

PRESSURE_DIR = Path("tests/skill-pressure")
SCENARIOS_DIR = Path("tests/scenarios")
TRIGGERS_DIR = Path("tests/triggers")
SCRIPTS_DIR = Path("tests/model-scripts")
MAKEFILE_SNIPPET = Path("skilltest.mk")
GITIGNORE = Path(".gitignore")

IGNORED = ("/tests/scenarios/output/", "/tests/triggers/output/")
"""Where scenario and trigger runs keep their raw output (``output/`` beside each suite)."""
IGNORE_COMMENT = "# skilltest: raw output of scenario and trigger runs (transcripts, traces)"

NOTES_FILE = "NOTES.md"
"""The file the example scenario asks the agent to write, and its check reads."""
EMULATED_MODEL = "claude-sonnet-4-5-emulated"
PLAIN_ANSWER = "A plain answer, without any skill."


@dataclass(frozen=True)
class Answers:
    """What the author answered for one skill when asked on a terminal; ``None`` keeps the
    example made from the description (and its TODO)."""

    request: str | None = None
    """A request where the skill should change what the agent does."""
    phrase: str | None = None
    """Words an answer that follows the skill contains (matched case-insensitively); several,
    separated by commas, are one pattern each."""


@dataclass(frozen=True)
class GeneratedFile:
    """One file to write."""

    path: Path
    """Relative to the project root."""
    text: str
    """Its content."""
    shared: bool = False
    """A file every skill's suites share (the Makefile snippet): left alone when it exists."""


@dataclass(frozen=True)
class _Plan:
    """What the files of one skill say."""

    unit: SkillToTest
    request: str
    request_is_example: bool
    phrases: tuple[str, ...]
    phrase_is_example: bool
    answer: str
    triggers: tuple[str, ...] = field(default=())
    unrelated: tuple[str, ...] = field(default=())

    @property
    def name(self) -> str:
        return self.unit.skill.name

    @property
    def patterns(self) -> tuple[str, ...]:
        """One case-insensitive regex per phrase, its spaces matching any run of whitespace."""
        # Hyphens need no escape outside a character class, and read better without one.
        return tuple(
            "(?i)" + re.escape(phrase).replace(r"\ ", r"\s+").replace(r"\-", "-")
            for phrase in self.phrases
        )

    @property
    def pattern_list(self) -> str:
        """The patterns as a YAML flow sequence."""
        return "[" + ", ".join(q(pattern) for pattern in self.patterns) + "]"


def q(text: str) -> str:
    """A YAML double-quoted scalar (a JSON string literal)."""
    return json.dumps(text, ensure_ascii=False)


def _rel(path: Path, start: Path) -> str:
    """``path`` relative to the folder ``start``, with ``..`` where needed, in / form."""
    import os

    return Path(os.path.relpath(path, start)).as_posix()


def _about(skill: Skill, root: Path) -> str:
    """What a suite's header says it is for: the skill's folder, or the root skill's name."""
    folder = _rel(skill.directory.absolute(), root)
    return f"{skill.name} (SKILL.md at the repository's root)" if folder == "." else folder


def _skill_reference(skill: Skill, suite: Path, root: Path) -> tuple[str, str]:
    """``("skill", name)`` when a suite at ``suite`` finds the skill by its name, else
    ``("skill_file", path relative to the project root)``."""
    try:
        found = find_skill(skill.name, suite_path=suite)
    except (SkillNotFoundError, InputError):
        found = None
    if found is not None and found.skill_file.resolve() == skill.skill_file.resolve():
        return "skill", skill.name
    return "skill_file", _rel(skill.skill_file.absolute(), root)


def _phrases(typed: str | None) -> tuple[str, ...]:
    """The phrases of an answer to "words an answer contains": comma-separated, each one
    pattern ("context, outline" is two, not the phrase "context, outline")."""
    return tuple(part.strip() for part in (typed or "").split(",") if part.strip())


def _plan(target: Target, unit: SkillToTest, answers: Answers) -> _Plan:
    skill = unit.skill
    name = skill.name
    derived = should_trigger_requests(skill, unit.neighbours)
    if not derived:
        listed = ", ".join(s.name for s in unit.neighbours)
        raise InputError(
            f"the description of {name} shares its words with those of {listed}: nothing in "
            "it tells a request for this skill from one for them",
            location=str(skill.skill_file),
            fix="say in the description what this skill is for that the others are not, then "
            "run skilltest init again",
        )
    request = answers.request or derived[0]
    triggers = list(derived)
    if answers.request and fires(answers.request, skill, unit.neighbours) == name:
        triggers = [answers.request, *[t for t in derived if t != answers.request]][:2]
    unrelated = should_not_requests(skill, unit.neighbours)
    instruction = first_instruction(skill.text) or (skill.description or "").strip()
    phrase_is_example = not _phrases(answers.phrase)
    phrases = _phrases(answers.phrase) or (f"{name} skill",)
    answer = f"Following the {name} skill: {instruction}"
    if not phrase_is_example:
        answer += f" ({', '.join(phrases)})"
    return _Plan(
        unit=unit,
        request=request,
        request_is_example=answers.request is None,
        phrases=phrases,
        phrase_is_example=phrase_is_example,
        answer=answer,
        triggers=tuple(triggers),
        unrelated=tuple(unrelated),
    )


def _todo(wanted: bool, text: str, indent: str) -> list[str]:
    return [comment(text, indent)] if wanted else []


def _header(lines: Sequence[str]) -> list[str]:
    return [f"# {line}" if line else "#" for line in lines]


# --- pressure ----------------------------------------------------------------------------------


def _pressure_suite(target: Target, plan: _Plan) -> GeneratedFile:
    path = PRESSURE_DIR / f"{plan.name}.yaml"
    suite = target.root / path
    if target.plugin is not None:
        reference = [
            f"plugin: {q(_rel(target.plugin.root.absolute(), suite.parent))}",
            f"skill: {plan.name}",
        ]
        about = f"the {plan.name} skill of the plugin {target.plugin.name}"
    else:
        key, value = _skill_reference(plan.unit.skill, suite, target.root)
        reference = [f"{key}: {q(value) if key == 'skill_file' else value}"]
        about = _about(plan.unit.skill, target.root)
    script = _rel(target.root / SCRIPTS_DIR, suite.parent) + f"/{plan.name}.pressure.yaml"
    lines = [
        *_header(
            [
                f"Pressure suite for {about}, written by `skilltest init`: one turn, no tools,",
                "with the skill as the system prompt and without it: does it change the answer?",
                "Offline (no ANTHROPIC_API_KEY) the model emulator answers from the model script:",
                "a scripted stand-in, not a model. With a key the suite runs against Claude.",
            ]
        ),
        *reference,
        f"model_script: {q(script)}",
        "scenarios:",
        "  - id: example-request",
        *_todo(
            plan.request_is_example,
            f"a request where {plan.name} should change the answer (this one is made from its "
            "description)",
            "    ",
        ),
        f"    prompt: {q(plan.request)}",
        "    with_skill:",
        *_todo(
            plan.phrase_is_example,
            f"what an answer that follows {plan.name} says, as regexes (this one only finds "
            "the skill's name)",
            "      ",
        ),
        f"      required_patterns: {plan.pattern_list}",
    ]
    return GeneratedFile(path, "\n".join(lines) + "\n")


def _skill_line(skill: Skill) -> str:
    """A pattern for a line of the skill's SKILL.md, which the system prompt holds only with the
    skill: its ``name:`` line; for a root skill named after its folder (no usable name in its
    front matter), its ``description:`` line as written."""
    if skill.naming is None:
        return r"(?m)^name:\s*" + re.escape(skill.name) + r"\s*$"
    found = re.search(r"(?m)^description:.*$", skill.text)
    return "(?m)^" + re.escape(found.group(0).rstrip()) if found else re.escape(skill.text.strip())


def _pressure_script(target: Target, plan: _Plan) -> GeneratedFile:
    path = SCRIPTS_DIR / f"{plan.name}.pressure.yaml"
    suite = PRESSURE_DIR / f"{plan.name}.yaml"
    name_line = _skill_line(plan.unit.skill)
    lines = [
        *_header(
            [
                f"Model script for {suite.as_posix()} on the offline emulator: a scripted",
                f"stand-in, not a model. With {plan.name} in the system prompt it answers the way",
                "the suite expects; without it, plainly. Change the answers with the suite, or",
                "add rules per prompt (docs/model-script.md).",
            ]
        ),
        "schema_version: 1",
        f"model: {EMULATED_MODEL}",
        "rules:",
        f"  - id: with-{plan.name}",
        f"    when: {{system: {q(name_line)}}}",
        *_todo(
            plan.phrase_is_example,
            f"what a model that follows {plan.name} answers: offline this stand-in says it, so "
            "make it say what the suite's required_patterns look for",
            "    ",
        ),
        f"    reply: {{text: {q(plan.answer)}}}",
        "default:",
        f"  text: {q(PLAIN_ANSWER)}",
    ]
    return GeneratedFile(path, "\n".join(lines) + "\n")


# --- scenarios ---------------------------------------------------------------------------------


def _scenario_prompt(plan: _Plan) -> str:
    # A request typed without a full stop keeps its sentence break before the added one.
    request = plan.request.rstrip()
    end = "" if request.endswith((".", "?", "!", ":", ";")) else "."
    return f"{request}{end} Write your plan to {NOTES_FILE}."


def _file_checks(plan: _Plan) -> list[str]:
    """One ``file_matches`` check per phrase: the plan file shows each."""
    lines = []
    for phrase, pattern in zip(plan.phrases, plan.patterns, strict=True):
        name = f"the plan follows {plan.name}"
        if len(plan.phrases) > 1:
            name += f" ({phrase})"
        lines.append(
            f"      - file_matches: {{name: {q(name)}, path: {NOTES_FILE}, pattern: {q(pattern)}}}"
        )
    return lines


def _scenario_suite(target: Target, plans: Sequence[_Plan], stem: str) -> GeneratedFile:
    path = SCENARIOS_DIR / f"{stem}.yaml"
    suite = target.root / path
    if target.plugin is not None:
        reference = [f"plugin: {q(_rel(target.plugin.root.absolute(), suite.parent))}"]
        about = f"the plugin {target.plugin.name}"
    else:
        key, value = _skill_reference(plans[0].unit.skill, suite, target.root)
        reference = [f"{key}: {q(value) if key == 'skill_file' else value}"]
        about = _about(plans[0].unit.skill, target.root)
    script = _rel(target.root / SCRIPTS_DIR, suite.parent) + f"/{stem}.scenarios.yaml"
    lines = [
        *_header(
            [
                f"Scenario suite for {about}, written by `skilltest init`: the real claude CLI,",
                "several turns and tools, with the skill installed and without it: does the",
                "agent do the work differently? Raw output goes to output/ beside this file.",
            ]
        ),
        *reference,
        f"model_script: {q(script)}",
        "repetitions: 3                # runs per arm; leave it out (adaptive) for live runs",
        "config:",
        "  max_turns: 8",
        "  timeout_ms: 120000",
        "  allowed_tools: [Read, Glob, Grep, Write, Edit, Bash, Skill]",
        "scenarios:",
    ]
    for plan in plans:
        scenario_id = "example-task" if target.plugin is None else f"{plan.name}-example"
        lines += [
            f"  - id: {scenario_id}",
            *_todo(
                plan.request_is_example,
                f"a task where {plan.name} should change what the agent does (made from its "
                "description)",
                "    ",
            ),
            f"    prompt: {q(_scenario_prompt(plan))}",
            "    expected:",
            *_todo(
                plan.phrase_is_example,
                f"what the agent's tool calls show when it follows {plan.name}, as regexes",
                "      ",
            ),
            f"      required_patterns: {plan.pattern_list}",
            "    checks:",
            *_todo(
                plan.phrase_is_example,
                "what the work must leave behind: a file, a command that passes "
                "(docs/scenarios.md#outcome-checks)",
                "      ",
            ),
            *_file_checks(plan),
            f"    expected_skills: [{plan.name}]",
        ]
    return GeneratedFile(path, "\n".join(lines) + "\n")


def _scenario_script(target: Target, plans: Sequence[_Plan], stem: str) -> GeneratedFile:
    path = SCRIPTS_DIR / f"{stem}.scenarios.yaml"
    plugin = target.plugin
    lines = [
        *_header(
            [
                f"Model script for {(SCENARIOS_DIR / f'{stem}.yaml').as_posix()} on the offline "
                "emulator: a",
                "scripted stand-in, not a model. When the skill is listed it loads it, writes",
                f"its plan to {NOTES_FILE} and answers; without the skill it answers plainly.",
            ]
        ),
        "schema_version: 1",
        f"model: {EMULATED_MODEL}",
        "rules:",
    ]
    for plan in plans:
        name = plan.name
        # A plugin's skills are all listed in each run: each scenario is told by its prompt.
        user = f", user: {q('^' + re.escape(_scenario_prompt(plan)[:40]))}" if plugin else ""
        listed = f"{plugin.name}:{name}" if plugin is not None else name
        notes = f"# Plan\n\n{plan.answer}\n"
        lines += [
            f"  - id: load-{name}",
            f"    when: {{skill: {name}, turn: 1{user}}}",
            "    reply:",
            f"      text: {q(f'This is a task for the {name} skill; loading it.')}",
            f"      tool_calls: [{{name: Skill, input: {{skill: {q(listed)}}}}}]",
            f"  - id: follow-{name}",
            f"    when: {{skill_loaded: {name}, turn: 2{user}}}",
            "    reply:",
            f"      text: {q(f'Following the {name} skill: writing the plan to {NOTES_FILE}.')}",
            "      tool_calls:",
            "        - name: Write",
            *_todo(
                plan.phrase_is_example,
                f"the plan an agent that follows {name} writes: offline this stand-in writes "
                "it, so make it show what the suite's patterns and checks look for",
                "          ",
            ),
            f"          input: {{file_path: {NOTES_FILE}, content: {q(notes)}}}",
            f"  - id: done-{name}",
            f"    when: {{skill_loaded: {name}, turn: 3{user}}}",
            f"    reply: {{text: {q(f'Done: the plan is in {NOTES_FILE}.')}}}",
        ]
    lines += ["default:", f"  text: {q(PLAIN_ANSWER)}"]
    return GeneratedFile(path, "\n".join(lines) + "\n")


# --- triggers ----------------------------------------------------------------------------------


def _trigger_suite(target: Target, plan: _Plan) -> GeneratedFile:
    path = TRIGGERS_DIR / f"{plan.name}.yaml"
    suite = target.root / path
    key, value = _skill_reference(plan.unit.skill, suite, target.root)
    distractors = []
    for other in plan.unit.neighbours:
        other_key, other_value = _skill_reference(other, suite, target.root)
        distractors.append(other_value if other_key == "skill" else q(other_value))
    about = _about(plan.unit.skill, target.root)
    lines = [
        *_header(
            [
                f"Trigger suite for {about}, written by `skilltest init`: does its description",
                "make the agent load it for the requests it is for, and not for others, with the",
                "project's other skills installed beside it? Offline the emulator's stand-in",
                "decides by the descriptions in the skill listing (docs/model-script.md).",
            ]
        ),
        f"{key}: {q(value) if key == 'skill_file' else value}",
    ]
    if distractors:
        lines.append(f"distractors: [{', '.join(distractors)}]")
    script = _rel(target.root / SCRIPTS_DIR, suite.parent) + f"/{plan.name}.triggers.yaml"
    lines += [
        f"model_script: {q(script)}",
        "repetitions: 6                # runs per query: the fewest that decide one at threshold "
        "0.5; leave it out (-k auto) for live runs",
        "queries:",
        comment(
            f"requests a user of {plan.name} really types (these are made from its description)",
            "  ",
        ),
    ]
    for index, request in enumerate(plan.triggers, start=1):
        lines.append(f"  - {{id: fits-{index}, query: {q(request)}, should_trigger: true}}")
    lines.append(
        comment(
            f"near misses: requests about neighbouring work that {plan.name} should not fire for",
            "  ",
        )
    )
    for index, request in enumerate(plan.unrelated, start=1):
        lines.append(f"  - {{id: unrelated-{index}, query: {q(request)}, should_trigger: false}}")
    return GeneratedFile(path, "\n".join(lines) + "\n")


def _trigger_script(plan: _Plan) -> GeneratedFile:
    path = SCRIPTS_DIR / f"{plan.name}.triggers.yaml"
    lines = [
        *_header(
            [
                f"Model script for {(TRIGGERS_DIR / f'{plan.name}.yaml').as_posix()} on the "
                "offline emulator: the stand-in",
                "loads the listed skill whose description shares the most distinctive words",
                "(at least two) with the request, so editing a description changes what it does.",
            ]
        ),
        "schema_version: 1",
        f"model: {EMULATED_MODEL}",
        "rules:",
        "  - id: fire-by-description",
        "    when: {described: {min_overlap: 2}, turn: 1}",
        "    reply:",
        f"      text: {q('This fits the {described} skill; loading it.')}",
        f"      tool_calls: [{{name: Skill, input: {{skill: {q('{described}')}}}}}]",
        "default:",
        f"  text: {q(PLAIN_ANSWER)}",
    ]
    return GeneratedFile(path, "\n".join(lines) + "\n")


# --- make --------------------------------------------------------------------------------------

_MAKEFILE = """\
# skilltest targets, written by `skilltest init`. Use them from your Makefile:
#   include skilltest.mk
# Offline (no ANTHROPIC_API_KEY) the suites run on skilltest's model emulator; with a key, live.
SKILLTEST ?= skilltest
SKILLTEST_ARGS ?=

.PHONY: skilltest skilltest-setup skilltest-pressure skilltest-scenarios skilltest-triggers \\
	skilltest-validate skilltest-lint

skilltest: skilltest-pressure skilltest-scenarios skilltest-triggers

skilltest-setup:          # the pinned Claude Code CLI, into skilltest's cache (needs npm)
\t$(SKILLTEST) setup

skilltest-pressure:       # tests/skill-pressure: one turn, with and without the skill
\t$(SKILLTEST) pressure $(SKILLTEST_ARGS)

skilltest-scenarios:      # tests/scenarios: the claude CLI at work, with and without the skill
\t$(SKILLTEST) scenarios $(SKILLTEST_ARGS)

skilltest-triggers:       # tests/triggers: does the description make the skill fire?
\t$(SKILLTEST) triggers $(SKILLTEST_ARGS)

skilltest-validate:       # the suites' format, and the TODOs left to fill in
\t$(SKILLTEST) validate

skilltest-lint:           # what the skills ship: front matter, links, scripts
\t$(SKILLTEST) lint $(SKILLTEST_ARGS)
"""


def render_scaffold(
    target: Target, answers: Mapping[str, Answers] | None = None
) -> list[GeneratedFile]:
    """Every file ``skilltest init`` writes for ``target``.

    Args:
        target: The skill or plugin.
        answers: Per skill name, what its author answered (on a terminal).

    Raises:
        InputError: a description that no request can tell apart from its neighbours'.
    """
    answers = answers or {}
    plans = [_plan(target, unit, answers.get(unit.skill.name, Answers())) for unit in target.skills]
    files: list[GeneratedFile] = []
    for plan in plans:
        files += [_pressure_suite(target, plan), _pressure_script(target, plan)]
    if target.plugin is not None:
        files += [
            _scenario_suite(target, plans, target.plugin.name),
            _scenario_script(target, plans, target.plugin.name),
        ]
    else:
        files += [
            _scenario_suite(target, plans, plans[0].name),
            _scenario_script(target, plans, plans[0].name),
        ]
    for plan in plans:
        files += [_trigger_suite(target, plan), _trigger_script(plan)]
    files.append(GeneratedFile(MAKEFILE_SNIPPET, _MAKEFILE, shared=True))
    return files
