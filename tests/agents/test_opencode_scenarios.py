"""``skilltest scenarios --agent opencode``: the example suite through the real OpenCode CLI
on the emulator, one model script driving it as it drives Claude Code, with per-arm verdicts;
and what only Claude Code runs refused before any run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main

from .conftest import installed_agent


@pytest.fixture
def opencode_bin() -> Path:
    return installed_agent("opencode")


@pytest.mark.slow
def test_the_lgtm_suite_runs_in_opencode_with_the_skill_firing_only_in_its_arm(
    opencode_bin: Path, lgtm_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    suite, project = lgtm_suite, lgtm_suite.parents[2]
    results = tmp_path / "results.json"
    code = main(
        [
            "scenarios",
            str(suite),
            "--skills-dir",
            str(project / "skills"),
            "--agent",
            "opencode",
            "--backend",
            "emulator",
            "-k",
            "1",
            "--only",
            "latency-follow-up",
            "--allow-inconclusive",
            "--output-dir",
            str(tmp_path / "output"),
            "--results",
            str(results),
        ]
    )
    printed = capsys.readouterr()

    assert code == 0, printed.out + printed.err
    assert "the real OpenCode CLI runs against the offline model emulator" in printed.err
    assert "Bash is not confined to the sandbox" not in printed.err
    assert (
        "skilltest: note: OpenCode's commands are not confined: a run has a home and a "
        "configuration of its own"
    ) in printed.err
    assert "its bash tool runs with no OS sandbox and can read any file you can" in printed.err
    assert "opencode 1.18.33, emulator backend (scripted stand-in model), 1 scenarios" in (
        printed.out
    )
    document = json.loads(results.read_text())
    assert document["agent"] == {"name": "opencode", "version": "1.18.33"}
    assert document["provenance"]["agent"] == document["agent"]
    assert document["claude_version"] is None
    (scenario,) = document["scenarios"]
    runs = {run["arm"]: run for run in scenario["runs"]}
    with_skill, without_skill = runs["with_skill"], runs["without_skill"]
    assert (with_skill["error"], without_skill["error"]) == (None, None)
    assert (with_skill["score"], without_skill["score"]) == (1.0, 0.0)
    assert (with_skill["skills_invoked"], without_skill["skills_invoked"]) == (["lgtm"], [])
    assert [call["name"] for call in with_skill["tool_calls"]] == ["Skill", "Bash", "Bash"]
    # the follow-up went to the same conversation: its p99 an hour ago is what was scored
    assert "offset 1h" in with_skill["tool_calls"][-1]["input"]["command"]
    kept = Path(with_skill["transcript"]).read_text()
    assert "sk-skilltest-emulator" not in kept
    assert "lgtm/latency-follow-up: " in printed.out


def test_a_scenario_only_claude_code_runs_is_refused_before_any_run(
    lgtm_suite: Path, capsys: pytest.CaptureFixture[str]
):
    project = lgtm_suite.parents[2]
    suite = project / "tests" / "scenarios" / "extra.yaml"
    (project / "tests" / "scenarios" / "extra").mkdir()
    suite.write_text(
        "skill: lgtm\n"
        "model_script: ../model-scripts/lgtm.scenarios.yaml\n"
        "scenarios:\n"
        "  - id: writes-notes\n"
        "    prompt: Write NOTES.md\n"
        "    expected:\n"
        "      required_patterns: [NOTES]\n"
        "    config:\n"
        "      add_dirs: [extra]\n"
    )

    code = main(
        [
            "scenarios",
            str(suite),
            "--skills-dir",
            str(project / "skills"),
            "--agent",
            "opencode",
            "--backend",
            "emulator",
        ]
    )

    assert code == 2
    err = capsys.readouterr().err
    assert (
        "scenario 'writes-notes' asks for add_dirs, which skilltest runs through Claude Code "
        "only; --agent opencode cannot run it"
    ) in err
    assert "fix: run it with --agent claude-code" in err
