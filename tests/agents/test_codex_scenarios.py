"""``skilltest scenarios --agent codex``: the example suite through the real Codex CLI on the
emulator's Responses wire, one model script driving it as it drives Claude Code, with the
verdicts a user reads; and what Codex cannot be served (the live Anthropic API), or another
agent than Claude Code cannot keep, refused before any run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main

from .conftest import installed_agent


@pytest.fixture
def codex_bin() -> Path:
    return installed_agent("codex")


def run_scenarios(suite: Path, *extra: str) -> int:
    project = suite.parents[2]
    skills = str(project / "skills")
    return main(["scenarios", str(suite), "--skills-dir", skills, "--agent", "codex", *extra])


@pytest.mark.slow
def test_the_lgtm_suite_runs_in_codex_and_the_skill_improves_what_it_runs(
    codex_bin: Path, lgtm_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
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
    assert "the real Codex CLI runs against the offline model emulator" in printed.err
    assert "codex 0.171.0, emulator backend (scripted stand-in model), 1 scenarios" in printed.out
    # Claude Code's note on its sandbox is not Codex's: Codex's own sandbox is what holds
    assert "Bash is not confined to the sandbox" not in printed.err
    assert (
        "skilltest: note: Codex's commands run in its own workspace-write sandbox: they write "
        "only in the working directory and reach no network, but can read any file you can"
    ) in printed.err
    (row,) = [line for line in printed.out.splitlines() if line.startswith("lgtm/latency")]
    assert row.split()[:5] == ["lgtm/latency-follow-up", "improved", "3/3", "|", "0/3"]
    assert row.rstrip().endswith("PASS")
    assert "1 scenarios: 1 improved; 1 passed" in printed.out
    document = json.loads(results.read_text())
    assert document["agent"] == {"name": "codex", "version": "0.171.0"}
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
    # The skill was loaded by reading its SKILL.md through Codex's shell, where Codex lists it.
    read, now, before = with_skill["tool_calls"]
    assert (read["name"], read["input"]["command"]) == ("Bash", "cat .agents/skills/lgtm/SKILL.md")
    assert "histogram_quantile(0.99" in now["input"]["command"]
    # The follow-up went to the same conversation (codex exec resume): the p99 an hour ago.
    assert "offset 1h" in before["input"]["command"]
    assert Path(with_skill["transcript"]).read_text().count('"type":"thread.started"') == 2


def test_the_live_backend_that_cannot_answer_codex_is_refused_before_any_run(
    codex_bin: Path,
    lgtm_suite: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-placeholder-never-sent")

    code = run_scenarios(lgtm_suite, "--backend", "claude")

    assert code == 2
    err = capsys.readouterr().err
    assert (
        "--agent codex speaks the responses API, which only the emulator (or a replay of its "
        "recording) answers; --backend claude cannot serve it\n  fix: run it with --backend "
        "emulator (and --record DIR to replay it later with --replay DIR)"
    ) in err


@pytest.mark.parametrize("name", ["opencode", "codex", "gemini"])
def test_a_bundled_baseline_is_refused_for_an_agent_that_bundles_nothing_of_claude_code(
    name: str, lgtm_suite: Path, capsys: pytest.CaptureFixture[str]
):
    installed_agent(name)
    project = lgtm_suite.parents[2]

    code = main(
        [
            "scenarios",
            str(lgtm_suite),
            "--skills-dir",
            str(project / "skills"),
            "--agent",
            name,
            "--backend",
            "emulator",
            "--baseline",
            "bundled",
        ]
    )

    assert code == 2
    assert (
        f"--baseline bundled keeps what Claude Code bundles; --agent {name} has nothing of it "
        "to keep\n  fix: leave out --baseline, or run with --agent claude-code"
    ) in capsys.readouterr().err
