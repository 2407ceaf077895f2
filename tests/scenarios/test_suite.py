"""Loading scenario suites: the public format loads, and bad input names file, pointer and fix."""

from pathlib import Path

import pytest
import yaml

from skilltest.errors import PatternError, SkillNotFoundError, SuiteError
from skilltest.scenarios.rubric import Weights, score
from skilltest.scenarios.suite import (
    DEFAULT_ALLOWED_TOOLS,
    Overrides,
    load_scenario_suite,
)
from skilltest.suite.loader import discover_suites
from skilltest.transcript import ToolCall, Transcript
from tests.projects import make_repository

SKILL = "---\nname: demo\ndescription: A demo skill.\n---\nAlways aggregate first.\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    for name in ("demo", "other"):
        (tmp_path / "skills" / name).mkdir(parents=True)
        (tmp_path / "skills" / name / "SKILL.md").write_text(SKILL.replace("demo", name))
    (tmp_path / "suites").mkdir()
    return make_repository(tmp_path)  # the suites' repository: the skills lie in it


def write(workspace: Path, text: str, name: str = "demo.yaml") -> Path:
    path = workspace / "suites" / name
    path.write_text(text)
    return path


# The example from the issue, verbatim.
ISSUE_EXAMPLE = """\
skill: demo
scenarios:
  - id: investigate-error-spike
    prompt: "Error spike in checkout. Investigate."
    expected:
      required_tools: [Bash]
      required_patterns: ["lgtm loki"]
      anti_patterns: ["rm -rf"]
      tool_ordering: [[Skill, Bash]]      # each list: tools that must occur in this order
      recommended_tools: [Read]
    expected_skills: [demo]
    config: {max_turns: 8, timeout_ms: 180000}
"""


def test_issue_example_is_typed(workspace):
    suite = load_scenario_suite(write(workspace, ISSUE_EXAMPLE))
    (scenario,) = suite.scenarios
    assert scenario.skill.name == "demo"
    assert scenario.expected.required_tools == ("Bash",)
    assert [p.source for p in scenario.expected.required_patterns] == ["lgtm loki"]
    assert [p.source for p in scenario.expected.anti_patterns] == ["rm -rf"]
    # [Skill, Bash] is an indicator (the skill fired) and "Bash was called", already required.
    assert scenario.expected.tool_ordering == ()
    assert scenario.expected.recommended_tools == ("Read",)
    assert scenario.expected.weights == Weights()
    assert scenario.expected.pattern_scope == "tools"
    assert scenario.expected_skills == scenario.expected.expected_skills == ("demo",)
    assert (scenario.config.max_turns, scenario.config.timeout_s) == (8, 180.0)
    assert scenario.config.allowed_tools == DEFAULT_ALLOWED_TOOLS
    # No K in the suite: adaptive repetitions (-k wins, then repetitions:, then auto).
    assert (scenario.repetitions, scenario.comparison) == (None, True)
    assert (scenario.min_score, scenario.min_delta) == (0.6, -0.05)
    assert scenario.turns == ()
    assert scenario.location.endswith("demo.yaml#/scenarios/0")
    assert suite.model_script is None


PUBLIC_SHAPE = """\
name: core scenarios
comparison: true
skill_file: skills/demo/SKILL.md
scenarios:
  - id: a
    name: "Investigate"
    prompt: "p"
    expected:
      required_tools: [Task]
      required_patterns: ["(?i)lgtm loki"]
      anti_patterns: []
      tool_ordering: []
      recommended_tools: [Skill]
    expected_skills: []
    config: {max_turns: 10, timeout_ms: 240000}
"""


def test_public_harness_suite_loads_with_empty_lists_meaning_not_defined(workspace):
    # No top-level skill (skill_file relative to the repository root), `name`, `comparison`,
    # and empty lists: those components are left out of the score, not scored as 0 or 1.
    suite = load_scenario_suite(write(workspace, PUBLIC_SHAPE))
    (scenario,) = suite.scenarios
    assert suite.name == "core scenarios"
    assert scenario.skill.skill_file == workspace / "skills" / "demo" / "SKILL.md"
    # recommended_tools: [Skill] is not scored: it makes the scenario's skill an expected skill.
    assert scenario.expected.defined == ("required_tools", "required_patterns")
    assert scenario.expected_skills == ("demo",)


def test_skill_comes_from_the_scenario_or_the_command_line(workspace):
    text = """\
scenarios:
  - {id: a, prompt: p, skill: other, expected: {required_tools: [Bash]}}
  - {id: b, prompt: p, expected: {required_tools: [Bash]}}
"""
    suite = load_scenario_suite(write(workspace, text), skill_name="demo")
    assert [s.skill.name for s in suite.scenarios] == ["other", "demo"]
    assert suite.skills == ("other", "demo")


def test_everything_users_need_beyond_the_public_format(workspace):
    (workspace / "scripts").mkdir()
    (workspace / "scripts" / "demo.yaml").write_text("schema_version: 1\n")
    text = """\
skill: demo
model_script: ../scripts/demo.yaml
repetitions: 2
min_score: 0.7
weights: {required_tools: 1, anti_patterns: 0}
config: {max_turns: 4, allowed_tools: [Bash, "Bash(git *)"], model: haiku}
scenarios:
  - id: a
    prompt: first
    turns: [second, third]
    repetitions: 5
    min_delta: 0
    weights: {anti_patterns: 2}
    config: {disallowed_tools: [WebFetch], timeout_ms: 5000}
    expected: {required_tools: [Bash], anti_patterns: ["rm -rf"]}
  - {id: b, prompt: p, comparison: false, skip: "flaky upstream", expected: {required_tools: [X]}}
"""
    suite = load_scenario_suite(write(workspace, text))
    a, b = suite.scenarios
    assert suite.model_script == (workspace / "scripts" / "demo.yaml").resolve()
    assert a.messages == ("first", "second", "third")
    assert (a.repetitions, b.repetitions) == (5, 2)
    assert (a.min_score, a.min_delta, b.min_delta) == (0.7, 0.0, -0.05)
    assert (a.expected.weights.required_tools, a.expected.weights.anti_patterns) == (1.0, 2.0)
    assert a.expected.weights.required_patterns == Weights().required_patterns
    assert a.config.max_turns == 4 and a.config.timeout_s == 5.0
    assert a.config.allowed_tools == ("Bash", "Bash(git *)")
    assert a.config.disallowed_tools == ("WebFetch",)
    assert a.config.model == "haiku"
    assert (a.comparison, b.comparison) == (True, False)
    assert (a.skip, b.skip) == (None, "flaky upstream")


def test_command_line_overrides_win(workspace):
    overrides = Overrides(repetitions=1, min_score=0.9, min_delta=0.2, model="m", skill_only=True)
    suite = load_scenario_suite(write(workspace, ISSUE_EXAMPLE), overrides=overrides)
    (scenario,) = suite.scenarios
    assert (scenario.repetitions, scenario.min_score, scenario.min_delta) == (1, 0.9, 0.2)
    assert scenario.config.model == "m"
    assert scenario.comparison is False


def test_a_zero_threshold_is_kept(workspace):
    text = ISSUE_EXAMPLE.replace("scenarios:", "min_score: 0\nmin_delta: 0\nscenarios:")
    (scenario,) = load_scenario_suite(write(workspace, text)).scenarios
    assert (scenario.min_score, scenario.min_delta) == (0.0, 0.0)


BAD_SUITES = [
    (
        "scenarios: []\nskill: demo\n",
        "#/scenarios: [] should be non-empty\n  fix: expected a non-empty list of scenarios",
    ),
    (
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, expected: {required_tool: [Bash]}}\n",
        "#/scenarios/0/expected: Additional properties are not allowed ('required_tool' was "
        "unexpected; did you mean 'required_tools'?); accepted: required_tools, "
        "required_patterns, text_patterns, anti_patterns, tool_ordering, recommended_tools, "
        "expect_no_action, writes, forbidden, confirm_before_write, final_answer, claims, recovers"
        "\n  fix: expected a mapping "
        "with any of required_tools, required_patterns, text_patterns, anti_patterns, "
        "tool_ordering, recommended_tools, expect_no_action, and in a suite with a world: writes, forbidden, "
        "confirm_before_write, final_answer, claims, recovers",
    ),
    (
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, expected: {tool_ordering: [Skill, Bash]}}\n",
        "#/scenarios/0/expected/tool_ordering/0: 'Skill' is not valid here: 'Skill' is not of "
        "type 'array'\n  also at #/scenarios/0/expected/tool_ordering/1: 'Bash' is not valid "
        "here: 'Bash' is not of type 'array'\n  fix: expected a list of at least two tool names, "
        "e.g. [Glob, Write]",
    ),
    (
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, config: {timeout_ms: 10}}\n",
        "#/scenarios/0/config/timeout_ms: 10 is less than the minimum of 1000\n  fix: expected "
        "an integer >= 1000: milliseconds one run may take before its process group is killed",
    ),
    (
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, turns: hello}\n",
        "#/scenarios/0/turns: 'hello' is not valid here: 'hello' is not of type 'array'\n  fix: "
        "expected a list of follow-up user messages, sent one after another in the same "
        "conversation",
    ),
    (
        "skill: demo\nscenarios:\n  - {id: 'bad id', prompt: p}\n",
        "#/scenarios/0/id: 'bad id' does not match '^[A-Za-z0-9][A-Za-z0-9._-]*$'\n  fix: "
        "expected a unique id: letters, digits, '.', '_' or '-', at most 128 (it names files)",
    ),
    (
        "skill: demo\npattern_scope: prose\nscenarios:\n  - {id: a, prompt: p}\n",
        "#/pattern_scope: 'prose' is not valid here: 'prose' is not one of ['tools', 'text', "
        "'all']\n  fix: expected where "
        "required_patterns and anti_patterns look: tools (the tool calls, default), text (the "
        "assistant's text) or all (both)",
    ),
    (
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, weights: {required_tools: -1}}\n",
        "#/scenarios/0/weights/required_tools: -1 is less than the minimum of 0\n  fix: "
        "expected a number >= 0",
    ),
    (
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, expected: {required_tools: [Bash]}}\n"
        "  - {id: a, prompt: q, expected: {required_tools: [Bash]}}\n",
        "#/scenarios/1/id: duplicate scenario id 'a' (first used at /scenarios/0)\n  fix: give "
        "every scenario in a suite its own id",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD_SUITES)
def test_schema_errors_and_duplicate_ids_name_file_pointer_and_fix(workspace, text, message):
    path = write(workspace, text)
    with pytest.raises(SuiteError) as caught:
        load_scenario_suite(path)
    assert str(caught.value) == f"{path}{message}"


# Refused suites whose messages are checked by the parts that matter here.
REFUSED = [
    pytest.param(
        SuiteError,
        "scenarios:\n  - {id: a, prompt: p}\n",
        ("demo.yaml#/scenarios/0: no skill named for this scenario", "or pass --skill NAME"),
        id="no-skill-anywhere",
    ),
    pytest.param(
        SkillNotFoundError,
        "skill: nope\nscenarios:\n  - {id: a, prompt: p}\n",
        ("skill 'nope' not found",),
        id="unknown-skill",
    ),
    pytest.param(
        PatternError,
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, expected: {anti_patterns: ['(']}}\n",
        ("demo.yaml#/scenarios/0/expected/anti_patterns/0: invalid regular expression",),
        id="bad-pattern-names-its-pointer",
    ),
    pytest.param(
        PatternError,
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, expected: {text_patterns: ['(']}}\n",
        ("demo.yaml#/scenarios/0/expected/text_patterns/0: invalid regular expression",),
        id="bad-text-pattern-names-its-pointer",
    ),
    pytest.param(
        SuiteError,
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, workspace: fixtures/none}\n",
        ("#/scenarios/0/workspace: workspace folder",),
        id="missing-workspace-folder",
    ),
    pytest.param(
        SuiteError,
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, weights: {required_tools: 0},\n"
        "     expected: {required_tools: [Bash]}}\n",
        ("#/scenarios/0/weights: every component the scenario defines weighs 0",),
        id="components-that-all-weigh-zero",
    ),
]


@pytest.mark.parametrize(("error", "text", "parts"), REFUSED)
def test_refused_suites_say_where_and_why(workspace, error, text, parts):
    with pytest.raises(error) as caught:
        load_scenario_suite(write(workspace, text))
    for part in parts:
        assert part in str(caught.value)


def test_discovery_reads_folders_but_not_the_output_folder(workspace):
    write(workspace, ISSUE_EXAMPLE, "a.yaml")
    write(workspace, ISSUE_EXAMPLE, "b.yml")
    (workspace / "suites" / "output" / "demo").mkdir(parents=True)
    (workspace / "suites" / "output" / "demo" / "x.yaml").write_text("not a suite")
    found = discover_suites([workspace / "suites"], workspace, example="x.yaml")
    assert [p.name for p in found] == ["a.yaml", "b.yml"]
    with pytest.raises(SuiteError, match="no such file or folder"):
        discover_suites([workspace / "missing.yaml"], workspace, example="x.yaml")


def test_a_scenario_with_nothing_to_score_is_refused(workspace):
    text = "skill: demo\nscenarios:\n  - {id: a, prompt: p, expected: {required_tools: []}}\n"
    with pytest.raises(SuiteError) as caught:
        load_scenario_suite(write(workspace, text))
    assert str(caught.value).startswith(
        f"{workspace / 'suites' / 'demo.yaml'}#/scenarios/0/expected: the scenario defines no "
        "rubric component, so no run could ever be scored\n  fix: give `expected:`"
    )


SKILL_REQUIREMENTS = """\
skill: demo
scenarios:
  - id: a
    prompt: p
    expected:
      required_tools: [Bash, Skill]
      required_patterns: ["lgtm loki"]
      tool_ordering: [[Skill, Bash], [Skill, Glob], [Skill(other), Read, Write], [Skill, Skill]]
      recommended_tools: ["Skill(other)", Grep]
    expected_skills: [demo, extra]
"""


def test_skill_requirements_become_expected_skills_not_scores(workspace):
    (scenario,) = load_scenario_suite(write(workspace, SKILL_REQUIREMENTS)).scenarios
    expected = scenario.expected
    assert expected.required_tools == ("Bash",)
    assert expected.recommended_tools == ("Grep",)
    # [Skill, Bash]: Bash is already required; [Skill, Glob] still asks that Glob was called;
    # [Skill(other), Read, Write] keeps its order; [Skill, Skill] asked for nothing but skills.
    assert expected.tool_ordering == (("Glob",), ("Read", "Write"))
    assert scenario.expected_skills == ("demo", "extra", "other")


def test_the_skill_invocation_earns_no_points(workspace):
    # What the baseline does, with and without loading the skill first: the same score.
    (scenario,) = load_scenario_suite(write(workspace, SKILL_REQUIREMENTS)).scenarios
    calls = [
        ToolCall(id="1", name="Glob", input={"pattern": "*"}),
        ToolCall(id="2", name="Bash", input={"command": "lgtm loki query x"}),
    ]
    skill = ToolCall(id="0", name="Skill", input={"skill": "demo"})
    without = score(Transcript(source="test", tool_calls=tuple(calls)), scenario.expected)
    with_skill = score(
        Transcript(source="test", tool_calls=(skill, *calls), skills_invoked=("demo",)),
        scenario.expected,
    )
    # (0.30 * 1 + 0.25 * 1 + 0.15 * 1/2 + 0.10 * 0) / 0.80
    assert with_skill.score == without.score == 0.78125
    assert with_skill.skills_fired == {"demo": True, "extra": False, "other": False}
    assert without.skills_fired == {"demo": False, "extra": False, "other": False}


@pytest.mark.parametrize(
    "expected",
    [
        "{required_tools: [Skill]}",
        "{recommended_tools: ['Skill(demo)'], tool_ordering: [[Skill, Skill]]}",
    ],
)
def test_a_scenario_whose_rubric_is_only_skill_requirements_is_refused(workspace, expected):
    text = f"skill: demo\nscenarios:\n  - {{id: a, prompt: p, expected: {expected}}}\n"
    with pytest.raises(SuiteError) as caught:
        load_scenario_suite(write(workspace, text))
    assert str(caught.value) == (
        f"{workspace / 'suites' / 'demo.yaml'}#/scenarios/0/expected: the scenario's only rubric "
        "entries are Skill requirements, which are an indicator (whether the skill fired), not "
        "part of the score: no run could ever be scored\n  fix: add what the agent should do "
        "once the skill is loaded (required_patterns on the commands it runs, required_tools, "
        "anti_patterns, tool_ordering of other tools); keep the skill in expected_skills"
    )


def test_pattern_scope_and_text_patterns(workspace):
    text = """\
skill: demo
pattern_scope: all
scenarios:
  - {id: a, prompt: p, expected: {required_patterns: [x]}}
  - {id: b, prompt: p, pattern_scope: text, expected: {anti_patterns: [y]}}
  - {id: c, prompt: p, expected: {text_patterns: ["(?i)p99"]}}
"""
    a, b, c = load_scenario_suite(write(workspace, text)).scenarios
    assert (a.expected.pattern_scope, b.expected.pattern_scope) == ("all", "text")
    assert c.expected.defined == ("required_patterns",)
    assert [p.source for p in c.expected.text_patterns] == ["(?i)p99"]


def test_pattern_scope_defaults_to_tools(workspace):
    text = "skill: demo\nscenarios:\n  - {id: a, prompt: p, expected: {required_patterns: [x]}}\n"
    (scenario,) = load_scenario_suite(write(workspace, text)).scenarios
    assert scenario.expected.pattern_scope == "tools"


EXAMPLES = Path(__file__).parent


@pytest.mark.parametrize("name", ["lgtm.yaml", "safe-migrations.yaml"])
def test_example_suites_score_behaviour_not_the_skill_call(name):
    raw = yaml.safe_load((EXAMPLES / name).read_text())
    for spec, scenario in zip(
        raw["scenarios"], load_scenario_suite(EXAMPLES / name).scenarios, strict=True
    ):
        expected = spec["expected"]
        tools = [*expected.get("required_tools", []), *expected.get("recommended_tools", [])]
        tools += [tool for chain in expected.get("tool_ordering", []) for tool in chain]
        assert not [tool for tool in tools if tool.startswith("Skill")], scenario.id
        assert scenario.expected_skills == (scenario.skill.name,), scenario.id
