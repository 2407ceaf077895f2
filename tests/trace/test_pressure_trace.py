"""Traces of pressure runs (the real SDK against the emulator, in process): one file per run
under ``--output-dir``, listed in the results file, free of secrets, shown by ``skilltest show``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results
from tests.projects import DEMO_SKILL, demo_script, demo_suite, write_demo_project

KEY = "sk-test-pressure-0123456789abcdefghij"


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = demo_script(f"Run count_over_time first; the key is {KEY}.")
    suite = write_demo_project(tmp_path, demo_suite(repetitions=1), script)
    monkeypatch.chdir(tmp_path)
    # The scripted answer repeats this key: the trace must not.
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return suite


def run_pressure(suite: Path, *extra: str) -> dict:
    results = suite.parent / "results.json"
    args = [
        "pressure",
        str(suite),
        "--backend",
        "emulator",
        "--results",
        str(results),
        "--allow-inconclusive",
        *extra,
    ]
    assert main(args) == 0
    return read_results(results, "pressure")


def test_each_run_writes_a_trace_listed_in_the_results(suite: Path) -> None:
    out_dir = suite.parent / "traces"
    document = run_pressure(suite, "--output-dir", str(out_dir))

    runs = {run["arm"]: run for run in document["scenarios"][0]["runs"]}
    with_path = out_dir / "demo" / "aggregate" / "with-skill-1.trace.jsonl"
    without_path = out_dir / "demo" / "aggregate" / "without-skill-1.trace.jsonl"
    assert runs["with_skill"]["trace"] == str(with_path)
    assert runs["without_skill"]["trace"] == str(without_path)

    text = with_path.read_text()
    assert KEY not in text
    assert KEY[-12:] not in text
    # The results file holds the answer too, redacted the same way.
    results_text = (suite.parent / "results.json").read_text()
    assert KEY not in results_text and KEY[-12:] not in results_text
    assert runs["with_skill"]["output"].startswith(
        "Run count_over_time first; the key is [REDACTED:"
    )
    lines = [json.loads(line) for line in text.splitlines()]
    head, events, outcome = lines[0], lines[1:-1], lines[-1]
    assert head["schema_version"] == 1
    assert head["layer"] == "pressure"
    assert (head["suite"], head["scenario"], head["skill"]) == ("demo", "aggregate", "demo")
    assert (head["arm"], head["rep"], head["backend"]) == ("with_skill", 1, "emulator")
    # What produced the run: the stand-in, as such; its model as the answer named it.
    assert head["origin"] == "offline"
    assert head["model"] == events_model(lines)
    assert head["suite_checksum"] == "sha256:" + hashlib.sha256(suite.read_bytes()).hexdigest()
    assert head["command"][:2] == ["skilltest", "pressure"]
    results = json.loads((suite.parent / "results.json").read_text())
    ids = [run["id"] for s in results["scenarios"] for run in s["runs"]]
    assert head["run_id"] in ids and head["date"].endswith("Z")
    assert head["system_checksum"] == "sha256:" + hashlib.sha256(DEMO_SKILL.encode()).hexdigest()
    assert head["prompts"] == ["Error spike in checkout. How do you investigate?"]
    assert [event["type"] for event in events] == ["user", "model_response", "assistant_text"]
    response = events[1]
    assert response["usage"]["output_tokens"] > 0
    assert response["stop_reason"] == "end_turn"
    assert response["latency_ms"] is not None
    assert events[2]["text"].startswith("Run count_over_time first; the key is [REDACTED:")
    assert outcome["kind"] == "outcome"
    assert outcome["judgement"]["passed"] is True
    assert outcome["judgement"]["matched"] == ["(?i)count_over_time"]
    assert outcome["judgement"]["missing"] == []
    assert outcome["judgement"]["anti_matched"] == []
    assert outcome["tokens"]["output"] > 0

    baseline = [json.loads(line) for line in without_path.read_text().splitlines()]
    assert baseline[0]["system_checksum"] is None
    assert baseline[-1]["judgement"]["passed"] is False
    assert baseline[-1]["judgement"]["red"] is True
    assert baseline[-1]["judgement"]["missing"] == ["(?i)count_over_time"]


def events_model(lines: list[dict[str, object]]) -> object:
    """The model the trace's model response names."""
    return next(line["model"] for line in lines if line.get("type") == "model_response")


def test_show_prints_a_pressure_trace(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = suite.parent / "traces"
    run_pressure(suite, "--output-dir", str(out_dir))
    capsys.readouterr()

    trace = out_dir / "demo" / "aggregate" / "with-skill-1.trace.jsonl"
    assert main(["show", str(trace)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "demo/aggregate  with-skill run 1"
    assert lines[1].startswith("model claude-sonnet-5-5, claude unknown, skilltest 0.1.0, ")
    assert ", emulator backend, 20" in lines[1]
    assert lines[2] == (
        "offline: answered by the skilltest emulator, a scripted stand-in, not a model; this run "
        "says nothing about how a real model behaves"
    )
    checksum = hashlib.sha256(DEMO_SKILL.encode()).hexdigest()
    assert lines[3] == f"system prompt sha256:{checksum}"
    assert lines[5] == "1. user (turn 1): Error spike in checkout. How do you investigate?"
    assert lines[6].startswith("2. model response (")
    assert ", stop end_turn, latency " in lines[6]
    assert lines[7].startswith("3. assistant: Run count_over_time first; the key is [REDACTED:")
    assert "score 1.00" in lines
    assert "passed; matched: (?i)count_over_time; missing: -; anti-patterns hit: -" in lines
    assert all(KEY not in line for line in lines)

    baseline = out_dir / "demo" / "aggregate" / "without-skill-1.trace.jsonl"
    assert main(["show", str(baseline)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "system prompt" not in "\n".join(lines)
    assert (
        "not passed; matched: -; missing: (?i)count_over_time; anti-patterns hit: -; baseline RED"
        in lines
    )


def test_no_trace_without_output_dir(suite: Path) -> None:
    document = run_pressure(suite)
    assert all(run["trace"] is None for run in document["scenarios"][0]["runs"])
    assert not list(suite.parent.rglob("*.trace.jsonl"))
