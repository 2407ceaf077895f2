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
            record(W, 0, 1.0, skills=("lgtm",)),
            record(W, 1, 0.9, skills=("lgtm",)),
            record(W, 2, 1.0, skills=("lgtm",)),
            record(W, 3, 0.9, skills=("lgtm",)),
            record(WO, 0, 0.0),
            record(WO, 1, None, error="model API error: 529 (HTTP 529)"),
            record(WO, 2, 0.0),
            record(WO, 3, 0.0),
        ],
        comparison=True,
        expected_skills=("lgtm",),
    )
    errored = judge(
        "broken", "lgtm", [record(W, 0, None, error="model API error: 529")], comparison=False
    )
    undecided = judge(
        "slow",
        "lgtm",
        [record(W, 0, 0.9), record(W, 1, 0.9), record(WO, 0, 0.6), record(WO, 1, 0.6)],
        comparison=True,
    )
    return [improved, errored, undecided]


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
        4,
        "scenarios",
        "2.1.328",
    )
    assert data["summary"] == {
        "scenarios": 3,
        "passed": 1,
        "failed": 0,
        "inconclusive": 1,
        "errors": 1,
        "runs": 13,
        "unscored_runs": 2,
    }
    spike = data["scenarios"][0]
    assert {key: spike[key] for key in ("id", "skill", "verdict", "passed", "delta")} == {
        "id": "spike",
        "skill": "lgtm",
        "verdict": "improved",
        "passed": True,
        "delta": pytest.approx(0.95),
    }
    assert spike["result"] == "pass"
    # The verdict reads the pass rates (4/4 against 0/3, exact); the mean delta is beside it.
    assert (spike["decide_by"], spike["pass_delta"]) == ("pass", 1.0)
    assert spike["method"] == "pass rates, exact unconditional interval (Chan & Zhang 1999)"
    assert spike["pass_delta_ci"] == [pytest.approx(0.1687, abs=1e-4), 1.0]
    assert spike["delta_ci"] == [pytest.approx(-0.0431, abs=1e-4), pytest.approx(0.9998, abs=1e-4)]
    assert (spike["confidence"], spike["k"], spike["runs_to_decide"]) == (0.95, 4, None)
    with_skill = spike["with_skill"]
    assert (with_skill["runs"], with_skill["scored"], with_skill["unscored"]) == (4, 4, 0)
    assert with_skill["mean_score"] == pytest.approx(0.95)
    assert with_skill["scores"] == [1.0, 0.9, 1.0, 0.9]
    assert with_skill["ci_low"] < 0.95 < with_skill["ci_high"]
    assert (with_skill["passes"], with_skill["pass_rate"]) == (4, 1.0)
    assert with_skill["pass_rate_ci"] == [pytest.approx(0.3976, abs=1e-4), 1.0]
    assert spike["without_skill"]["errors"] == ["model API error: 529 (HTTP 529)"]
    assert spike["without_skill"]["unscored"] == 1
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
        "required_tools": 1.0,
        "required_patterns": None,
        "anti_patterns": 1.0,
        "tool_ordering": None,
        "recommended_tools": None,
        "checks": None,
    }
    assert [(r["arm"], r["rep"]) for r in spike["runs"]][:4] == [
        ("with_skill", 0),
        ("without_skill", 0),
        ("with_skill", 1),
        ("without_skill", 1),
    ]
    broken = data["scenarios"][1]
    assert (broken["verdict"], broken["without_skill"], broken["delta_ci"]) == ("error", None, None)
    slow = data["scenarios"][2]
    # Both arms pass every run: runs like these show no difference, and are neutral (within
    # +-0.05) from 75 runs per arm; the projection's steps after 20 (30, 45, 67, 100) reach 100.
    assert (slow["verdict"], slow["result"], slow["runs_to_decide"]) == (
        "inconclusive",
        "inconclusive",
        100,
    )
    assert data["family"]["method"] == "holm" and data["family"]["decisions"]
    assert [(d["id"], d["held"]) for d in data["family"]["decisions"]] == [
        (s["id"], True) for s in data["scenarios"] if s["verdict"] in ("improved", "regressed")
    ]


def test_results_from_another_layer_or_version_are_refused(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"schema_version": 1, "layer": "pressure"}')
    with pytest.raises(InputError, match="not a scenarios results file"):
        read_results(path, "scenarios")
    path.write_text('{"schema_version": 99, "layer": "scenarios"}')
    with pytest.raises(InputError, match="schema_version 99 is not 3"):
        read_results(path, "scenarios")


def test_junit_fails_failing_scenarios_and_errors_errored_ones(verdicts):
    root = ET.fromstring(render_junit("skilltest scenarios", junit_cases(verdicts)))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    allowed = ET.fromstring(render_junit("s", junit_cases(verdicts, allow_inconclusive=True))).find(
        "testsuite"
    )
    assert allowed is not None and allowed.get("failures") == "0"
    broken = next(c for c in root.iter("testcase") if c.get("name") == "broken")
    error = broken.find("error")
    assert error is not None and "model API error: 529" in (error.text or "")


def test_table_row_per_scenario(verdicts):
    lines = render_table(verdicts).splitlines()
    spike = next(line for line in lines if line.startswith("lgtm/spike"))
    assert spike.split()[:6] == ["lgtm/spike", "improved", "4/4", "|", "0/3", "+1.00"]
    assert "+1.00 [+0.17, +1.00]*" in spike  # the pass delta, which the verdict read
    assert "0.95 [0.32, 1.00]" in spike
    assert "(1/4 unscored)" in spike
    assert "+0.95 [-0.04, +1.00]" in spike
    assert "4/4 | 0/3" in spike  # the skill fired in every with-skill run, never without
    assert "4/4 | 4/4" in spike
    assert "PASS" in spike
    broken = next(line for line in lines if line.startswith("lgtm/broken"))
    assert "error" in broken and "FAIL" in broken
    assert "with-skill: only 0 of 1 runs scored, fewer than half" in broken
    slow = next(line for line in lines if line.startswith("lgtm/slow"))
    assert "inconclusive" in slow and "INCONCLUSIVE" in slow


def test_unscored_and_cut_short_runs_are_listed_under_the_table(verdicts):
    from skilltest.scenarios.report import render_unscored

    text = render_unscored(verdicts)
    assert text.splitlines() == [
        "runs unscored or cut short:",
        "  unscored  lgtm/spike without-skill #2: model API error: 529 (HTTP 529)",
        "  unscored  lgtm/broken with-skill #1: model API error: 529",
    ]
