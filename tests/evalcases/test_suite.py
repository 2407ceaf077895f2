"""An eval folder as a scenario suite: each case a scenario, each grader a check of dialect
plugin_eval, the CLI's indicator rules, the plugin above the eval folder under test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skilltest.errors import InputError
from skilltest.evalcases import names_eval_cases, read_eval_target, suite_document
from skilltest.scenarios.suite import Overrides, load_eval_cases
from skilltest.scenarios.tools import check_scenario_tools, scenario_servers

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "observability"
EVALS = PLUGIN / "evals"


def test_the_example_becomes_one_scenario_per_case():
    document = suite_document(read_eval_target(EVALS))
    assert document["plugin"] == str(PLUGIN) and document["model_script"] == str(
        EVALS / "model-script.yaml"
    )
    assert (document["plugin_mcp"], document["plugin_servers"], document["score_partial"]) == (
        "with",
        "mocked",
        True,
    )
    spike, no_action, slow = document["scenarios"]
    assert spike["id"] == "error-spike" and spike["repetitions"] == 2
    assert (
        spike["config"]["allowed_tools"][-1] == "Write"
        and "Read" in spike["config"]["allowed_tools"]
    )
    assert spike["config"]["timeout_ms"] == 180_000 and spike["mocks"] == [str(EVALS / "mocks")]
    assert spike["checks"] == [
        {
            "judge": {
                "criteria": "The answer names the checkout service and says how many errors it logged.",
                "focus": "last_message",
                "votes": 3,
                "name": "answer-names-service",
                "weight": 1.0,
                "dialect": "plugin_eval",
            }
        },
        # Only a stand-in for the plugin's own server: no mock serves the baseline arm.
        {
            "mock_calls_match": {
                "pattern": '"verdict":"ok"',
                "flags": "",
                "match": "contains",
                "name": "asked-the-server",
                "weight": 1.0,
                "dialect": "plugin_eval",
                "arm": "with",
                "scored": False,
            }
        },
        {
            "trace_matches": {
                "pattern": "COUNT_OVER_TIME\\(",
                "flags": "i",
                "match": "contains",
                "name": "counts-first",
                "weight": 1.0,
                "dialect": "plugin_eval",
            }
        },
        # tool_used on Skill without an arm: the "plugin fired" indicator.
        {
            "tool_used": {
                "tool": "Skill",
                "min": 1,
                "input_match": "log-triage",
                "name": "loads-the-skill",
                "weight": 1.0,
                "dialect": "plugin_eval",
                "arm": "with",
                "scored": False,
            }
        },
        {
            "file_matches": {
                "path": "NOTES.md",
                "pattern": "checkout: \\d+ errors",
                "flags": "",
                "match": "count:1",
                "name": "notes-name-service",
                "weight": 1.0,
                "dialect": "plugin_eval",
            }
        },
        {
            "file_exists": {
                "path": "NOTES.md",
                "exists": True,
                "name": "notes-written",
                "weight": 1.0,
                "dialect": "plugin_eval",
            }
        },
        {
            "tool_used": {
                "tool": "mcp__plugin_observability_telemetry__query_logs",
                "min": 1,
                "input_match": '"since":"1h"',
                "max": 1,
                "name": "one-log-query",
                "weight": 2.0,
                "dialect": "plugin_eval",
            }
        },
    ]
    assert slow["setup"] == str(EVALS / "slow-checkout" / "scaffold.sh")
    assert slow["checks"][3] == {
        "judge": {
            "criteria": "The agent searched the traces with a min_duration filter.",
            "focus": "trace",
            "votes": 3,
            "name": "trace-judged",
            "weight": 0.5,
            "dialect": "plugin_eval",
        }
    }
    assert no_action["config"]["max_turns"] == 3


def copy_of_example(tmp_path: Path) -> Path:
    copy = tmp_path / "observability"
    shutil.copytree(PLUGIN, copy, ignore=shutil.ignore_patterns("output", "results", "__pycache__"))
    return copy


def test_every_grader_an_indicator_means_all_of_them_score_in_both_arms(tmp_path):
    plugin = copy_of_example(tmp_path)
    case = plugin / "evals" / "fired"
    (case / "graders").mkdir(parents=True)
    (case / "prompt.md").write_text("Error spike in checkout.")
    (case / "graders" / "a.md").write_text("---\ntype: tool_used\ntool: Skill\n---\n")
    (case / "graders" / "b.md").write_text("---\ntype: regex\narm: with-only\n---\nx")
    [scenario] = suite_document(read_eval_target(case))["scenarios"]
    assert all(
        "scored" not in spec and "arm" not in spec
        for check in scenario["checks"]
        for spec in check.values()
    )


def test_a_mock_of_its_own_serves_both_arms_so_mock_calls_graders_score(tmp_path):
    plugin = copy_of_example(tmp_path)
    (plugin / "evals" / "mocks" / "weather").mkdir()
    (plugin / "evals" / "mocks" / "weather" / "get_forecast.md").write_text('{"sky": "clear"}')
    spike = suite_document(read_eval_target(plugin / "evals" / "error-spike"))["scenarios"][0]
    [mock_calls] = [c for c in spike["checks"] if "mock_calls_match" in c]
    assert "scored" not in mock_calls["mock_calls_match"]


def test_targets_that_name_eval_cases(tmp_path):
    assert names_eval_cases(EVALS) and names_eval_cases(EVALS / "slow-checkout")
    assert names_eval_cases(EVALS / "slow-checkout" / "case.yaml")
    assert not names_eval_cases(Path("tests/scenarios/lgtm.yaml"))
    assert not names_eval_cases(Path("tests/scenarios"))
    # A plugin stands for its eval folder; a folder with cases deep below it is a folder of suites.
    assert names_eval_cases(PLUGIN) and not names_eval_cases(PLUGIN.parent.parent)
    assert read_eval_target(PLUGIN).root == EVALS
    loose = tmp_path / "loose"
    (loose / "graders").mkdir(parents=True)
    with pytest.raises(InputError) as caught:
        read_eval_target(loose)
    assert "eval cases test a plugin, and no plugin holds this folder" in str(caught.value)
    assert "--plugin-dir" in str(caught.value)


def test_the_scenario_layer_loads_the_cases_as_a_suite_of_the_plugin():
    suite = load_eval_cases(EVALS)
    assert suite.path == EVALS and suite.output_folder == EVALS / "output"
    assert [s.id for s in suite.scenarios] == ["error-spike", "no-action", "slow-checkout"]
    spike = suite.scenarios[0]
    assert spike.skill.name == "observability" and spike.location == str(
        EVALS / "error-spike" / "prompt.md"
    )
    assert spike.plugin is not None and spike.plugin_mcp == "with" and spike.score_partial
    assert [m.name for m in spike.mocks] == ["telemetry"]
    assert spike.repetitions == 2 and spike.config.timeout_s == 180
    assert [c.name for c in spike.expected.checks if not c.scored] == [
        "asked-the-server",
        "loads-the-skill",
    ]
    assert suite.scenarios[2].setup == EVALS / "slow-checkout" / "scaffold.sh"
    assert load_eval_cases(EVALS, overrides=Overrides(repetitions=5)).scenarios[0].repetitions == 5
    # The plugin's real server stays down: a mock stands in for it, and the rubric knows its tools.
    assert scenario_servers(spike) == ()
    assert check_scenario_tools(list(suite.scenarios)) == {}


def test_validate_checks_eval_cases_as_a_run_loads_them(tmp_path, capsys):
    from skilltest.cli import main

    assert main(["validate", str(EVALS)]) == 0
    assert capsys.readouterr().out == f"ok   {EVALS} (eval cases: 3)\n\n1 file(s) valid\n"
    plugin = copy_of_example(tmp_path)
    (plugin / "evals" / "no-action" / "case.yaml").write_text('schema_version: "3.0"\n')
    assert main(["validate", str(plugin / "evals")]) == 2
    out = capsys.readouterr().out
    assert f"FAIL {plugin / 'evals'}\n" in out
    assert (
        f"skilltest: error: {plugin / 'evals' / 'no-action' / 'case.yaml'}#/schema_version: "
        'schema_version "3.0" requires a newer Claude Code (this binary supports up to 1.x)'
    ) in out
