"""The public pressure format's meanings: ``prompt_suffix`` and ``baseline_red``, end to end
through the real Anthropic SDK and the emulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import SuiteError
from skilltest.pressure.suite import load_pressure_suite
from skilltest.report.files import read_results
from tests.projects import write_demo_project
from tests.refusals import refusal

SUFFIX = "Describe your reasoning and what you would do. Do not call any tools."

SCRIPT = """\
schema_version: 1
rules:
  - id: with-skill
    when: {system: "DEMO SKILL"}
    reply: {text: "Aggregate first with count_over_time."}
  - id: told-not-to-use-tools
    when: {user: "spike\\\\n\\\\nDescribe your reasoning and what you would do\\\\. Do not call any tools\\\\.$"}
    reply: {text: "My reasoning: grep the logs, then count_over_time."}
  - id: dashboard
    when: {user: "(?i)dashboard"}
    reply: {text: "I would look at a dashboard."}
  - id: both
    when: {user: "(?i)both"}
    reply: {text: "grep the logs, then count_over_time."}
default: {text: "I would grep the logs."}
"""


def workspace(tmp_path: Path, suite: str) -> Path:
    return write_demo_project(tmp_path, suite, SCRIPT)


def run(path: Path, tmp_path: Path) -> tuple[int, dict, str]:
    results = tmp_path / "results.json"
    code = main(["pressure", str(path), "--results", str(results)])
    document = read_results(results, "pressure")
    return code, {s["id"]: s for s in document["scenarios"]}, str(results)


SUFFIXED = f"""\
skill: demo
model_script: model.yaml
repetitions: 3
prompt_suffix: "{SUFFIX}"
scenarios:
  - id: suffixed
    prompt: "Error spike. What now? spike"
    with_skill: {{required_patterns: ["count_over_time"]}}
  - id: plain
    prompt: "Error spike. What now? spike"
    prompt_suffix: ""
    with_skill: {{required_patterns: ["count_over_time"]}}
"""


def test_prompt_suffix_is_appended_after_a_blank_line(tmp_path, capsys):
    path = workspace(tmp_path, SUFFIXED)
    suffixed, plain = load_pressure_suite(path).scenarios
    assert suffixed.message == f"Error spike. What now? spike\n\n{SUFFIX}"
    assert plain.message == "Error spike. What now? spike"
    _, scenarios, _ = run(path, tmp_path)
    baseline = [r for r in scenarios["suffixed"]["runs"] if r["arm"] == "without_skill"]
    # The emulator answered the suffixed prompt by its rule: the suffix was sent as written.
    assert {r["output"] for r in baseline} == {"My reasoning: grep the logs, then count_over_time."}
    plain_baseline = [r for r in scenarios["plain"]["runs"] if r["arm"] == "without_skill"]
    assert {r["output"] for r in plain_baseline} == {"I would grep the logs."}


RED_RULES = """\
skill: demo
model_script: model.yaml
repetitions: 11
baseline_red: {rule}
scenarios:
  - id: dashboard
    prompt: "Error spike, dashboard?"
    without_skill: {{expected_patterns: ["grep"]}}
    with_skill: {{required_patterns: ["count_over_time"]}}
  - id: both
    prompt: "Error spike, both?"
    without_skill: {{expected_patterns: ["grep"]}}
    with_skill: {{required_patterns: ["count_over_time"]}}
"""


@pytest.mark.parametrize(
    ("rule", "dashboard", "both"),
    [
        # criteria: RED when the baseline fails the with-skill criteria.
        ("criteria", ("steers", 11), ("not-red", 0)),
        # expected_patterns: RED when the baseline says what expected_patterns describe.
        ("expected_patterns", ("not-red", 0), ("steers", 11)),
    ],
)
def test_baseline_red_decides_which_baseline_runs_are_red(tmp_path, capsys, rule, dashboard, both):
    _, scenarios, _ = run(workspace(tmp_path, RED_RULES.format(rule=rule)), tmp_path)
    for scenario_id, (verdict, red) in (("dashboard", dashboard), ("both", both)):
        scenario = scenarios[scenario_id]
        assert (scenario["verdict"], scenario["without_skill"]["red"]) == (verdict, red)
    out = capsys.readouterr().out
    if rule == "expected_patterns":
        assert "baseline matches expected_patterns in only 0/11 runs without the skill" in out
        assert "demo/dashboard: baseline run 1 does not match expected_patterns" in out
    else:
        assert "baseline already passes in 11/11 runs without the skill" in out


def test_a_scenario_may_keep_the_default_its_suite_changes(tmp_path):
    text = RED_RULES.format(rule="expected_patterns").replace(
        "  - id: both\n", "  - id: both\n    baseline_red: criteria\n"
    )
    dashboard, both = load_pressure_suite(workspace(tmp_path, text)).scenarios
    assert (dashboard.baseline_red, both.baseline_red) == ("expected_patterns", "criteria")


@pytest.mark.parametrize(
    ("head", "scenario_key", "place"),
    [
        ("baseline_red: expected_patterns\n", "", "#/scenarios/0/without_skill"),
        ("", "    baseline_red: expected_patterns\n", "#/scenarios/0/baseline_red"),
    ],
    ids=["suite", "scenario"],
)
def test_red_by_expected_patterns_needs_expected_patterns(tmp_path, head, scenario_key, place):
    path = workspace(
        tmp_path,
        "skill: demo\n"
        + head
        + "scenarios:\n  - id: x\n    prompt: p\n"
        + scenario_key
        + "    with_skill: {required_patterns: [a]}\n",
    )
    assert refusal(load_pressure_suite, path, SuiteError) == (
        f"{path}{place}: baseline_red: expected_patterns needs without_skill.expected_patterns, "
        "the patterns a RED baseline answer matches\n"
        "  fix: add without_skill: {expected_patterns: [...]} to the scenario, or give it "
        "baseline_red: criteria"
    )


def test_an_unknown_red_rule_names_the_two_there_are(tmp_path):
    path = workspace(tmp_path, RED_RULES.format(rule="expected"))
    said = refusal(load_pressure_suite, path, SuiteError)
    assert said.startswith(f"{path}#/baseline_red: 'expected' is not valid here")
    assert "['criteria', 'expected_patterns']" in said
