"""What a scenario's run config and its setup give the agent, through the real claude CLI against
the emulator: text appended to the system prompt, variables, extra folders to read, a setup
script run in the workspace before the agent (its files there before, so never "created")."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.report.files import read_results

from ..layers import run_layer

pytestmark = pytest.mark.cli

SUITE = """\
skill: demo
model_script: model.yaml
repetitions: 1
comparison: false
scenarios:
  - id: configured
    prompt: "Say the mode."
    setup: setup.sh
    config:
      allowed_tools: [Bash, Read]
      append_system_prompt: "Answer like a pirate."
      env: {EVAL_MODE: shipshape}
      add_dirs: [extra]
    checks:
      - final_answer: {pattern: "^Arr"}
      - trace_matches: {pattern: "shipshape"}
      - trace_matches: {pattern: "a note to read", name: extra-folder}
      - file_exists: {path: SETUP.md, dialect: plugin_eval, exists: false, name: setup-file}
      - file_matches: {path: SETUP.md, pattern: "before the agent"}
"""

SCRIPT = """\
schema_version: 1
rules:
  - id: mode
    when: {system: "Answer like a pirate", turn: 1}
    reply:
      tool_calls: [{name: Bash, input: {command: "echo $EVAL_MODE; cat ../add-dirs/0-extra/note.txt"}}]
  - id: answer
    when: {system: "Answer like a pirate", tool_result: "shipshape"}
    reply: {text: "Arr, the mode be shipshape."}
"""


def test_the_run_config_reaches_the_agent(tmp_path: Path, claude_bin):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\nbody\n")
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "note.txt").write_text("a note to read\n")
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "model.yaml").write_text(SCRIPT)
    (tmp_path / "setup.sh").write_text("echo 'written before the agent' > SETUP.md\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    code = run_layer(
        "scenarios", tmp_path / "suite.yaml", runs, "--claude", claude_bin, "--allow-inconclusive"
    )
    assert code == 0
    [scenario] = read_results(runs / "results.json", "scenarios")["scenarios"]
    [run] = scenario["runs"]
    assert {check["name"]: check["passed"] for check in run["checks"]} == {
        "final_answer '^Arr'": True,
        "trace_matches 'shipshape'": True,
        "extra-folder": True,
        "setup-file": True,
        "file_matches SETUP.md": True,
    }
    init = (runs / "output" / "demo" / "configured" / "with-skill-0.ndjson").read_text()
    assert "add-dirs/0-extra" in init  # --add-dir: a copy, listed as a working directory
