"""Traces of trigger runs (the real claude CLI against the emulator on loopback): one file
beside each kept transcript, listed in the results file, shown by ``skilltest show``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results
from skilltest.trace.timeline import render
from tests.triggers_layer.test_cli import project  # noqa: F401 (the fixture)


@pytest.mark.cli
def test_each_trigger_run_writes_a_trace_the_results_list_and_show_prints(project, capsys):  # noqa: F811
    only = ["--only", "late", "--only", "wander"]
    assert main(["triggers", "-j", "2", *only, "--results", "out.json"]) == 1
    capsys.readouterr()
    [suite] = read_results(project / "out.json", "triggers")["suites"]
    runs = {q["id"]: q["runs"][0] for q in suite["queries"]}
    for run in runs.values():
        assert run["trace"] == run["transcript"].replace(".ndjson", ".trace.jsonl")
    lines = [json.loads(line) for line in Path(runs["late"]["trace"]).read_text().splitlines()]
    head, *events, outcome = lines
    description = "Use when investigating log error spikes."
    assert head["schema_version"] == 1
    assert (head["layer"], head["query"], head["should_trigger"]) == ("triggers", "late", True)
    assert (head["variant"], head["rep"], head["description"]) == ("current", 0, description)
    # The emulator answered: the trace says so, and names the model as its answers did.
    assert (head["backend"], head["origin"]) == ("emulator", "offline")
    response = next(e for e in events if e["type"] == "model_response")
    assert head["model"] == response["model"] and head["models"] == [response["model"]]
    assert head["run_id"] == runs["late"]["id"]
    assert (
        head["description_checksum"] == "sha256:" + hashlib.sha256(description.encode()).hexdigest()
    )
    assert events[0] == {
        "kind": "event",
        "n": 1,
        "type": "user",
        "turn": 1,
        "text": head["prompts"][0],
    }
    calls = [e["name"] for e in events if e["type"] == "tool_call"]
    assert calls[:2] == ["Bash", "Skill"]
    assert outcome["kind"] == "outcome"
    assert (outcome["ended"], outcome["reason"]) == (
        "fired",
        "the skill fired (Skill(alpha), tool call 2)",
    )
    assert [c["name"] for c in outcome["first_tool_calls"]] == ["Bash", "Skill"]
    assert outcome["tokens"]["output"] > 0

    wander = [json.loads(line) for line in Path(runs["wander"]["trace"]).read_text().splitlines()]
    assert wander[-1]["ended"] == "budget"

    assert main(["show", runs["wander"]["trace"]]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0] == "alpha/wander  current (should trigger) run 1"
    assert ", emulator backend, " in shown[1]
    assert shown[2].startswith("offline: answered by the skilltest emulator, a scripted stand-in")
    assert shown[3].startswith("description sha256:")
    assert any(line.startswith("budget: tool-call budget: 3 tool call(s)") for line in shown)
    assert "first tool calls: Bash, Bash, Bash, Bash" in shown


def test_show_of_a_trigger_trace_names_the_query_and_how_it_ended():
    lines = [
        {
            "schema_version": 1,
            "kind": "header",
            "layer": "triggers",
            "suite": "alpha",
            "query": "trivia",
            "should_trigger": False,
            "variant": "candidate",
            "rep": 2,
            "description_checksum": "sha256:ab",
            "backend": "emulator",
        },
        {"kind": "event", "n": 1, "type": "user", "turn": 1, "text": "capital of France?"},
        {"kind": "event", "n": 2, "type": "assistant_text", "text": "Paris."},
        {
            "kind": "outcome",
            "ended": "not-fired",
            "reason": None,
            "first_tool_calls": [],
            "tokens": {"input": 10, "output": 2},
            "cost_usd": None,
            "duration_s": 1.5,
        },
    ]
    text = render(lines).splitlines()
    assert text[0] == "alpha/trivia  candidate (should not trigger) run 3"
    assert "description sha256:ab" in text
    assert "not-fired" in text and "first tool calls: none" in text
    assert "unscored" not in "\n".join(text)
