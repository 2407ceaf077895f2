"""``skilltest scenarios --rescore DIR``: the kept transcripts scored against the suite as it is
now, with no CLI started, and the same verdicts a fresh run of the edited suite gives."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from skilltest.cli import main
from tests.projects import model_script_beside

from ..conftest import REPO_ROOT

pytestmark = pytest.mark.cli

ONLY = ("--only", "trace-slow-requests", "--only", "latency-follow-up")
EDITED = '"\\\\| jq "'
"""The pattern the edit replaces: every with-skill run matches it."""


def suite_copy(folder: Path, text: str | None = None) -> Path:
    """The example lgtm scenario suite in ``folder``, its model script named absolutely."""
    source = (REPO_ROOT / "tests" / "scenarios" / "lgtm.yaml").read_text()
    folder.mkdir(parents=True, exist_ok=True)
    source = model_script_beside(source, "lgtm.scenarios.yaml", folder)
    path = folder / "lgtm.yaml"
    path.write_text(text if text is not None else source)
    return path


def counting_claude(folder: Path, real: Path) -> tuple[Path, Path]:
    """A ``claude`` that writes a line to a log at each start, then runs the real one."""
    log = folder / "starts.log"
    wrapper = folder / "claude"
    wrapper.write_text(f'#!/bin/sh\necho start >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, log


def starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def cli(*args: object) -> int:
    return main([str(a) for a in args])


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The example suite run once on the emulator, its output kept; and the claude wrapper."""
    from skilltest.claude.binary import ClaudeNotFoundError, resolve_claude

    try:
        real = resolve_claude(None).absolute()
    except ClaudeNotFoundError as exc:
        pytest.skip(f"no claude CLI: {exc}")
    folder = tmp_path_factory.mktemp("rescore")
    wrapper, log = counting_claude(folder, real)
    suite = suite_copy(folder / "original")
    old = os.environ.get("SKILLTEST_CLAUDE")
    os.environ["SKILLTEST_CLAUDE"] = str(wrapper)
    try:
        code = cli(
            "scenarios", suite, "--skills-dir", REPO_ROOT / "skills", "--backend", "emulator",
            "-k", "3", *ONLY, "--output-dir", folder / "out", "--results", folder / "orig.json",
        )  # fmt: skip
    finally:
        if old is None:
            os.environ.pop("SKILLTEST_CLAUDE", None)
        else:
            os.environ["SKILLTEST_CLAUDE"] = old
    assert code == 0
    assert starts(log) > 0  # the wrapper counts the CLI's starts
    return {"folder": folder, "out": folder / "out", "suite": suite, "wrapper": wrapper, "log": log}


def verdicts(path: Path) -> dict[str, tuple[str, list[float | None]]]:
    data = json.loads(path.read_text())
    return {
        s["id"]: (s["verdict"], [r["score"] for r in sorted(s["runs"], key=lambda r: r["id"])])
        for s in data["scenarios"]
    }


def test_a_pattern_edit_rescored_gives_the_verdicts_of_a_fresh_run_with_no_cli_started(
    kept, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("SKILLTEST_CLAUDE", str(kept["wrapper"]))
    text = kept["suite"].read_text()
    assert EDITED in text
    edited = suite_copy(tmp_path / "edited", text.replace(EDITED, '"\\\\| yq "'))
    before = starts(kept["log"])
    began = time.monotonic()
    code = cli(
        "scenarios", edited, "--skills-dir", REPO_ROOT / "skills", "-k", "3", *ONLY,
        "--rescore", kept["out"], "--results", tmp_path / "rescored.json",
    )  # fmt: skip
    assert time.monotonic() - began < 120  # ends, no hang
    out = capsys.readouterr().out
    assert starts(kept["log"]) == before, "a rescore started claude"
    assert "rescored 12 run(s) of 2 scenario(s)" in out
    assert "no claude started, no model asked" in out
    rescored = verdicts(tmp_path / "rescored.json")
    original = verdicts(kept["folder"] / "orig.json")
    # The edit flips the scenario whose pattern changed, and only it.
    assert original["trace-slow-requests"][0] == "improved"
    assert rescored["trace-slow-requests"][0] != "improved"
    assert rescored["latency-follow-up"] == original["latency-follow-up"]
    assert code == 1

    fresh_code = cli(
        "scenarios", edited, "--skills-dir", REPO_ROOT / "skills", "--backend", "emulator",
        "-k", "3", *ONLY, "--output-dir", tmp_path / "fresh", "--results", tmp_path / "fresh.json",
    )  # fmt: skip
    assert starts(kept["log"]) > before
    fresh = verdicts(tmp_path / "fresh.json")
    assert {k: v[0] for k, v in rescored.items()} == {k: v[0] for k, v in fresh.items()}
    assert sorted(map(str, rescored["trace-slow-requests"][1])) == sorted(
        map(str, fresh["trace-slow-requests"][1])
    )
    assert fresh_code == code


def test_the_results_say_where_they_were_rescored_from_and_the_gate_says_so(kept, tmp_path, capsys):
    edited = suite_copy(tmp_path / "edited", kept["suite"].read_text().replace(EDITED, '"jq"'))
    cli(
        "scenarios", edited, "--skills-dir", REPO_ROOT / "skills", *ONLY,
        "--rescore", kept["out"], "--results", tmp_path / "r.json",
    )  # fmt: skip
    provenance = json.loads((tmp_path / "r.json").read_text())["provenance"]
    origin = provenance["rescored_from"]
    assert provenance["backend"] == "emulator" and provenance["origin"] == "offline"
    assert origin["directory"] == str(kept["out"])
    [run] = origin["runs"]
    assert run["backend"] == "emulator" and run["claude_version"] and run["runs"] == 12
    [suite] = origin["suites"]
    assert suite["changed"] is True and suite["sha256_then"] != suite["sha256_now"]
    capsys.readouterr()
    assert cli("gate", tmp_path / "r.json", "--allow-offline") == 0
    out = capsys.readouterr().out
    assert "rescored" in out
    assert str(kept["out"]) in out


def test_a_scenario_with_no_kept_run_is_unscored_and_a_gone_one_is_named(kept, tmp_path, capsys):
    text = kept["suite"].read_text()
    # latency-follow-up is gone from the suite; investigate-error-spike never ran.
    text = text[: text.index("  - id: latency-follow-up")]
    edited = suite_copy(tmp_path / "edited", text)
    cli(
        "scenarios", edited, "--skills-dir", REPO_ROOT / "skills",
        "--rescore", kept["out"], "--results", tmp_path / "r.json",
    )  # fmt: skip
    captured = capsys.readouterr()
    assert "scenario lgtm/latency-follow-up is not in the suites given" in captured.err
    data = json.loads((tmp_path / "r.json").read_text())
    spike = next(s for s in data["scenarios"] if s["id"] == "investigate-error-spike")
    assert all(r["score"] is None for r in spike["runs"])
    assert "keeps no with-skill run of this scenario" in spike["runs"][0]["error"]


def test_a_check_that_needs_the_workspace_is_unscored_and_a_transcript_check_is_evaluated(
    kept, tmp_path
):
    text = (
        kept["suite"]
        .read_text()
        .replace(
            "    expected_skills: [lgtm]\n\n  - id: latency-follow-up",
            "    checks:\n      - trace_matches: {pattern: 'tempo search'}\n"
            "    expected_skills: [lgtm]\n\n  - id: latency-follow-up",
        )
    )
    text = text.replace(
        '        - "(?i)\\\\bavg\\\\(|avg_over_time"      # averages hide tail latency\n',
        '        - "(?i)\\\\bavg\\\\(|avg_over_time"      # averages hide tail latency\n'
        "    checks:\n      - file_exists: {path: NOTES.md}\n",
    )
    assert text.count("checks:") == 2
    edited = suite_copy(tmp_path / "edited", text)
    cli(
        "scenarios", edited, "--skills-dir", REPO_ROOT / "skills", *ONLY,
        "--rescore", kept["out"], "--results", tmp_path / "r.json",
    )  # fmt: skip
    data = {s["id"]: s for s in json.loads((tmp_path / "r.json").read_text())["scenarios"]}
    tempo = data["trace-slow-requests"]["runs"]
    assert all(r["score"] is not None for r in tempo)
    assert all(r["checks"][0]["kind"] == "trace_matches" for r in tempo)
    latency = data["latency-follow-up"]["runs"]
    assert all(r["score"] is None for r in latency)
    assert "cannot be rescored: it reads the run's workspace" in latency[0]["error"]


def test_an_older_layout_or_a_missing_folder_is_refused_naming_it(kept, tmp_path, capsys):
    old = tmp_path / "old"
    shutil.copytree(kept["out"], old)
    for trace in old.rglob("*.trace.jsonl"):
        trace.unlink()
    for folder, said in (
        (old, "holds transcripts (.ndjson) but no trace"),
        (
            tmp_path / "nowhere",
            "no such output folder",
        ),
    ):
        code = cli("scenarios", kept["suite"], "--skills-dir", REPO_ROOT / "skills",
                   "--rescore", folder)  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2
        assert said in err and str(folder) in err
        assert "Traceback" not in err
    code = cli("scenarios", kept["suite"], "--rescore", kept["out"], "--replay", tmp_path)
    assert code == 2
    assert "--replay needs runs, and --rescore runs nothing" in capsys.readouterr().err
