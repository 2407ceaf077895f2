"""Where a trigger run ends, with the real claude CLI against the emulator: at the deciding call.

The stop hook ends the CLI before the deciding call runs, so no request follows it: a run that
fires at once costs one model request, the call after the tool-call budget never runs, and a
subagent that fires the skill ends the whole session, not only itself. When
hooks are off (managed settings can do that), the watch stops the CLI at its next model turn and
says so.
"""

import asyncio
import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from skilltest.claude.binary import find_claude
from skilltest.scenarios.endpoints import EmulatorEndpoint
from skilltest.scenarios.runner import ClaudeCliRunner
from skilltest.skills import Skill
from skilltest.triggers.runs import OVERRAN, trigger_request, trigger_run
from skilltest.triggers.suite import TriggerSuite, load_trigger_suite
from skilltest.triggers.verdict import TriggerRun

pytestmark = pytest.mark.cli

SUITE = """\
skill: alpha
max_tool_calls: 1
model_script: model.yaml
queries:
  - {id: fire, query: "fire: look at the logs", should_trigger: true}
  - {id: wander, query: "wander: look around", should_trigger: true}
  - {id: delegate, query: "delegate: have a subagent look", should_trigger: true}
  - {id: background, query: "background: have a subagent look", should_trigger: true}
"""

# After the skill has loaded, or after the second Bash call, a run not stopped goes on.
SCRIPT = """\
schema_version: 1
model: claude-test-emulated
rules:
  - id: follow
    when: {skill_loaded: alpha}
    reply: {text: "Following alpha.", tool_calls: [{name: Bash, input: {command: "echo follow"}}]}
  - id: subagent-fires
    when: {user: "^SUBTASK", turn: 1}
    reply: {text: "Loading.", tool_calls: [{name: Skill, input: {skill: alpha}}]}
  - id: delegate
    when: {user: "^delegate", turn: 1}
    reply:
      tool_calls:
        - name: Agent
          input:
            description: Look
            prompt: "SUBTASK: look at the logs"
            subagent_type: general-purpose
            run_in_background: false
  - id: background
    when: {user: "^background", turn: 1}
    reply:
      tool_calls:
        - name: Agent
          input: {description: Look, prompt: "SUBTASK: look at the logs", subagent_type: general-purpose}
  - id: fire
    when: {user: "^fire", turn: 1}
    reply: {text: "Loading.", tool_calls: [{name: Skill, input: {skill: alpha}}]}
  - id: wander-1
    when: {user: "^wander", turn: 1}
    reply: {text: "One.", tool_calls: [{name: Bash, input: {command: "echo one >> LOG"}}]}
  - id: wander-2
    when: {user: "^wander", turn: 2}
    reply: {text: "Two.", tool_calls: [{name: Bash, input: {command: "echo two >> LOG"}}]}
  - id: done
    reply: {text: "Done."}
"""


@pytest.fixture
def suite(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[TriggerSuite, Path]:
    # The log is outside the suite's repository, which the agent's commands may not name. Its
    # path is short and of one length however pytest runs (an xdist worker's tmp_path is
    # longer), so that the reasons that quote a command quote it whole.
    folder = Path(tempfile.mkdtemp(prefix="calls-"))
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    log = folder / "calls.log"
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "skills" / "alpha").mkdir(parents=True)
    (tmp_path / "skills" / "alpha" / "SKILL.md").write_text(
        "---\nname: alpha\ndescription: Use for logs.\n---\nBody\n"
    )
    (tmp_path / "model.yaml").write_text(SCRIPT.replace("LOG", str(log)))
    (tmp_path / "alpha.yaml").write_text(SUITE)
    return load_trigger_suite(tmp_path / "alpha.yaml"), log


def run(
    suite: TriggerSuite, query_id: str, folder: Path, claude: Path, **settings: object
) -> tuple[TriggerRun, dict]:
    """One trigger run through the real CLI, as ``skilltest triggers`` makes it; returns the
    run and the CLI's last event."""
    query = next(q for q in suite.queries if q.id == query_id)
    skill: Skill = suite.skill
    request, watch = trigger_request(
        suite, query, skill, 0, output_dir=folder / "out", calls=folder / f"{query_id}.calls"
    )
    if settings:
        assert request.settings is not None
        request = replace(request, settings={**request.settings, **settings})
    runner = ClaudeCliRunner(find_claude(claude), EmulatorEndpoint())
    outcome = asyncio.run(runner.run(request))
    assert outcome.transcript_path is not None
    last = json.loads(outcome.transcript_path.read_text().splitlines()[-1])
    return trigger_run(0, watch, outcome), last


def test_a_run_that_fires_at_once_costs_one_request(suite, tmp_path, claude_bin):
    fired, last = run(suite[0], "fire", tmp_path, claude_bin)
    assert (fired.ended, fired.reason) == ("fired", "the skill fired (Skill(alpha), tool call 1)")
    assert fired.requests == 1
    assert fired.warnings == ()
    # The CLI ended itself at the hook, with its result line.
    assert (last["type"], last["terminal_reason"]) == ("result", "hook_stopped")


def test_the_call_after_the_budget_never_runs(suite, tmp_path, claude_bin):
    triggers, log = suite
    budget, last = run(triggers, "wander", tmp_path, claude_bin)
    assert budget.ended == "budget"
    assert budget.reason == (
        f"tool-call budget: 1 tool call(s) without the skill, then Bash(echo two >> {log})"
    )
    assert [call.short(200) for call in budget.first_calls] == [
        f"Bash(echo one >> {log})",
        f"Bash(echo two >> {log})",
    ]
    assert log.read_text() == "one\n"
    assert budget.requests == 2
    assert last["terminal_reason"] == "hook_stopped"


def test_a_subagent_that_fires_the_skill_ends_the_session(suite, tmp_path, claude_bin):
    fired, last = run(suite[0], "delegate", tmp_path, claude_bin)
    assert (fired.ended, fired.reason) == ("fired", "the skill fired (Skill(alpha), tool call 2)")
    assert [call.name for call in fired.first_calls] == ["Agent", "Skill"]
    assert fired.requests == 2  # the main agent's Agent call, the subagent's Skill call
    assert fired.warnings == ()
    assert last["terminal_reason"] == "hook_stopped"


def test_a_background_subagent_that_fires_the_skill_is_a_firing_run(suite, tmp_path, claude_bin):
    # Its caller goes on beside it (Claude Code's default for the Agent tool), so the main agent
    # may ask the model again before the subagent decides; that is no broken hook.
    fired, _ = run(suite[0], "background", tmp_path, claude_bin)
    assert (fired.ended, fired.reason) == ("fired", "the skill fired (Skill(alpha), tool call 2)")
    assert fired.warnings == ()


def test_with_hooks_off_the_watch_stops_the_cli_at_its_next_turn(suite, tmp_path, claude_bin):
    fired, last = run(suite[0], "fire", tmp_path, claude_bin, disableAllHooks=True)
    assert (fired.ended, fired.reason) == ("fired", "the skill fired (Skill(alpha), tool call 1)")
    assert fired.requests == 2  # the skill loaded and the model was asked again
    assert fired.warnings == (OVERRAN,)
    assert last["type"] != "result"  # stopped, not ended
