"""`--record` then `--replay` of another agent's runs, through its real CLI.

An example scenario (and a few trigger queries) run in OpenCode and in Codex against the
emulator with ``--record DIR``, then again with ``--replay DIR``: with the suite's model script
gone, the emulator unable to start and ``ANTHROPIC_BASE_URL`` at a closed port, only the
cassettes can answer, and the user reads the same verdicts and scores. A suite whose prompt
changed since recording misses, as Claude Code's stale cassettes do, and another agent's
replay of them misses naming whose runs they hold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from skilltest.replay.cassette import Cassette

from ..replay.examples import closed_port
from .conftest import installed_agent

pytestmark = pytest.mark.slow

SCENARIO = "latency-follow-up"
PROMPT = "What's the latency of payment-service right now?"
API = {"opencode": "anthropic", "codex": "responses", "gemini": "gemini"}
VERSION = {"opencode": "1.18.33", "codex": "0.171.0", "gemini": "0.61.0"}
OTHER = {"opencode": "codex", "codex": "opencode", "gemini": "codex"}
ENDPOINTS = {
    "opencode": {None},  # the Messages API's path is the cassette's default
    "codex": {"/v1/responses"},
    # Gemini CLI's turns, and its helper requests (routing, loop checks) to a smaller model
    "gemini": {
        "/v1beta/models/gemini-3.8-flash:streamGenerateContent",
        "/v1beta/models/gemini-3.5-flash-lite:generateContent",
    },
}


class NoEmulator:
    """Stands in for the emulator during a replay: starting one fails the test."""

    started = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        NoEmulator.started += 1
        raise AssertionError("a replay started the model emulator")


def only_cassettes_answer(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No model script left in the suite, no emulator that can start, the API at a closed
    port: a model request that does not come from a cassette has nothing to reach."""
    kept = [line for line in suite.read_text().splitlines() if "model_script:" not in line]
    suite.write_text("\n".join(kept) + "\n")
    NoEmulator.started = 0
    monkeypatch.setattr("skilltest.emulator.EmulatorServer", NoEmulator)
    monkeypatch.setattr("skilltest.emulator.server.EmulatorServer", NoEmulator)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", closed_port())


def run(layer: str, suite: Path, agent: str, *extra: str | Path) -> int:
    skills = suite.parents[2] / "skills"
    argv = [layer, str(suite), "--skills-dir", str(skills), "--agent", agent]
    return main([*argv, "--allow-inconclusive", *(str(e) for e in extra)])


def runs_by_arm(results: Path) -> dict[str, list[dict[str, Any]]]:
    (scenario,) = json.loads(results.read_text())["scenarios"]
    runs: dict[str, list[dict[str, Any]]] = {}
    for each in scenario["runs"]:
        runs.setdefault(each["arm"], []).append(each)
    return runs


def seen(run_: dict[str, Any]) -> tuple[Any, ...]:
    """What a user reads of a run: its score, error, skills and calls."""
    calls = [(call["name"], call["input"].get("command")) for call in run_["tool_calls"]]
    return run_["score"], run_["error"], run_["skills_invoked"], calls


def table_row(printed: str) -> str:
    (row,) = [line for line in printed.splitlines() if line.startswith(f"lgtm/{SCENARIO} ")]
    return row


@pytest.mark.parametrize("agent", ["opencode", "codex", "gemini"])
def test_a_recorded_scenario_replays_to_the_same_verdict_without_a_model(
    agent: str,
    lgtm_suite: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    installed_agent(agent)
    cassettes, recorded = tmp_path / "cassettes", tmp_path / "recorded.json"
    only = ("-k", "1", "--only", SCENARIO)

    code = run(
        "scenarios", lgtm_suite, agent, *only, "--backend", "emulator", "--record", cassettes,
        "--output-dir", tmp_path / "out-recorded", "--results", recorded,
    )  # fmt: skip
    printed = capsys.readouterr()
    assert code == 0, printed.out + printed.err
    assert f"2 cassette(s) written under {cassettes}" in printed.out
    for arm in ("with_skill", "without_skill"):
        path = cassettes / "lgtm" / SCENARIO / f"{arm}.yaml"
        cassette = Cassette.load(path, layer="scenarios")
        # The cassette names the API it holds, and what answered it.
        assert f"\napi: {API[agent]}\n" in path.read_text()
        assert (cassette.api, cassette.backend) == (API[agent], "emulator")
        assert (cassette.agent, cassette.cli_version) == (agent, VERSION[agent])
        exchanges = cassette.repetitions[0]
        assert {e.request.get("endpoint") for e in exchanges} == ENDPOINTS[agent]
        # Both turns of the conversation, the follow-up included, are on tape.
        assert any("an hour ago" in json.dumps(e.request) for e in exchanges)

    # replay status judges them by the agent's own version, not claude's.
    code = main(["replay", "status", str(cassettes), "--check", "--claude-version", "2.1.328"])
    listed = capsys.readouterr().out
    assert code == 0, listed
    assert listed.count(f" {agent} {VERSION[agent]} ") == 2
    assert listed.splitlines()[-1] == "2 cassettes: 2 fresh, 0 stale"

    only_cassettes_answer(lgtm_suite, monkeypatch)
    replayed = tmp_path / "replayed.json"
    code = run(
        "scenarios", lgtm_suite, agent, *only, "--replay", cassettes,
        "--output-dir", tmp_path / "out-replayed", "--results", replayed,
    )  # fmt: skip
    again = capsys.readouterr()
    assert code == 0, again.out + again.err
    assert NoEmulator.started == 0
    assert f"{agent} {VERSION[agent]}, replay backend (recorded answers)" in again.out
    assert "offline: these numbers come from cassettes recorded against the skilltest emulator" in (
        again.out + again.err
    )
    # The verdict, pass counts, scores and intervals a user reads are the recording's.
    assert table_row(again.out) == table_row(printed.out)
    assert "1 scenarios: 1 inconclusive; 0 passed" in again.out
    document = json.loads(replayed.read_text())
    assert document["backend"] == "replay"
    assert document["replay"] == {"mode": "replay", "directory": str(cassettes), "misses": []}
    assert document["agent"] == {"name": agent, "version": VERSION[agent]}
    before, now = runs_by_arm(recorded), runs_by_arm(replayed)
    assert {arm: [seen(r) for r in runs] for arm, runs in now.items()} == {
        arm: [seen(r) for r in runs] for arm, runs in before.items()
    }
    assert [r["score"] for r in now["with_skill"] + now["without_skill"]] == [1.0, 0.0]
    # Every answer came from the cassettes: no request reached a server.
    for each in now["with_skill"] + now["without_skill"]:
        assert each["answered_by"]["endpoint"] == "cassette"
        assert each["recorded_with"] == "emulator"

    # The other agent cannot replay them: each run says whose runs the cassette holds.
    installed_agent(OTHER[agent])
    other = tmp_path / "other.json"
    code = run(
        "scenarios", lgtm_suite, OTHER[agent], *only, "--replay", cassettes,
        "--output-dir", tmp_path / "out-other", "--results", other,
    )  # fmt: skip
    assert code == 2, capsys.readouterr().out
    for arm, (each,) in runs_by_arm(other).items():
        cassette = cassettes / "lgtm" / SCENARIO / f"{arm}.yaml"
        assert each["error"] == (
            f"replay miss: {cassette}, repetition 0, step 0: the cassette holds runs of {agent}, "
            f"and this run is {OTHER[agent]}'s: record each agent into a folder of its own "
            "(--record DIR)"
        )

    # The suite's prompt changed since recording: the cassettes are stale, and each run says
    # where and how.
    lgtm_suite.write_text(lgtm_suite.read_text().replace(PROMPT, "How slow is payment-service?"))
    stale = tmp_path / "stale.json"
    code = run(
        "scenarios", lgtm_suite, agent, *only, "--replay", cassettes,
        "--output-dir", tmp_path / "out-stale", "--results", stale,
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 2, out
    assert out.splitlines()[-1] == "2 replay misses: re-record with --record (or --record-missing)"
    assert NoEmulator.started == 0
    for arm, (each,) in runs_by_arm(stale).items():
        cassette = cassettes / "lgtm" / SCENARIO / f"{arm}.yaml"
        assert each["error"].startswith(
            f"replay miss: {cassette}, repetition 0, step 0: no recorded request matches; "
            "nearest is step "
        ), each["error"]
        assert ': differs: "' in each["error"] and "How slow is payment-service?" in each["error"]
        assert each["score"] is None


FIRED = {
    # Codex loads a skill by reading its SKILL.md; Gemini CLI through activate_skill.
    "codex": "the skill fired (Bash(cat .agents/skills/lgtm/SKILL.md), tool call 1)",
    "gemini": "the skill fired (Skill(lgtm), tool call 1)",
}
TRIGGER_QUERIES = ("--only", "loki-error-spike", "--only", "capital-of-france")


@pytest.fixture
def trigger_suite(lgtm_suite: Path) -> Path:
    """The lgtm example trigger suite beside the scenario suite, with its model script and
    its distractor's skill."""
    from ..conftest import REPO_ROOT

    project = lgtm_suite.parents[2]
    (project / "tests" / "triggers").mkdir()
    script = "lgtm.triggers.yaml"
    (project / "tests" / "model-scripts" / script).write_text(
        (REPO_ROOT / "tests" / "model-scripts" / script).read_text()
    )
    distractor = REPO_ROOT / "skills" / "safe-migrations" / "SKILL.md"
    (project / "skills" / "safe-migrations").mkdir()
    (project / "skills" / "safe-migrations" / "SKILL.md").write_text(distractor.read_text())
    suite = project / "tests" / "triggers" / "lgtm.yaml"
    suite.write_text((REPO_ROOT / "tests" / "triggers" / "lgtm.yaml").read_text())
    return suite


def trigger_runs(results: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Per query, how each run ended and why."""
    (suite,) = json.loads(results.read_text())["suites"]
    return {
        query["id"]: [(r["ended"], r["reason"]) for r in query["runs"]]
        for query in suite["queries"]
    }


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_recorded_trigger_runs_replay_to_the_same_rates_without_a_model(
    agent: str,
    trigger_suite: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    installed_agent(agent)
    cassettes, recorded = tmp_path / "cassettes", tmp_path / "recorded.json"
    code = run(
        "triggers", trigger_suite, agent, "-k", "1", *TRIGGER_QUERIES, "--backend", "emulator",
        "--record", cassettes, "--output-dir", tmp_path / "out-recorded", "--results", recorded,
    )  # fmt: skip
    printed = capsys.readouterr()
    assert code == 0, printed.out + printed.err
    for query in ("loki-error-spike", "capital-of-france"):
        cassette = Cassette.load(cassettes / "lgtm" / query / "current.yaml", layer="triggers")
        assert (cassette.api, cassette.backend) == (API[agent], "emulator")

    only_cassettes_answer(trigger_suite, monkeypatch)
    replayed = tmp_path / "replayed.json"
    code = run(
        "triggers", trigger_suite, agent, "-k", "1", *TRIGGER_QUERIES, "--replay", cassettes,
        "--output-dir", tmp_path / "out-replayed", "--results", replayed,
    )  # fmt: skip
    again = capsys.readouterr()
    assert code == 0, again.out + again.err
    assert NoEmulator.started == 0
    assert trigger_runs(replayed) == trigger_runs(recorded)
    assert trigger_runs(replayed) == {
        "loki-error-spike": [("fired", FIRED[agent])],
        "capital-of-france": [("not-fired", None)],
    }
    rows = [line for line in again.out.splitlines() if line.startswith("lgtm/")]
    assert rows == [line for line in printed.out.splitlines() if line.startswith("lgtm/")]
    assert json.loads(replayed.read_text())["replay"]["misses"] == []
