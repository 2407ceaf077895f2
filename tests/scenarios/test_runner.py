"""One run through a (fake) claude binary: sandbox per arm, kept output, secrets, failures."""

import asyncio
import json
from pathlib import Path

import pytest

from skilltest.claude.binary import find_claude
from skilltest.scenarios.endpoints import LiveEndpoint
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.runner import ClaudeCliRunner, RunRequest
from skilltest.scenarios.suite import load_scenario_suite

SECRET = "sk-test-secret-0123456789"

SUITE = """\
skill: lgtm
scenarios:
  - {id: echo, prompt: echo, expected: {required_patterns: ["lgtm loki"]}}
  - {id: hang, prompt: hang, config: {timeout_ms: 1000}, expected: {required_tools: [Bash]}}
  - {id: hang-partial, prompt: hang, config: {timeout_ms: 1000}, score_partial: true, expected: {required_tools: [Bash]}}
  - {id: crash, prompt: crash, expected: {required_tools: [Bash]}}
  - {id: talk, prompt: hello, turns: [again], expected: {required_tools: [Bash]}}
"""


@pytest.fixture
def suite(tmp_path):
    folder = tmp_path / "skills" / "lgtm"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: lgtm\ndescription: d\n---\nbody\n")
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE)
    return load_scenario_suite(path)


@pytest.fixture
def runner(fake_claude, tmp_path):
    sandboxes = tmp_path / "sandboxes"
    sandboxes.mkdir()
    endpoint = LiveEndpoint({"ANTHROPIC_API_KEY": SECRET})
    return ClaudeCliRunner(find_claude(fake_claude), endpoint, sandbox_base=sandboxes)


def run(runner, suite, scenario_id, arm, tmp_path):
    scenario = next(s for s in suite.scenarios if s.id == scenario_id)
    request = RunRequest(scenario, arm, 0, suite_path=suite.path, output_dir=tmp_path / "output")
    return asyncio.run(runner.run(request))


def test_only_the_with_skill_arm_has_the_skill(runner, suite, tmp_path):
    with_skill = run(runner, suite, "echo", Arm.WITH_SKILL, tmp_path)
    without = run(runner, suite, "echo", Arm.WITHOUT_SKILL, tmp_path)
    assert with_skill.transcript.skills_available == ("lgtm", "doctor")
    assert without.transcript.skills_available == ("doctor",)
    assert with_skill.warnings == () and without.warnings == ()


def test_output_is_kept_per_run_and_secrets_are_redacted(runner, suite, tmp_path):
    outcome = run(runner, suite, "echo", Arm.WITH_SKILL, tmp_path)
    folder = tmp_path / "output" / "lgtm" / "echo"
    assert outcome.transcript_path == folder / "with-skill-0.ndjson"
    assert outcome.stderr_path == folder / "with-skill-0.stderr.txt"
    kept = outcome.transcript_path.read_text()
    assert SECRET not in kept
    # The agent's $ANTHROPIC_API_KEY is the run's placeholder, itself kept out of what is stored.
    assert "[REDACTED:ANTHROPIC_API_KEY_PLACEHOLDER]" in kept
    assert "sk-skilltest-placeholder-" not in kept
    (call,) = outcome.transcript.tool_calls
    assert SECRET not in json.dumps(call.input)
    assert outcome.transcript.error is None


def test_each_run_gets_a_fresh_home_and_workdir_that_are_removed(runner, suite, tmp_path):
    outcome = run(runner, suite, "echo", Arm.WITHOUT_SKILL, tmp_path)
    init = json.loads(outcome.transcript_path.read_text().splitlines()[0])
    home, cwd = Path(init["home"]), Path(init["cwd"])
    assert home.parent == cwd.parent
    assert home.parent.parent == tmp_path / "sandboxes"
    assert (home.name, cwd.name) == ("home", "work")
    assert not home.parent.exists()
    argv = init["argv"]
    assert argv[argv.index("--setting-sources") + 1] == "project"
    assert argv[-2:] == ["--", "echo"]


def test_a_timeout_in_the_agents_own_command_is_a_scored_failing_run(runner, suite, tmp_path):
    # The limit fell while the agent's own Bash call ran: the hang is the agent's, so the run is
    # scored (and fails), its reason naming the call.
    outcome = run(runner, suite, "hang", Arm.WITH_SKILL, tmp_path)
    reason = "cut off after 1 s while its Bash call `sleep` was still running"
    assert outcome.transcript.error is None
    assert (outcome.transcript.ended, outcome.transcript.hung) == (reason, reason)
    assert [c.name for c in outcome.transcript.tool_calls] == ["Bash"]
    assert '"tool_use"' in outcome.transcript_path.read_text()


def test_score_partial_does_not_change_a_hang_of_the_agents_own(runner, suite, tmp_path):
    outcome = run(runner, suite, "hang-partial", Arm.WITH_SKILL, tmp_path)
    reason = "cut off after 1 s while its Bash call `sleep` was still running"
    assert outcome.transcript.error is None
    assert (outcome.transcript.ended, outcome.transcript.hung) == (reason, reason)


def test_a_crash_is_an_unscored_run_with_status_and_stderr(runner, suite, tmp_path):
    outcome = run(runner, suite, "crash", Arm.WITH_SKILL, tmp_path)
    assert outcome.transcript.error == (
        "the CLI printed no stream-json events (exit status 3); stderr: fatal: something broke"
    )
    assert outcome.stderr_path.read_text() == "fatal: something broke\n"


def test_follow_up_turns_join_the_conversation(runner, suite, tmp_path):
    outcome = run(runner, suite, "talk", Arm.WITH_SKILL, tmp_path)
    assert outcome.transcript.assistant_text == ("turn 1: hello", "turn 2: again")
    assert len(outcome.transcript.results) == 2
