"""A whole plugin under test through the real claude CLI against the emulator.

The fixture plugin (tests/fixtures/plugins/observability) has two skills, a stdio MCP server
written with the mcp SDK (``telemetry``) and hooks. The with-skill arm loads the plugin; both arms
get its MCP server (``plugin_mcp: both``), so the comparison measures the skills, not the tools.
"""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results
from skilltest.transcript.stream_json import load_transcript
from tests.layers import run_layer

from ..conftest import REPO_ROOT

pytestmark = pytest.mark.cli

PLUGIN = REPO_ROOT / "tests" / "fixtures" / "plugins" / "observability"
TOOL = "mcp__plugin_observability_telemetry__query_logs"

SCRIPT = f"""\
schema_version: 1
rules:
  - id: load-skill
    when: {{skill: log-triage, turn: 1}}
    reply:
      tool_calls: [{{name: Skill, input: {{skill: "observability:log-triage"}}}}]
  - id: aggregate
    when: {{skill_loaded: log-triage, turn: 2}}
    reply:
      tool_calls:
        - name: {TOOL}
          input: {{query: 'sum by (level) (count_over_time({{service_name="checkout"}} |= "error" [5m]))', since: 1h}}
  - id: raw
    when: {{turn: 1}}
    reply:
      tool_calls:
        - name: {TOOL}
          input: {{query: '{{service_name="checkout"}}', since: 1h}}
  - id: done
    when: {{tool_result: "."}}
    reply: {{text: "The spike is 1342 errors in checkout."}}
default: {{text: "No idea."}}
"""

SUITE = """\
plugin: {plugin}
model_script: model.yaml
repetitions: 2
{extra}
scenarios:
  - id: error-spike
    prompt: "Error spike in checkout. Investigate with the telemetry server."
    expected:
      required_tools: [query_logs]
      required_patterns: ["count_over_time"]
    expected_skills: [log-triage]
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    # The plugin's server starts as `python3`: the one with the mcp package comes first.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    (tmp_path / "model.yaml").write_text(SCRIPT)
    # The suite's plugin lies in its repository, as everything a suite names must.
    shutil.copytree(PLUGIN, tmp_path / "observability")
    return tmp_path


def write_suite(project: Path, extra: str = "") -> Path:
    path = project / "suite.yaml"
    path.write_text(SUITE.format(plugin="observability", extra=extra))
    return path


def requests_text(path: str) -> str:
    return json.dumps(json.loads(Path(path).read_text()))


def test_the_with_skill_arm_loads_the_plugin_and_both_arms_get_its_server(
    project, claude_bin, capsys
):
    suite = write_suite(project)
    results = project / "results.json"
    code = run_layer("scenarios", suite, project, "--claude", claude_bin, "--allow-inconclusive")
    out = capsys.readouterr().out
    assert code == 0, out
    (scenario,) = read_results(results, "scenarios")["scenarios"]
    assert scenario["skill"] == "suite"  # it names no skill: its file names it
    loaded = scenario["loaded"]
    assert loaded["with_skill"]["plugins"] == ["observability"]
    assert "observability:log-triage" in loaded["with_skill"]["skills"]
    assert "observability:trace-latency" in loaded["with_skill"]["skills"]
    assert loaded["without_skill"]["plugins"] == []
    assert loaded["without_skill"]["skills"] == ["doctor"]
    server = "plugin_observability_telemetry (connected)"
    assert loaded["with_skill"]["mcp_servers"] == loaded["without_skill"]["mcp_servers"] == [server]
    assert scenario["warnings"] == []

    runs = {(run["arm"], run["rep"]): run for run in scenario["runs"]}
    with_run, without_run = runs[("with_skill", 0)], runs[("without_skill", 0)]
    # Both arms called the server's tool for real and got its fixed answer.
    for run in (with_run, without_run):
        call = next(c for c in load_transcript(run["transcript"]).tool_calls if c.name == TOOL)
        assert call.is_error is False
        answer = json.loads(json.loads(call.result or "{}")["result"])  # the server's own JSON
        assert answer["result"][0] == {"level": "error", "service_name": "checkout", "count": 1342}
    assert with_run["skills_invoked"] == ["observability:log-triage"]
    assert (with_run["score"], without_run["score"]) == (1.0, pytest.approx(0.3 / 0.55))
    # The plugin's SessionStart hook ran in the with-skill arm only: its output reached the
    # model there, never in the baseline.
    assert "observability SessionStart" in requests_text(
        with_run["transcript"][:-7] + ".requests.json"
    )
    assert "observability SessionStart" not in requests_text(
        without_run["transcript"][:-7] + ".requests.json"
    )


def test_plugin_mcp_with_keeps_the_server_from_the_baseline(project, claude_bin, capsys):
    suite = write_suite(project, extra="plugin_mcp: with")
    results = project / "results.json"
    run_layer(
        "scenarios", suite, project, "--claude", claude_bin, "-k", "1", "--allow-inconclusive"
    )
    (scenario,) = read_results(results, "scenarios")["scenarios"]
    assert scenario["loaded"]["without_skill"]["mcp_servers"] == []
    without_run = next(r for r in scenario["runs"] if r["arm"] == "without_skill")
    call = next(c for c in without_run["tool_calls"] if c["name"] == TOOL)
    assert call["is_error"] is True  # no such tool without the server


def test_a_server_that_does_not_start_stops_the_suite_with_its_stderr(project, claude_bin, capsys):
    (project / "broken.py").write_text("import sys\nsys.exit('telemetry: no config file')\n")
    suite = project / "suite.yaml"
    suite.write_text(
        SUITE.format(plugin="observability", extra="").replace(
            "repetitions: 2",
            f"repetitions: 1\nconfig:\n  mcp_servers:\n    broken: {{command: {sys.executable}, "
            "args: [broken.py]}",
        )
    )
    assert main(["scenarios", str(suite), "--claude", str(claude_bin)]) == 2
    err = capsys.readouterr().err
    assert "broken" in err
    assert "telemetry: no config file" in err
    assert "Traceback" not in err


def test_a_rubric_tool_no_server_provides_is_refused_before_any_run(project, claude_bin, capsys):
    suite = write_suite(project)
    suite.write_text(suite.read_text().replace("[query_logs]", "[query_log]"))
    assert main(["scenarios", str(suite), "--claude", str(claude_bin)]) == 2
    err = capsys.readouterr().err
    assert "suite.yaml#/scenarios/0/expected/required_tools" in err
    assert "names tool 'query_log', which neither Claude Code nor an MCP server" in err
    assert "mcp__plugin_observability_telemetry__query_logs" in err
    # validate says the same without running a model.
    assert main(["validate", str(suite)]) == 2
    assert "names tool 'query_log'" in capsys.readouterr().out
