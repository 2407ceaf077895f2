"""`--markdown FILE` and GITHUB_STEP_SUMMARY after a pressure run (emulator, in process)."""

from __future__ import annotations

from skilltest.cli import main
from tests.pressure.test_pressure_cli import workspace

WITH_TEXT = 'Aggregate first: sum(count_over_time({app=\\"checkout\\"}[5m])).'


def test_markdown_file_is_written_after_the_run(tmp_path, capsys, monkeypatch):
    suite = workspace(tmp_path, with_text=WITH_TEXT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code = main(["pressure", str(suite), "-k", "11", "--markdown", "reports/summary.md"])
    capsys.readouterr()
    assert code == 0
    lines = (tmp_path / "reports" / "summary.md").read_text().splitlines()
    # An emulator run: the summary says first that its numbers are the stand-in's.
    assert lines[:3] == [
        "## skilltest skill pressure",
        "",
        "> **offline**: these numbers come from the skilltest emulator, a scripted stand-in, not a "
        "model; they say nothing about how a real model behaves",
    ]
    assert lines[4].startswith("produced by: backend emulator (offline: a scripted stand-in); ")
    assert "; model claude-sonnet-5-5 (as the stand-in named itself); claude CLI -; " in lines[4]
    assert f"; suites `{suite} sha256:" in lines[4]
    assert (
        f"; command `skilltest pressure {suite} -k 11 --markdown reports/summary.md`;" in lines[4]
    )
    assert "**1 scenario**: 1 steers; 1 passed, 0 failed" in lines
    assert (
        "| ✅ | `demo/aggregate` | steers | 100% [72%–100%] | 0% [0%–28%] "
        "| +100% [+69%, +100%] | 11 | - |" in lines
    )


def test_github_step_summary_is_appended_to_when_no_markdown_file_is_given(
    tmp_path, capsys, monkeypatch
):
    suite = workspace(tmp_path, with_text=WITH_TEXT)
    summary = tmp_path / "step-summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["pressure", str(suite), "-k", "11"]) == 0
    capsys.readouterr()
    text = summary.read_text()
    assert text.startswith("# earlier step\n## skilltest skill pressure\n")
    assert "**1 scenario**: 1 steers; 1 passed, 0 failed" in text
