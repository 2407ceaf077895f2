"""Reports: the results file reads back, JUnit marks failures and errors, the table shows figures."""

import json
import xml.etree.ElementTree as ET

import pytest

from skilltest.errors import InputError
from skilltest.report.files import read_results, write_json_atomic
from skilltest.report.junit import render_junit
from skilltest.scenarios.outcome import Arm, RunRecord
from skilltest.scenarios.report import (
    RunContext,
    junit_cases,
    render_table,
    results_document,
)
from skilltest.scenarios.verdict import judge

W, WO = Arm.WITH_SKILL, Arm.WITHOUT_SKILL


def record(arm, rep, score, error=None, skills=()):
    return RunRecord(
        scenario_id="spike",
        skill="lgtm",
        arm=arm,
        rep=rep,
        score=score,
        components={"required_tools": score, "anti_patterns": 1.0} if score is not None else {},
        tool_calls=4,
        skills_invoked=skills,
        transcript=f"out/lgtm/spike/{arm.label}-{rep}.ndjson",
        error=error,
        warnings=("a warning",) if rep == 0 else (),
    )


@pytest.fixture
def verdicts():
    improved = judge(
        "spike",
        "lgtm",
        [
            record(W, 0, 0.9, skills=("lgtm",)),
            record(W, 1, 0.7, skills=("lgtm",)),
            record(WO, 0, 0.3),
            record(WO, 1, None, error="timed out after 180s"),
        ],
        comparison=True,
        expected_skills=("lgtm",),
    )
    errored = judge(
        "broken", "lgtm", [record(W, 0, None, error="model API error: 529")], comparison=False
    )
    return [improved, errored]


CONTEXT = RunContext(
    backend="emulator", claude_version="2.1.328", claude_path="/x/claude", suites=("s.yaml",)
)


def test_results_file_has_the_documented_shape_and_reads_back(verdicts, tmp_path):
    document = results_document(verdicts, CONTEXT, complete=True)
    path = tmp_path / "results.json"
    write_json_atomic(path, document)
    data = read_results(path, "scenarios")
    assert data == json.loads(json.dumps(document))
    assert (data["schema_version"], data["layer"], data["claude_version"]) == (
        1,
        "scenarios",
        "2.1.328",
    )
    assert data["summary"] == {"scenarios": 2, "passed": 1, "failed": 0, "errors": 1}
    spike = data["scenarios"][0]
    assert {key: spike[key] for key in ("id", "skill", "verdict", "passed", "delta")} == {
        "id": "spike",
        "skill": "lgtm",
        "verdict": "improved",
        "passed": True,
        "delta": pytest.approx(0.5),
    }
    assert spike["delta_ci"] == [-1.0, 1.0]  # one scored run without the skill: no width
    with_skill = spike["with_skill"]
    assert with_skill["runs"] == 2
    assert with_skill["mean_score"] == pytest.approx(0.8)
    assert with_skill["scores"] == [0.9, 0.7]
    assert with_skill["ci_low"] < 0.8 < with_skill["ci_high"]
    assert spike["without_skill"]["errors"] == ["timed out after 180s"]
    assert spike["warnings"] == ["a warning"]
    run = spike["runs"][0]
    assert set(run) >= {
        "arm",
        "rep",
        "score",
        "components",
        "tool_calls",
        "tool_call_count",
        "skills_invoked",
        "transcript",
        "error",
    }
    assert run["components"] == {
        "required_tools": 0.9,
        "required_patterns": None,
        "anti_patterns": 1.0,
        "tool_ordering": None,
        "recommended_tools": None,
    }
    assert [(r["arm"], r["rep"]) for r in spike["runs"]] == [
        ("with_skill", 0),
        ("without_skill", 0),
        ("with_skill", 1),
        ("without_skill", 1),
    ]
    broken = data["scenarios"][1]
    assert (broken["verdict"], broken["without_skill"], broken["delta_ci"]) == ("error", None, None)


def test_results_from_another_layer_or_version_are_refused(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"schema_version": 1, "layer": "pressure"}')
    with pytest.raises(InputError, match="not a scenarios results file"):
        read_results(path, "scenarios")
    path.write_text('{"schema_version": 99, "layer": "scenarios"}')
    with pytest.raises(InputError, match="schema_version 99 is not 1"):
        read_results(path, "scenarios")


def test_junit_fails_failing_scenarios_and_errors_errored_ones(verdicts):
    root = ET.fromstring(render_junit("skilltest scenarios", junit_cases(verdicts)))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "1")
    broken = next(c for c in root.iter("testcase") if c.get("name") == "broken")
    error = broken.find("error")
    assert error is not None and "model API error: 529" in (error.text or "")


def test_table_row_per_scenario(verdicts):
    lines = render_table(verdicts).splitlines()
    spike = next(line for line in lines if line.startswith("lgtm/spike"))
    assert spike.split()[:6] == ["lgtm/spike", "improved", "0.80", "[0.00,", "1.00]", "0.30"]
    assert "+0.50 [-1.00, +1.00]" in spike
    assert "2/2 | 0/1" in spike  # the skill fired in both with-skill runs, never without
    assert "4/4 | 4/4" in spike
    assert "PASS" in spike
    broken = next(line for line in lines if line.startswith("lgtm/broken"))
    assert "error" in broken and "FAIL" in broken
    assert "with-skill: no scored run (model API error: 529)" in broken
