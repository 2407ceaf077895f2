"""`skilltest scenarios --record` and `--replay` end to end, through the real claude CLI.

The example suites (two of their scenarios, K=1) are recorded against the emulator once, then
replayed from copies of the recording: with no model script left in the suites and
``ANTHROPIC_BASE_URL`` at a closed port, only the cassettes can answer. A plugin's real stdio MCP
server is recorded and replayed with its ``server.py`` deleted.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from skilltest.replay.cassette import Cassette
from skilltest.transcript.stream_json import load_transcript

from ..conftest import REPO_ROOT
from .examples import (
    claude_or_skip,
    closed_port,
    copy_example_project,
    moved_results,
    only_cassettes_answer,
    record_examples,
    replayed_document,
    run_examples,
)
from .test_replay_pressure import snapshot

pytestmark = pytest.mark.cli

SUITES = ("lgtm", "safe-migrations")
ONLY = ("--only", "investigate-error-spike", "--only", "index-large-table")
PLUGIN = REPO_ROOT / "tests" / "fixtures" / "plugins" / "observability"


def scenarios(project: Path, claude: Path, *args: str | Path) -> int:
    return run_examples(
        "scenarios", project, SUITES, claude, "--allow-inconclusive", *(str(a) for a in args)
    )


def comparable(results: Path, moved: tuple[Path, Path] | None = None) -> dict[str, Any]:
    """A results file without what differs from run to run: timings, where the transcripts
    went, the backend, the replay mode and what answered (the cassettes) and the folder of the
    model script whose rules did; ``moved`` (from, to) for a copied project."""
    document = moved_results(results, moved)
    document.pop("backend")
    document.pop("replay")
    document.pop("provenance")
    for scenario in document["scenarios"]:
        for run in scenario["runs"]:
            keys = ("duration_s", "transcript", "trace", "stderr", "id", "recorded_with")
            for key in (*keys, "answered_by"):
                run.pop(key)
            # The rules that answered, named in the cassettes where the recording found them.
            for rule in run["emulator_rules"]:
                rule["script"] = Path(rule["script"]).name
    return document


def runs_of(results: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (s["id"], run["arm"]): run
        for s in json.loads(results.read_text())["scenarios"]
        for run in s["runs"]
    }


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """Copies of the example scenario suites, their fixtures and skills, recorded once (K=1)."""
    project = tmp_path_factory.mktemp("examples")
    copy_example_project(project, "scenarios", SUITES)
    shutil.copytree(REPO_ROOT / "tests" / "scenarios" / "fixtures", project / "fixtures")
    record_examples(project, scenarios, *ONLY, "-k", "1")
    return project


@pytest.fixture
def project(recorded, tmp_path) -> Path:
    return shutil.copytree(recorded, tmp_path / "project")


def test_the_examples_replay_alike_without_an_emulator_and_a_changed_fixture_misses(
    recorded, project, claude_bin, monkeypatch, capsys
):
    only_cassettes_answer(project, monkeypatch)
    cassettes = project / "cassettes"
    before = snapshot(cassettes)
    replays = [project / f"replay-{n}.json" for n in range(3)]
    for n, results in enumerate(replays):
        code = scenarios(
            project, claude_bin, *ONLY, "-k", "1", "--replay", cassettes,
            "--output-dir", project / f"out-{n}", "--results", results,
        )  # fmt: skip
        out = capsys.readouterr().out
        assert code == 0, out
        assert "replay backend (recorded answers)" in out
        replayed_document(results, cassettes)
        assert comparable(results) == comparable(project / "recorded.json", (recorded, project))
    assert snapshot(cassettes) == before

    # A fixture changed since recording: the with-skill run looks at the migrations (Glob) and
    # its next request carries another tool result; the other runs never see the folder's list.
    (project / "fixtures" / "shop-app" / "db" / "migrate" / "20240201000000_add_sku.rb").write_text(
        "class AddSku < ActiveRecord::Migration[7.1]; end\n"
    )
    results = project / "changed.json"
    code = scenarios(
        project, claude_bin, *ONLY, "-k", "1", "--replay", cassettes,
        "--output-dir", project / "out-changed", "--results", results,
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 2, out
    assert out.splitlines()[-1] == "1 replay miss: re-record with --record (or --record-missing)"
    runs = runs_of(results)
    error = runs[("index-large-table", "with_skill")]["error"]
    cassette = cassettes / "safe-migrations" / "index-large-table" / "with_skill.yaml"
    assert error.startswith(f"replay miss: {cassette}, repetition 0, step ")
    assert ": tool result differs: " in error
    assert "20240201000000_add_sku.rb" in error
    assert json.loads(results.read_text())["replay"]["misses"] == [error]
    others = [key for key in runs if key != ("index-large-table", "with_skill")]
    assert [runs[key]["error"] for key in others] == [None, None, None]
    recorded_runs = runs_of(project / "recorded.json")
    assert [runs[key]["score"] for key in others] == [recorded_runs[key]["score"] for key in others]

    # A scenario nothing was recorded for.
    code = scenarios(
        project, claude_bin, "--only", "trace-slow-requests", "-k", "1", "--skill-only",
        "--replay", cassettes, "--output-dir", project / "out-none", "--results", results,
    )  # fmt: skip
    assert code == 2, capsys.readouterr().out
    (run,) = runs_of(results).values()
    assert run["error"] == (
        f"replay miss: {cassettes}/lgtm/trace-slow-requests/with_skill.yaml, repetition 0, "
        "step 0: no cassette was recorded for this scenario and arm"
    )


def test_a_skill_edit_misses_the_with_skill_arm_and_record_missing_reruns_only_it(
    project, claude_bin, capsys
):
    skill = project / "skills" / "lgtm" / "SKILL.md"
    skill.write_text(
        skill.read_text().replace(
            "description: Investigate", "description: Always use it to investigate"
        )
    )
    cassettes = project / "cassettes"
    recorded = snapshot(cassettes)
    only = ("--only", "investigate-error-spike", "-k", "1", "--output-dir", project / "out")
    results = project / "edited.json"
    code = scenarios(project, claude_bin, *only, "--replay", cassettes, "--results", results)
    out = capsys.readouterr().out
    assert code == 2, out
    assert out.splitlines()[-1] == "1 replay miss: re-record with --record (or --record-missing)"
    runs = runs_of(results)
    cassette = cassettes / "lgtm" / "investigate-error-spike" / "with_skill.yaml"
    assert runs[("investigate-error-spike", "with_skill")]["error"] == (
        f"replay miss: {cassette}, repetition 0, step 0: no recorded request matches; nearest is "
        "step 0:\n"
        '  /messages/1/content/0/text: skill listing changed: "…tool:\\n\\n- lgtm: Investiga…" '
        '-> "…tool:\\n\\n- lgtm: Always use it to investiga…"'
    )
    without = runs[("investigate-error-spike", "without_skill")]
    assert without["error"] is None  # still replayed, and scored
    assert (
        without["score"]
        == runs_of(project / "recorded.json")[("investigate-error-spike", "without_skill")]["score"]
    )

    code = scenarios(project, claude_bin, *only, "--replay", cassettes, "--record-missing")
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"1 cassette(s) written under {cassettes}" in out
    rerecorded = snapshot(cassettes)
    changed = {name for name in recorded if rerecorded[name] != recorded[name]}
    assert changed == {"lgtm/investigate-error-spike/with_skill.yaml"}
    assert "Always use it to investigate" in (cassettes / changed.pop()).read_text()

    code = scenarios(project, claude_bin, *only, "--replay", cassettes, "--results", results)
    assert code == 0, capsys.readouterr().out
    assert json.loads(results.read_text())["replay"]["misses"] == []


MCP_TOOL = "mcp__plugin_observability_telemetry__query_logs"


def test_a_plugin_mcp_server_replays_with_the_server_gone(tmp_path, claude_bin, monkeypatch):
    from ..scenarios.test_plugin_e2e import SCRIPT, SUITE

    shutil.copytree(PLUGIN, tmp_path / "plugin")
    (tmp_path / "model.yaml").write_text(SCRIPT)
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE.format(plugin="plugin", extra="").replace("repetitions: 2", ""))
    # The server starts as `python3`: the one with the mcp package comes first while recording.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    common = ["scenarios", str(suite), "--claude", str(claude_bin), "-k", "1"]
    common += ["--allow-inconclusive"]
    cassettes = tmp_path / "cassettes"
    recorded = tmp_path / "recorded.json"
    args = ["--record", str(cassettes), "--output-dir", str(tmp_path / "o1")]
    assert main([*common, *args, "--results", str(recorded)]) == 0
    text = (cassettes / "suite" / "error-spike" / "with_skill.yaml").read_text()
    assert "channel: mcp:plugin_observability_telemetry" in text
    assert "kind: tools/call" in text

    (tmp_path / "plugin" / "server.py").unlink()
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no python with the mcp package either
    monkeypatch.setenv("ANTHROPIC_BASE_URL", closed_port())
    replayed = tmp_path / "replayed.json"
    args = ["--replay", str(cassettes), "--output-dir", str(tmp_path / "o2")]
    assert main([*common, *args, "--results", str(replayed)]) == 0
    assert comparable(replayed) == comparable(recorded)

    def tool_results(results: Path) -> list[str]:
        texts = []
        for run in runs_of(results).values():
            transcript = load_transcript(run["transcript"])
            calls = [c for c in transcript.tool_calls if c.name == MCP_TOOL]
            assert calls, run["transcript"]
            texts += [json.dumps(c.result, sort_keys=True) for c in calls]
        return texts

    assert tool_results(replayed) == tool_results(recorded)
    assert all("1342" in text for text in tool_results(replayed))


def test_a_recording_stopped_by_sigterm_keeps_the_repetitions_that_finished(recorded, tmp_path):
    cassettes = tmp_path / "cassettes"
    command = [
        sys.executable, "-m", "skilltest", "scenarios", str(recorded / "safe-migrations.yaml"),
        "--skills-dir", str(recorded / "skills"), "--claude", str(claude_or_skip()),
        "--only", "rename-column", "--skill-only", "-k", "4", "-j", "1",
        "--record", str(cassettes), "--output-dir", str(tmp_path / "out"),
        "--results", str(tmp_path / "results.json"),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cassette = cassettes / "safe-migrations" / "rename-column" / "with_skill.yaml"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not cassette.exists():
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert "Traceback" not in err
    kept = Cassette.load(cassette)
    assert 1 <= len(kept.repetitions) < 4
    assert sorted(kept.repetitions) == list(range(len(kept.repetitions)))
    for exchanges in kept.repetitions.values():  # whole conversations, up to the last answer
        main_steps = [e for e in exchanges if e.channel == "model" and e.kind == "main"]
        assert len(main_steps) >= 3
        last = main_steps[-1].response
        stop = next(
            json.loads(data)["delta"]["stop_reason"]
            for event, data in last["events"]
            if event == "message_delta"
        )
        assert stop == "end_turn"
    document = json.loads((tmp_path / "results.json").read_text())
    assert (document["complete"], document["interrupted"]) == (False, True)
    assert [p.name for p in cassette.parent.iterdir()] == ["with_skill.yaml"]
