"""An author without a key edits what `skilltest init` wrote and the run turns red: the run
says whose answer failed (the rule of the model script, its file and line) and that offline
the model says what its script says, on the terminal and in every report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.emulator import EmulatorServer, ModelScript

from .test_init import repo  # noqa: F401  (the fixture)

RULE = (
    "answered by the emulator's rule 'with-flaky-tests' "
    "(tests/model-scripts/flaky-tests.pressure.yaml:8); offline, the model says what its script "
    "says: edit the rule or run with ANTHROPIC_API_KEY set"
)


def edit_required(path: Path, pattern: str) -> None:
    text = path.read_text()
    assert '["(?i)flaky-tests\\\\s+skill"]' in text
    path.write_text(text.replace('["(?i)flaky-tests\\\\s+skill"]', json.dumps([pattern]), 1))


def test_an_edited_pressure_suite_that_fails_offline_names_the_rule_that_answered(
    repo,  # noqa: F811
    capsys,
):
    assert main(["init", "skills/flaky-tests", "--no-input"]) == 0
    script = repo / "tests/model-scripts/flaky-tests.pressure.yaml"
    assert script.read_text().splitlines()[7] == "  - id: with-flaky-tests"
    edit_required(repo / "tests/skill-pressure/flaky-tests.yaml", "(?i)bisect the order")
    capsys.readouterr()
    code = main(
        [
            "pressure",
            "-k",
            "3",
            "--results",
            "out/results.json",
            "--junit",
            "out/junit.xml",
            "--markdown",
            "out/summary.md",
            "--report",
            "out/report.html",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert (
        "flaky-tests/example-request: with-skill run 1 did not pass\n"
        "  missing (?i)bisect the order\n"
        "  answer: Following the flaky-tests skill: Reproduce first.\n"
        f"  {RULE}\n"
    ) in out
    assert (
        f"no-steer: missing (?i)bisect the order in 3/3\n{RULE}"
        in (repo / "out/junit.xml").read_text()
    )
    assert (
        "- **flaky-tests/example-request** (no-steer): missing (?i)bisect the order in 3/3; "
        + RULE.replace("_", "\\_")
    ) in (repo / "out/summary.md").read_text()
    assert RULE.replace("'", "&#x27;") in (repo / "out/report.html").read_text()
    runs = json.loads((repo / "out/results.json").read_text())["scenarios"][0]["runs"]
    assert {(run["arm"], json.dumps(run["emulator_rules"])) for run in runs} == {
        (
            "with_skill",
            '[{"rule": "with-flaky-tests", "script": '
            '"tests/model-scripts/flaky-tests.pressure.yaml", "line": 8}]',
        ),
        (
            "without_skill",
            '[{"rule": null, "script": "tests/model-scripts/flaky-tests.pressure.yaml", '
            '"line": 12}]',
        ),
    }
    # The gate reads the file: the runs' rules are no claim it must find again.
    capsys.readouterr()
    gate = ["gate", "out/results.json", "--allow-offline", "--allow-failing", "example-request"]
    assert main(gate) == 0
    assert "PASS   consistent" in capsys.readouterr().out


def test_the_served_emulator_names_its_rule_to_a_run_against_it(
    repo,  # noqa: F811
    capsys,
    monkeypatch,
):
    assert main(["init", "skills/flaky-tests", "--no-input"]) == 0
    edit_required(repo / "tests/skill-pressure/flaky-tests.yaml", "(?i)bisect the order")
    script = ModelScript.load(Path("tests/model-scripts/flaky-tests.pressure.yaml").absolute())
    with EmulatorServer(script, port=0) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-not-a-real-key")
        capsys.readouterr()
        assert main(["pressure", "-k", "3", "--backend", "anthropic"]) == 1
    assert f"  {RULE}\n" in capsys.readouterr().out


@pytest.mark.cli
def test_edited_scenario_and_trigger_suites_name_the_rules_through_the_real_cli(
    repo,  # noqa: F811
    capsys,
    claude_bin,
):
    assert main(["init", "skills/flaky-tests", "--no-input"]) == 0
    edit_required(repo / "tests/scenarios/flaky-tests.yaml", "(?i)bisect the order")
    capsys.readouterr()
    code = main(["scenarios", "-k", "1", "--claude", str(claude_bin), "--markdown", "s.md"])
    out = capsys.readouterr().out
    assert code == 1
    said = (
        "answered by the emulator's rule 'load-flaky-tests' "
        "(tests/model-scripts/flaky-tests.scenarios.yaml:7), rule 'follow-flaky-tests' "
        "(tests/model-scripts/flaky-tests.scenarios.yaml:12), rule 'done-flaky-tests' "
        "(tests/model-scripts/flaky-tests.scenarios.yaml:20); offline, the model says what its "
        "script says: edit the rule or run with ANTHROPIC_API_KEY set"
    )
    assert f"      {said}\n" in out
    # The CLI prices the stand-in's tokens; the terminal says, as the reports do, that nothing
    # was spent.
    assert (
        "cost per passing run: with-skill no passing run (nothing spent: the emulator charges "
        "nothing; $"
    ) in out
    assert (
        "with skill no passing run (nothing spent: the emulator charges nothing; $"
        in (repo / "s.md").read_text()
    )
    assert said.replace("_", "\\_") in (repo / "s.md").read_text()
    # A query that should fire for a haiku is missed: the rule that did not fire says so.
    triggers = repo / "tests/triggers/flaky-tests.yaml"
    triggers.write_text(
        triggers.read_text().replace(
            'autumn leaves.", should_trigger: false', 'autumn leaves.", should_trigger: true'
        )
    )
    code = main(["triggers", "--claude", str(claude_bin), "--only", "unrelated-2"])
    out = capsys.readouterr().out
    assert code == 1
    assert (
        "    answered by the emulator's default reply "
        "(tests/model-scripts/flaky-tests.triggers.yaml:"
    ) in out
