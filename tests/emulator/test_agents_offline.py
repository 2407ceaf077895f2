"""Codex and OpenCode run offline against the emulator, when their binaries are at hand.

Each agent is a platform binary of some 400 MB installed outside the repository (see
``tests/fixtures/agents/README.md``); name it in ``SKILLTEST_CODEX`` or ``SKILLTEST_OPENCODE``
and this test runs it through ``scripts/capture_agents.py`` into a temporary folder: the agent
reads the skill, runs the scripted command through its own shell tool and answers.
"""

from __future__ import annotations

import json
import os
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
BINARIES = {"codex": "SKILLTEST_CODEX", "opencode": "SKILLTEST_OPENCODE"}


@pytest.mark.slow
@pytest.mark.parametrize("agent", list(BINARIES))
def test_the_agent_reads_the_skill_runs_the_command_and_answers_offline(agent, tmp_path):
    binary = os.environ.get(BINARIES[agent])
    if not binary:
        pytest.skip(f"set {BINARIES[agent]} to the {agent} binary to run it offline")
    capture = runpy.run_path(str(ROOT / "scripts" / "capture_agents.py"))
    assert capture["main"](agent, binary, tmp_path) == 0
    requests = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    rules = [r["rule_id"] for r in requests if not str(r["rule_id"]).startswith("side:")]
    assert rules == ["read-skill", "run-greeting", "answer"]
    assert {r["agent"] for r in requests} == {agent}
    events = (tmp_path / "events.jsonl").read_text()
    assert "hello from skilltest" in events
    assert "The greeting printed: hello from skilltest." in events
