"""The example scenario suites (lgtm, safe-migrations, tickets in its controlled world) run
unchanged through OpenCode and Codex on the emulator, each with the verdicts that agent earns:
one test per agent, asserting every scenario's verdict as a user reads it in the results.

OpenCode has Claude Code's tools under its own names: every scenario improves as in Claude Code.
Codex has no file tools and no Glob: it writes files with ``apply_patch``, whose events name the
file and not its contents, so the safe-migrations rubric (patterns over what was written, a Glob
before the Write) cannot be met there: its two scenarios are inconclusive, and say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main

from ..conftest import REPO_ROOT
from .conftest import installed_agent

pytestmark = [pytest.mark.slow, pytest.mark.cli]

IMPROVED = {
    "lgtm/investigate-error-spike": "improved",
    "lgtm/trace-slow-requests": "improved",
    "lgtm/latency-follow-up": "improved",
    "safe-migrations/index-large-table": "improved",
    "safe-migrations/rename-column": "improved",
    "tickets/reassign-after-confirmation": "improved",
    "tickets/does-not-write-twice": "improved",
    "tickets/reads-without-changing": "improved",
    "tickets/recovers-from-429": "improved",
    "tickets/refuses-forbidden-record": "improved",
}
"""Every example scenario improves with its skill (three runs per arm, all with-skill runs
passing and no without-skill run)."""

VERDICTS = {
    "opencode": IMPROVED,
    "codex": {
        **IMPROVED,
        "safe-migrations/index-large-table": "inconclusive",
        "safe-migrations/rename-column": "inconclusive",
    },
}


def run_examples(agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict]:
    installed_agent(agent)
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "results.json"
    code = main(
        [
            "scenarios",
            "--agent",
            agent,
            "--backend",
            "emulator",
            "-j",
            "2",
            "--results",
            str(results),
            "--output-dir",
            str(tmp_path / "output"),
        ]
    )
    return code, json.loads(results.read_text())


@pytest.mark.parametrize("agent", sorted(VERDICTS))
def test_the_example_scenario_suites_run_unchanged_with_each_agents_verdicts(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    code, document = run_examples(agent, tmp_path, monkeypatch)
    out = capsys.readouterr().out

    expected = VERDICTS[agent]
    assert code == (0 if set(expected.values()) == {"improved"} else 1), out
    assert document["agent"]["name"] == agent
    verdicts = {f"{s['skill']}/{s['id']}": s["verdict"] for s in document["scenarios"]}
    assert verdicts == expected
    for scenario in document["scenarios"]:
        name = f"{scenario['skill']}/{scenario['id']}"
        runs = scenario["runs"]
        assert len(runs) == 6 and all(run["error"] is None for run in runs), name
        if expected[name] == "improved":
            assert (scenario["with_skill"]["passes"], scenario["without_skill"]["passes"]) == (3, 0)
        # The skill fired in every with-skill run, by the agent's own rule, and in no other.
        fired = {run["arm"]: run["skills_invoked"] for run in runs}
        assert fired["with_skill"] == [scenario["skill"]] and fired["without_skill"] == [], name
    # The world's scenarios: every without-skill run broke an authority rule, no with-skill run.
    for scenario in document["scenarios"]:
        if scenario["skill"] == "tickets":
            worlds = [(run["arm"], run["world"]["authority_violation"]) for run in scenario["runs"]]
            assert sorted(set(worlds)) == [("with_skill", False), ("without_skill", True)]
    if agent == "codex":
        (rename,) = [s for s in document["scenarios"] if s["id"] == "rename-column"]
        assert rename["reasons"][0] == "with-skill mean 0.33 is below 0.60"
        assert "missing 'Glob → Write'" in out
