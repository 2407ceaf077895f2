"""`skilltest validate` refuses what the runs refuse: one scenario id in two files."""

from __future__ import annotations

import pytest

from skilltest.cli import main

SCENARIOS = (
    "skill: demo\nscenarios:\n  - {id: spike, prompt: p, expected: {required_tools: [Bash]}}\n"
)
PRESSURE = (
    "skill: demo\nscenarios:\n  - {id: spike, prompt: p, with_skill: {required_patterns: [x]}}\n"
)


@pytest.mark.parametrize(
    ("layer", "body"),
    [("scenarios", SCENARIOS), ("pressure", PRESSURE)],
    ids=["scenarios", "pressure"],
)
def test_the_same_scenario_id_in_two_files_is_invalid(project, capsys, layer, body):
    (project / "a.yaml").write_text(body)
    (project / "b.yaml").write_text(body)
    assert main(["validate", "a.yaml", "b.yaml"]) == 2
    out = capsys.readouterr().out
    assert f"ok   a.yaml ({layer})" in out
    assert "FAIL b.yaml" in out
    assert (
        "skilltest: error: b.yaml#/scenarios/0: scenario demo/spike is also defined at "
        "a.yaml#/scenarios/0\n  fix: give one of them another id, or run the suites separately"
    ) in out
    # The run refuses the same files the same way.
    if layer == "scenarios":
        assert main(["scenarios", "a.yaml", "b.yaml", "--claude", "no-claude"]) == 2
        assert "scenario demo/spike is also defined at a.yaml#/scenarios/0" in (
            capsys.readouterr().err
        )


def test_the_same_id_in_a_pressure_suite_and_a_scenario_suite_is_fine(project, capsys):
    (project / "pressure.yaml").write_text(PRESSURE)
    (project / "scenarios.yaml").write_text(SCENARIOS)
    assert main(["validate", "pressure.yaml", "scenarios.yaml"]) == 0
