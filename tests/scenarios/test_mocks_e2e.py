"""A scenario suite with a mocks/ folder beside it: MCP tools mocked in Claude Code's plugin eval
format, with no server of its own, through the real claude CLI against the emulator."""

from __future__ import annotations

import pytest

from skilltest.report.files import read_results

from ..layers import run_layer

pytestmark = pytest.mark.cli

SKILL = """\
---
name: forecaster
description: Use when the user asks about the weather.
---
Ask get_forecast for the city, in metric units.
"""

SUITE = """\
skill: forecaster
model_script: model.yaml
repetitions: 1
comparison: false
scenarios:
  - id: rain-in-lyon
    prompt: "Will it rain in Lyon tomorrow?"
    expected:
      required_tools: [get_forecast]
      text_patterns: ["(?i)rain"]
    checks:
      - mock_calls_match: {pattern: '"city":"Lyon"'}
"""

SCRIPT = """\
schema_version: 1
rules:
  - id: ask
    when: {user: "(?i)rain in lyon", turn: 1}
    reply:
      tool_calls:
        - {name: mcp__weather__get_forecast, input: {city: Lyon, units: metric}}
  - id: answer
    when: {user: "(?i)rain in lyon", tool_result: "rain"}
    reply: {text: "Yes: rain in Lyon tomorrow."}
"""


def test_a_mocks_folder_beside_the_suite_serves_its_tools(tmp_path, claude_bin):
    (tmp_path / "skills" / "forecaster").mkdir(parents=True)
    (tmp_path / "skills" / "forecaster" / "SKILL.md").write_text(SKILL)
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "model.yaml").write_text(SCRIPT)
    (tmp_path / "mocks" / "weather").mkdir(parents=True)
    (tmp_path / "mocks" / "weather" / "get_forecast.md").write_text(
        "---\nexpect: {units: metric}\n---\n"
        '{"city": "{{input.city}}", "tomorrow": "rain", "mm": 4}\n'
    )
    runs_folder = tmp_path / "runs"
    runs_folder.mkdir()
    code = run_layer(
        "scenarios",
        tmp_path / "suite.yaml",
        runs_folder,
        "--claude",
        claude_bin,
        "--allow-inconclusive",
    )
    assert code == 0
    [scenario] = read_results(runs_folder / "results.json", "scenarios")["scenarios"]
    [run] = scenario["runs"]
    assert run["score"] == 1.0
    [call] = run["tool_calls"]
    assert (call["name"], call["status"]) == ("mcp__weather__get_forecast", "ran")
    [check] = run["checks"]
    assert check["passed"] and '"city":"Lyon"' in check["evidence"]
    assert [server for server in run["loaded"]["mcp_servers"] if "weather" in server]
