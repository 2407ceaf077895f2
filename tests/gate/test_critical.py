"""`critical: true` on scenarios: read from the scenario or the suite, written to results files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from skilltest.cli import main
from skilltest.pressure.suite import load_pressure_suite
from skilltest.report.files import read_results
from skilltest.scenarios.report import scenario_dict
from skilltest.scenarios.suite import load_scenario_suite
from skilltest.scenarios.verdict import judge
from tests.projects import demo_script, write_demo_project

SKILL = "---\nname: demo\ndescription: A demo skill.\n---\nDEMO SKILL: aggregate first.\n"

PRESSURE = """\
skill: demo
critical: true
model_script: model.yaml
repetitions: 11
scenarios:
  - id: inherits
    prompt: "Error spike. How?"
    with_skill: {required_patterns: ["(?i)aggregate"]}
  - id: opts-out
    critical: false
    prompt: "Error spike again. How?"
    with_skill: {required_patterns: ["(?i)aggregate"]}
"""

SCENARIOS = """\
skill: demo
scenarios:
  - id: plain
    prompt: "Investigate."
    expected: {required_tools: [Bash]}
  - id: marked
    critical: true
    prompt: "Investigate again."
    expected: {required_tools: [Bash]}
"""


def workspace(tmp_path: Path) -> Path:
    """The demo project with the pressure suite (demo.yaml) and a scenarios suite beside it."""
    write_demo_project(tmp_path, PRESSURE, demo_script("I would aggregate first."), skill=SKILL)
    (tmp_path / "scenarios.yaml").write_text(SCENARIOS)
    return tmp_path


def test_pressure_critical_is_the_suite_default_a_scenario_may_override(tmp_path):
    suite = load_pressure_suite(workspace(tmp_path) / "demo.yaml")
    assert [(s.id, s.critical) for s in suite.scenarios] == [
        ("inherits", True),
        ("opts-out", False),
    ]


def test_scenario_critical_defaults_to_false(tmp_path):
    suite = load_scenario_suite(workspace(tmp_path) / "scenarios.yaml")
    assert [(s.id, s.critical) for s in suite.scenarios] == [("plain", False), ("marked", True)]


def test_pressure_results_file_carries_critical(tmp_path, capsys):
    folder = workspace(tmp_path)
    results = tmp_path / "results.json"
    code = main(["pressure", str(folder / "demo.yaml"), "--results", str(results)])
    capsys.readouterr()
    assert code == 0
    scenarios = read_results(results, "pressure")["scenarios"]
    assert {s["id"]: s["critical"] for s in scenarios} == {"inherits": True, "opts-out": False}


def test_scenario_results_carry_critical():
    verdict = judge("marked", "demo", [], comparison=True, skip="not today")
    assert scenario_dict(verdict)["critical"] is False
    assert scenario_dict(replace(verdict, critical=True))["critical"] is True


def test_scenario_results_file_carries_critical(tmp_path, fake_claude, capsys, monkeypatch):
    workspace(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-only-not-a-key")
    results = tmp_path / "results.json"
    main(
        [
            "scenarios",
            str(tmp_path / "scenarios.yaml"),
            "--claude",
            str(fake_claude),
            "-k",
            "1",
            "--results",
            str(results),
        ]
    )
    capsys.readouterr()
    scenarios = read_results(results, "scenarios")["scenarios"]
    assert {s["id"]: s["critical"] for s in scenarios} == {"plain": False, "marked": True}
