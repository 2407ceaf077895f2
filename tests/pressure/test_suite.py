"""Loading pressure suites: the examples load, and every kind of bad input names file and place."""

from pathlib import Path

import pytest

from skilltest.errors import PatternError, SkillNotFoundError, SuiteError
from skilltest.pressure.suite import Overrides, load_pressure_suite
from skilltest.suite.loader import discover_suites
from tests.projects import make_repository

from ..conftest import REPO_ROOT

SKILL = "---\nname: demo\ndescription: A demo skill.\n---\nAlways aggregate first.\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    (tmp_path / "suites").mkdir()
    return make_repository(tmp_path)  # the suites' repository: the skills lie in it


def write(workspace: Path, text: str) -> Path:
    path = workspace / "suites" / "demo.yaml"
    path.write_text(text)
    return path


GOOD = """\
skill: demo
repetitions: 2
scenarios:
  - id: one
    prompt: "How?"
    without_skill: {expected_patterns: ["grep"]}
    with_skill: {required_patterns: ["(?i)aggregat"], anti_patterns: ["rm -rf"]}
  - id: two
    prompt: "Why?"
    repetitions: 5
    threshold: 0.5
    with_skill: {anti_patterns: ["(?i)never"]}
"""


def test_example_suites_load():
    for path in sorted((REPO_ROOT / "tests" / "skill-pressure").glob("*.yaml")):
        suite = load_pressure_suite(path)
        assert suite.scenarios, path
        assert suite.skill.skill_file.is_file()
        assert suite.model_script is not None and suite.model_script.is_file()


def test_suite_is_typed_with_options_resolved(workspace):
    suite = load_pressure_suite(write(workspace, GOOD))
    one, two = suite.scenarios
    assert suite.skill.name == "demo"
    assert suite.skill.description == "A demo skill."
    assert "Always aggregate first." in suite.skill.text
    assert (one.repetitions, two.repetitions) == (2, 5)
    assert (one.threshold, two.threshold) == (0.8, 0.5)
    assert [p.source for p in one.required_patterns] == ["(?i)aggregat"]
    assert [p.source for p in one.expected_patterns] == ["grep"]
    assert one.location.endswith("demo.yaml#/scenarios/0")


def test_command_line_overrides_win(workspace):
    suite = load_pressure_suite(
        write(workspace, GOOD), overrides=Overrides(repetitions=7, model="m", threshold=1.0)
    )
    assert {s.repetitions for s in suite.scenarios} == {7}
    assert {s.model for s in suite.scenarios} == {"m"}
    assert {s.threshold for s in suite.scenarios} == {1.0}


def test_public_harness_suite_runs_unchanged(workspace):
    # The shape of public skill-pressure suites: skill_file relative to the repository root,
    # `name`, empty anti_patterns.
    (workspace / "tests" / "skill-pressure" / "scenarios").mkdir(parents=True)
    path = workspace / "tests" / "skill-pressure" / "scenarios" / "demo.yml"
    path.write_text(
        "skill: demo\nskill_file: skills/demo/SKILL.md\n\nscenarios:\n"
        '  - id: aggregation-before-raw-fetch\n    name: "Prefer aggregations"\n'
        '    prompt: "How?"\n    without_skill:\n      expected_patterns:\n'
        '        - "(?i)\\\\b(grep|search)\\\\b"\n    with_skill:\n      required_patterns:\n'
        '        - "(?i)count_over_time|aggregat"\n      anti_patterns: []\n'
    )
    suite = load_pressure_suite(path)
    assert suite.skill.skill_file == workspace / "skills" / "demo" / "SKILL.md"
    assert suite.scenarios[0].name == "Prefer aggregations"


BAD = [
    (
        "yaml-syntax",
        "skill: demo\nscenarios:\n  - id: x\n    prompt: [unclosed\n",
        SuiteError,
        "demo.yaml:5:1: YAML syntax error:",
    ),
    (
        "missing-prompt",
        "skill: demo\nscenarios:\n  - id: x\n    with_skill: {required_patterns: [a]}\n",
        SuiteError,
        "demo.yaml#/scenarios/0: 'prompt' is a required property",
    ),
    (
        "patterns-not-a-list",
        "skill: demo\nscenarios:\n  - id: x\n    prompt: p\n"
        "    with_skill: {required_patterns: aggregat}\n",
        SuiteError,
        "demo.yaml#/scenarios/0/with_skill/required_patterns: 'aggregat' is not valid here",
    ),
    (
        "no-pattern-at-all",
        "skill: demo\nscenarios:\n  - id: x\n    prompt: p\n"
        "    with_skill: {required_patterns: [], anti_patterns: []}\n",
        SuiteError,
        "demo.yaml#/scenarios/0/with_skill:",
    ),
    (
        "unknown-key",
        "skill: demo\nscenarios:\n  - id: x\n    promt: p\n    prompt: p\n"
        "    with_skill: {required_patterns: [a]}\n",
        SuiteError,
        "demo.yaml#/scenarios/0: Additional properties are not allowed ('promt' was unexpected; did you mean 'prompt'?)",
    ),
    (
        "duplicate-id",
        "skill: demo\nscenarios:\n  - id: x\n    prompt: p\n    with_skill: {required_patterns: [a]}\n"
        "  - id: x\n    prompt: q\n    with_skill: {required_patterns: [b]}\n",
        SuiteError,
        "demo.yaml#/scenarios/1/id: duplicate scenario id 'x' (first used at /scenarios/0)",
    ),
    (
        "repetitions-zero",
        "skill: demo\nrepetitions: 0\nscenarios:\n  - id: x\n    prompt: p\n"
        "    with_skill: {required_patterns: [a]}\n",
        SuiteError,
        "demo.yaml#/repetitions: 0 is less than the minimum of 1",
    ),
    (
        "unknown-skill",
        "skill: nope\nscenarios:\n  - id: x\n    prompt: p\n    with_skill: {required_patterns: [a]}\n",
        SkillNotFoundError,
        "demo.yaml#/skill: skill 'nope' not found; looked at:",
    ),
    (
        "invalid-regex",
        "skill: demo\nscenarios:\n  - id: x\n    prompt: p\n    with_skill: {required_patterns: ['(abc']}\n",
        PatternError,
        "demo.yaml#/scenarios/0/with_skill/required_patterns/0: invalid regular expression '(abc'",
    ),
    (
        "catastrophic-regex",
        "skill: demo\nscenarios:\n  - id: x\n    prompt: p\n    with_skill: {anti_patterns: ['(a+)+$']}\n",
        PatternError,
        "demo.yaml#/scenarios/0/with_skill/anti_patterns/0: pattern '(a+)+$' took longer than 1s",
    ),
    (
        "unknown-flag",
        "skill: demo\nscenarios:\n  - id: x\n    prompt: p\n    pattern_flags: [LOUD]\n"
        "    with_skill: {required_patterns: [a]}\n",
        SuiteError,
        "demo.yaml#/scenarios/0/pattern_flags/0:",
    ),
    (
        "no-skill",
        "scenarios:\n  - id: x\n    prompt: p\n    with_skill: {required_patterns: [a]}\n",
        SuiteError,
        "demo.yaml#: the suite names no skill",
    ),
    (
        "repetitions-above-the-bound",
        "skill: demo\nrepetitions: 1001\nscenarios:\n  - id: x\n    prompt: p\n"
        "    with_skill: {required_patterns: [a]}\n",
        SuiteError,
        "demo.yaml#/repetitions: 1001 is greater than the maximum of 1000\n"
        "  fix: expected an integer from 1 to 1000: how many times each arm runs",
    ),
    (
        "repetitions-above-the-bound-in-a-scenario",
        "skill: demo\nscenarios:\n  - id: x\n    prompt: p\n    repetitions: 1000000000\n"
        "    with_skill: {required_patterns: [a]}\n",
        SuiteError,
        "demo.yaml#/scenarios/0/repetitions: 1000000000 is greater than the maximum of 1000",
    ),
    (
        "duplicate-key",
        "skill: demo\nscenarios:\n  - id: x\n    prompt: p\n    with_skill: {required_patterns: [a]}\n"
        "    prompt: q\n",
        SuiteError,
        "demo.yaml:6:5: duplicate key 'prompt' (first at line 4)\n"
        "  fix: keep one of the two; YAML would silently use only the last",
    ),
    (
        "missing-skill-file",
        "skill: demo\nskill_file: skills/nope/SKILL.md\nscenarios:\n  - id: x\n    prompt: p\n"
        "    with_skill: {required_patterns: [a]}\n",
        SkillNotFoundError,
        "demo.yaml#/skill_file: skill 'demo' not found; looked at:",
    ),
]


@pytest.mark.parametrize(
    ("text", "error", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_suites_name_file_place_and_fix(workspace, text, error, message):
    with pytest.raises(error) as caught:
        load_pressure_suite(write(workspace, text))
    shown = str(caught.value)
    assert message in shown
    assert "fix:" in shown


def test_missing_suite_file_is_named(workspace):
    with pytest.raises(SuiteError, match=r"nothere\.yaml: file not found"):
        load_pressure_suite(workspace / "nothere.yaml")


def test_discover_finds_yaml_in_folders_recursively(workspace):
    write(workspace, GOOD)
    (workspace / "suites" / "nested").mkdir()
    (workspace / "suites" / "nested" / "more.yml").write_text(GOOD)
    found = discover_suites([workspace / "suites"], workspace / "unused", example="x.yaml")
    assert [p.name for p in found] == ["demo.yaml", "more.yml"]
    with pytest.raises(SuiteError, match="no such file or folder"):
        discover_suites([workspace / "missing"], workspace, example="x.yaml")


@pytest.mark.parametrize(("value", "shown"), [(".nan", "nan"), (".inf", "inf"), ("-.inf", "-inf")])
def test_non_finite_numbers_are_refused(workspace, value, shown):
    text = GOOD.replace("repetitions: 2\n", f"repetitions: 2\nthreshold: {value}\n")
    with pytest.raises(SuiteError) as caught:
        load_pressure_suite(write(workspace, text))
    assert f"demo.yaml#/threshold: {shown} is not a number" in str(caught.value)


def test_a_suite_named_twice_runs_once(workspace):
    path = write(workspace, GOOD)
    found = discover_suites([workspace / "suites", path], workspace, example="x.yaml")
    assert found == [path]


def test_skill_file_alone_names_the_skill_by_its_folder(workspace):
    # The rule of scenario suites too: public suites name only the file.
    path = write(
        workspace,
        "skill_file: skills/demo/SKILL.md\nscenarios:\n  - id: x\n    prompt: p\n"
        "    with_skill: {required_patterns: [a]}\n",
    )
    suite = load_pressure_suite(path)
    assert suite.skill.name == "demo"
    assert suite.skill.skill_file == workspace / "skills" / "demo" / "SKILL.md"
