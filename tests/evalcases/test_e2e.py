"""Claude Code eval cases run as scenarios, end to end: the real claude CLI against the emulator.

The example plugin's evals/ folder runs through ``skilltest scenarios``: each grader is decided
as the CLI's plugin eval decides it, the mocks are real MCP servers (an agent responder answered
by the model script through the run's endpoint), indicators are shown and never scored, and a
recording replays the agent's, the judge's and the mock agent's answers with no model at all.
A mock whose guard a call breaks aborts and vetoes the run; a scaffold that fails leaves the run
unscored; a history file is a resumed session. An ordinary scenario suite with a mocks/ folder
beside it gets the same mocks, with no plugin and no server of its own.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.report.files import read_results

from ..bare_claude import bare_env
from ..layers import run_layer

pytestmark = pytest.mark.cli

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "observability"


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    copy = tmp_path / "observability"
    shutil.copytree(PLUGIN, copy, ignore=shutil.ignore_patterns("output", "results", "__pycache__"))
    return copy


def runs(results: dict, scenario: str, arm: str) -> list[dict]:
    [found] = [s for s in results["scenarios"] if s["id"] == scenario]
    return [run for run in found["runs"] if run["arm"] == arm]


def graded(run: dict) -> dict[str, bool]:
    return {check["name"]: check["passed"] for check in run["checks"]}


def indicators(run: dict) -> list[str]:
    return [check["name"] for check in run["checks"] if check.get("scored") is False]


def test_the_example_eval_cases_run_as_scenarios_and_grade_as_the_cli_does(plugin, claude_bin):
    code = run_layer(
        "scenarios", plugin / "evals", plugin, "--claude", claude_bin, "-k", "1", "-j", "2"
    )
    assert code == 1  # one run per arm decides nothing: inconclusive
    results = read_results(plugin / "results.json", "scenarios")
    assert [(s["skill"], s["id"], s["verdict"]) for s in results["scenarios"]] == [
        ("observability", "error-spike", "inconclusive"),
        ("observability", "no-action", "inconclusive"),
        ("observability", "slow-checkout", "inconclusive"),
    ]
    [spike] = runs(results, "error-spike", "with_skill")
    assert graded(spike) == {
        "answer-names-service": True,
        "asked-the-server": True,
        "counts-first": True,
        "loads-the-skill": True,
        "notes-name-service": True,
        "notes-written": True,
        "one-log-query": True,
    }
    assert indicators(spike) == ["asked-the-server", "loads-the-skill"]
    assert spike["score"] == 1.0
    [unguided] = runs(results, "error-spike", "without_skill")
    # Indicators belong to the arm with the plugin only.
    assert graded(unguided) == {
        "answer-names-service": False,
        "counts-first": False,
        "notes-name-service": False,
        "notes-written": True,
        "one-log-query": False,
    }
    assert unguided["score"] == pytest.approx(1 / 6)  # one-log-query weighs 2
    # The mock server answered the call the agent made, under the plugin's tool name.
    query = next(c for c in spike["tool_calls"] if c["name"].endswith("__query_logs"))
    assert query["name"] == "mcp__plugin_observability_telemetry__query_logs"
    assert query["status"] == "ran"

    [slow] = runs(results, "slow-checkout", "with_skill")
    assert all(graded(slow).values()) and slow["score"] == 1.0
    [slow_unguided] = runs(results, "slow-checkout", "without_skill")
    # SLOW.md was there before the agent (the scaffold wrote it): never "created by the run".
    assert [name for name, passed in graded(slow_unguided).items() if passed] == ["note-left-alone"]
    for arm in ("with_skill", "without_skill"):
        [quiet] = runs(results, "no-action", arm)
        assert all(graded(quiet).values()) and quiet["score"] == 1.0
    # Raw output goes where the eval folder keeps it, named after the plugin.
    assert (plugin / "output" / "observability" / "error-spike" / "with-skill-0.ndjson").is_file()


def test_mock_agents_and_judges_replay_from_cassettes_with_no_model(plugin, claude_bin):
    cassettes = plugin / "cassettes"
    options = ("--claude", claude_bin, "-k", "1", "--only", "slow-checkout", "--skill-only")
    options += ("--allow-inconclusive",)  # one run decides nothing; the run itself is the point
    assert run_layer("scenarios", plugin / "evals", plugin, *options, "--record", cassettes) == 0
    (plugin / "evals" / "model-script.yaml").unlink()  # no script, no emulator: only the tape
    replayed = plugin / "replayed"
    replayed.mkdir()
    code = run_layer("scenarios", plugin / "evals", replayed, *options, "--replay", cassettes)
    assert code == 0
    [run] = runs(
        read_results(replayed / "results.json", "scenarios"), "slow-checkout", "with_skill"
    )
    assert run["score"] == 1.0 and graded(run)["trace-judged"]
    tape = "\n".join(p.read_text() for p in cassettes.rglob("*.yaml"))
    assert "standing in for the MCP server" in tape and "evaluation judge" in tape


def test_a_call_that_breaks_a_guard_aborts_and_vetoes_the_run(plugin, claude_bin):
    case = plugin / "evals" / "week-of-logs"
    (case / "graders").mkdir(parents=True)
    (case / "prompt.md").write_text("---\nruns: 1\n---\nError spike in checkout over the week.")
    (case / "graders" / "answered.md").write_text("---\ntype: regex\n---\n.")
    script = plugin / "evals" / "model-script.yaml"
    script.write_text(
        script.read_text().replace(
            "rules:\n",
            "rules:\n"
            "  - id: a-week\n"
            "    when: {user: '(?i)over the week', skill: log-triage, turn: 1}\n"
            "    reply:\n"
            "      tool_calls:\n"
            "        - name: mcp__plugin_observability_telemetry__query_logs\n"
            "          input: {query: 'count_over_time({service_name=\"checkout\"} [5m])', since: 7d}\n"
            "  - id: after-the-abort\n"
            "    when: {user: '(?i)over the week'}\n"
            "    reply: {text: 'Still here.'}\n",
            1,
        )
    )
    options = ("--claude", claude_bin, "--only", "week-of-logs", "--skill-only")
    assert run_layer("scenarios", plugin / "evals", plugin, *options) == 1
    [run] = runs(read_results(plugin / "results.json", "scenarios"), "week-of-logs", "with_skill")
    assert run["score"] == 0.0 and run["error"] is None
    assert run["vetoes"] == [
        "check 'mock abort' failed: a mock aborted the run: mocks/telemetry/query_logs: input "
        'violates expect: since = "7d" is not one of [1h, 30m, 15m]'
    ]
    assert run["ended"].startswith("a mock aborted the run: telemetry/query_logs")


def test_a_failing_scaffold_leaves_the_run_unscored(plugin, claude_bin):
    (plugin / "evals" / "slow-checkout" / "scaffold.sh").write_text("echo no disk >&2; exit 3\n")
    options = ("--claude", claude_bin, "-k", "1", "--only", "slow-checkout", "--skill-only")
    assert run_layer("scenarios", plugin / "evals", plugin, *options) == 1
    [run] = runs(read_results(plugin / "results.json", "scenarios"), "slow-checkout", "with_skill")
    assert run["score"] is None
    assert run["error"] == "setup scaffold.sh failed (exit 3): no disk"


def test_a_history_file_is_a_resumed_session(plugin, claude_bin, tmp_path):
    # A first session, saved where Claude Code saves it, becomes the case's history file.
    script = ModelScript.from_dict(
        {
            "schema_version": 1,
            "rules": [{"id": "hum", "when": {"user": "llamas"}, "reply": {"text": "They hum."}}],
        },
        source="<first session>",
    )
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    with EmulatorServer(script) as server:
        env = {**bare_env(home), "ANTHROPIC_BASE_URL": server.base_url}
        done = subprocess.run(
            [str(claude_bin), "-p", "Tell me about llamas."],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    [session] = list(home.rglob("*.jsonl"))
    case = plugin / "evals" / "follow-up"
    (case / "graders").mkdir(parents=True)
    shutil.copyfile(session, case / "history.jsonl")
    (case / "case.yaml").write_text(
        'schema_version: "1.0"\ncontext: {history_file: history.jsonl}\n'
        "execution: {prompt: 'What do they eat?'}\nruns: 1\n"
        "graders: [{name: remembers, type: regex, pattern: ^Grass}]\n"
    )
    script_file = plugin / "evals" / "model-script.yaml"
    script_file.write_text(
        script_file.read_text().replace(
            "rules:\n",
            "rules:\n"
            "  - id: follow-up\n"
            "    when: {any_text: 'Tell me about llamas', user: 'What do they eat'}\n"
            "    reply: {text: 'Grass, like the llamas you asked about.'}\n",
            1,
        )
    )
    options = ("--claude", claude_bin, "--only", "follow-up", "--skill-only")
    assert run_layer("scenarios", plugin / "evals", plugin, *options, "--allow-inconclusive") == 0
    [run] = runs(read_results(plugin / "results.json", "scenarios"), "follow-up", "with_skill")
    assert graded(run) == {"remembers": True}
    # The case's file is left as it was: the run resumed a copy.
    assert (case / "history.jsonl").read_bytes() == session.read_bytes()
