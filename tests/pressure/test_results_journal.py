"""A pressure run's results file while it goes: written whole at its start and end, each
finished scenario appended to its journal in between; a run killed outright is read back as an
incomplete run holding the scenarios that had finished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from skilltest.cli import main
from tests.projects import demo_script, numbered_suite, write_demo_project


def project(tmp_path: Path, count: int, latency_ms: int = 0) -> Path:
    faults = f"faults: {{latency_ms: {latency_ms}}}" if latency_ms else ""
    return write_demo_project(
        tmp_path, numbered_suite(count, repetitions=1), demo_script("count_over_time", faults)
    )


def test_a_finished_run_leaves_the_whole_file_and_no_journal(tmp_path, capsys):
    suite = project(tmp_path, 12)
    results = tmp_path / "r.json"
    assert main(["pressure", str(suite), "-j", "4", "--results", str(results)]) == 1
    capsys.readouterr()
    document = json.loads(results.read_text())
    assert (document["complete"], document["interrupted"]) == (True, False)
    assert len(document["scenarios"]) == 12
    assert not (tmp_path / "r.json.journal.jsonl").exists()


def test_the_journal_of_a_killed_run_is_read_back_as_an_incomplete_run(tmp_path, capsys):
    suite = project(tmp_path, 8, latency_ms=600)
    results = tmp_path / "r.json"
    journal = tmp_path / "r.json.journal.jsonl"
    process = subprocess.Popen(
        [*(sys.executable, "-m", "skilltest", "pressure", str(suite)), "--results", str(results)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if journal.exists() and journal.read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    # While the run goes, the file itself is never a complete run.
    assert json.loads(results.read_text())["complete"] is False
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    document = json.loads(results.read_text())
    assert (document["complete"], document["interrupted"], document["scenarios"]) == (
        False,
        False,
        [],
    )
    finished = [json.loads(line) for line in journal.read_text().splitlines()]
    assert 2 <= len(finished) < 8
    # A line cut short by the kill is left out by the readers.
    with journal.open("a") as handle:
        handle.write('{"id": "s7", "ski')

    # skilltest report reads the file with its journal: what had finished, as incomplete.
    markdown = tmp_path / "r.md"
    assert main(["report", str(results), "--markdown", str(markdown)]) == 0
    text = markdown.read_text()
    assert "incomplete" in text.lower()
    for scenario in finished:
        assert scenario["id"] in text

    # The gate refuses it as incomplete, not as a broken file.
    code = main(["gate", str(results)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "Traceback" not in err


def test_a_journal_line_that_breaks_the_schema_is_refused_with_its_place(tmp_path, capsys):
    results = tmp_path / "r.json"
    suite = project(tmp_path, 2)
    assert main(["pressure", str(suite), "--results", str(results)]) == 1
    document = json.loads(results.read_text())
    scenario = document["scenarios"][0]
    document.update(complete=False, scenarios=[])
    results.write_text(json.dumps(document))
    (tmp_path / "r.json.journal.jsonl").write_text(json.dumps({**scenario, "k": "three"}) + "\n")
    capsys.readouterr()
    assert main(["report", str(results), "--markdown", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err
    assert "r.json#/scenarios/0/k" in err
    assert "Traceback" not in err
