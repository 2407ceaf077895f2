"""At ``-j 1`` a run's judge is asked while the next run's process works: the real claude CLI
against a stand-in on loopback that holds each judge request until the next run has asked the
model.

``-j`` bounds the CLI processes at once, not what happens around them: a run whose process has
ended is checked and judged beside the next run's process. The stand-in proves it without a
clock: the judge of the run with the skill is answered PASS once the run without it (the next
one) has sent its request, and FAIL if that never happens while it waits. Were the next run to
start only after the judge had answered, the judge would wait for nothing, and fail.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.emulator.scripted_model import Answer, ScriptedModel
from skilltest.report.files import read_results

from ..layers import run_layer
from ..projects import write_skill

pytestmark = pytest.mark.cli

HOLD_S = 100.0
"""How long a judge request waits for the next run before it is answered FAIL (within the time
the judge's client gives one answer)."""

SUITE = """\
skill: demo
repetitions: 1
scenarios:
  - id: hello
    prompt: "Say hello."
    checks:
      - final_answer: {pattern: "(?i)hello"}
      - judge: {criteria: "The answer greets.", votes: 3, arm: with}
"""

SCRIPT = """\
schema_version: 1
rules:
  - id: judge-released
    when: {system: "skilltest judge"}
    reply: {text: '{"verdict": "pass", "reason": "The next run was under way."}'}
  - id: judge-held-in-vain
    when: {system: "HELD IN VAIN"}
    reply: {text: '{"verdict": "fail", "reason": "No run came while it waited."}'}
  - id: hello
    when: {user: "(?i)say hello"}
    reply: {text: "Hello!"}
"""


class HeldJudge:
    """Answers from the script; a judge request waits until the arm without the skill (whose
    requests do not list it) has asked the model."""

    def __init__(self, script: ModelScript) -> None:
        self.model = ScriptedModel(script)
        self.without_skill_asked = False
        self.changed = threading.Condition()

    def answer(self, body: Mapping[str, Any]) -> Answer:
        if "skilltest judge" not in str(body.get("system")):
            if "Greets." not in str(body):
                with self.changed:
                    self.without_skill_asked = True
                    self.changed.notify_all()
            return self.model.answer(body)
        with self.changed:
            released = self.changed.wait_for(lambda: self.without_skill_asked, HOLD_S)
        return self.model.answer(body if released else {**body, "system": "HELD IN VAIN"})


def test_a_run_is_judged_while_the_next_runs_process_works(tmp_path: Path, claude_bin, monkeypatch):
    write_skill(tmp_path, "---\nname: demo\ndescription: Greets.\n---\nGreet the user.\n")
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "model.yaml").write_text(SCRIPT)
    held = HeldJudge(ModelScript.load(tmp_path / "model.yaml"))
    with EmulatorServer(held, port=0) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-only-for-the-stand-in")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        code = run_layer(
            "scenarios",
            tmp_path / "suite.yaml",
            tmp_path,
            "--backend",
            "claude",
            "--claude",
            claude_bin,
            "-j",
            "1",
        )
    assert code in (0, 1)  # a verdict (one run per arm decides nothing), not bad input
    [scenario] = read_results(tmp_path / "results.json", "scenarios")["scenarios"]
    runs = {run["arm"]: run for run in scenario["runs"]}
    # The arm with the skill runs first; its judge was answered once the other arm's process
    # had asked the model.
    answer, judge = runs["with_skill"]["checks"]
    assert [vote["verdict"] for vote in judge["votes"]] == ["pass", "pass", "pass"]
    assert (answer["passed"], judge["passed"]) == (True, True)
    assert runs["with_skill"]["score"] == runs["without_skill"]["score"] == 1.0
