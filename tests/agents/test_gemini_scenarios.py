"""``skilltest scenarios --agent gemini``: the example suite through the real Gemini CLI on the
emulator's Gemini API, one model script driving it as it drives Claude Code, with the verdicts a
user reads; and the live API, which cannot serve Gemini CLI, refused before any run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main

from .conftest import installed_agent


@pytest.fixture
def gemini_bin() -> Path:
    return installed_agent("gemini")


def run_scenarios(suite: Path, *extra: str) -> int:
    project = suite.parents[2]
    skills = str(project / "skills")
    return main(["scenarios", str(suite), "--skills-dir", skills, "--agent", "gemini", *extra])


@pytest.mark.slow
def test_the_lgtm_suite_runs_in_gemini_cli_and_the_skill_improves_what_it_runs(
    gemini_bin: Path, lgtm_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    results = tmp_path / "results.json"
    code = run_scenarios(
        lgtm_suite,
        "--backend",
        "emulator",
        "-k",
        "3",
        "--only",
        "latency-follow-up",
        "--output-dir",
        str(tmp_path / "output"),
        "--results",
        str(results),
    )
    printed = capsys.readouterr()

    assert code == 0, printed.out + printed.err
    assert "the real Gemini CLI runs against the offline model emulator" in printed.err
    assert "gemini 0.61.0, emulator backend (scripted stand-in model), 1 scenarios" in printed.out
    assert "Bash is not confined to the sandbox" not in printed.err
    assert (
        "skilltest: note: Gemini CLI's commands are not confined: a run has a home and settings "
        "of its own and approves every tool (--approval-mode yolo)"
    ) in printed.err
    (row,) = [line for line in printed.out.splitlines() if line.startswith("lgtm/latency")]
    assert row.split()[:5] == ["lgtm/latency-follow-up", "improved", "3/3", "|", "0/3"]
    assert row.rstrip().endswith("PASS")
    assert "1 scenarios: 1 improved; 1 passed" in printed.out
    document = json.loads(results.read_text())
    assert document["agent"] == {"name": "gemini", "version": "0.61.0"}
    assert document["provenance"]["agent"] == document["agent"]
    (scenario,) = document["scenarios"]
    runs = scenario["runs"]
    assert sorted((run["arm"], run["score"], run["error"]) for run in runs) == [
        ("with_skill", 1.0, None),
        ("with_skill", 1.0, None),
        ("with_skill", 1.0, None),
        ("without_skill", 0.0, None),
        ("without_skill", 0.0, None),
        ("without_skill", 0.0, None),
    ]
    with_skill = next(run for run in runs if run["arm"] == "with_skill")
    without_skill = next(run for run in runs if run["arm"] == "without_skill")
    assert (with_skill["skills_invoked"], without_skill["skills_invoked"]) == (["lgtm"], [])
    # The skill was loaded with Gemini CLI's activate_skill, read as the suite's Skill call.
    skill, now, before = with_skill["tool_calls"]
    assert (skill["name"], skill["input"]) == ("Skill", {"skill": "lgtm"})
    assert now["name"] == "Bash" and "histogram_quantile(0.99" in now["input"]["command"]
    # The follow-up went to the same session (--resume): the p99 an hour ago.
    assert "offset 1h" in before["input"]["command"]
    assert Path(with_skill["transcript"]).read_text().count('"type":"init"') == 2


def test_the_live_backend_that_cannot_answer_gemini_cli_is_refused_before_any_run(
    gemini_bin: Path,
    lgtm_suite: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-placeholder-never-sent")

    code = run_scenarios(lgtm_suite, "--backend", "claude")

    assert code == 2
    err = capsys.readouterr().err
    assert (
        "--agent gemini speaks the gemini API, which only the emulator (or a replay of its "
        "recording) answers; --backend claude cannot serve it\n  fix: run it with --backend "
        "emulator (and --record DIR to replay it later with --replay DIR)"
    ) in err
