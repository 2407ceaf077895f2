"""The cassettes committed under tests/cassettes replay the example suites as recorded.

`make record` writes them; `make test-pressure ARGS="--replay tests/cassettes"` and the same for
`test-scenarios` and `test-triggers` replay them. An edit to an example skill, suite, fixture or model script that
changes what the model is sent makes these tests fail with the replay miss that says what
changed: the fix is `make record`. ``ANTHROPIC_BASE_URL`` points at a closed port, so nothing but
the cassettes can answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.world.instance import sandbox_available
from tests.layers import run_layer

from ..conftest import REPO_ROOT
from .examples import closed_port

CASSETTES = REPO_ROOT / "tests" / "cassettes"


@pytest.fixture(autouse=True)
def closed_api(monkeypatch):
    """Nothing but the cassettes can answer."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", closed_port())


def replayed(
    layer: str, suites: Path, folder: Path, capsys: pytest.CaptureFixture[str], *options: str | Path
) -> str:
    """``skilltest LAYER SUITES --replay tests/cassettes *OPTIONS`` in ``folder``, which must
    exit 0; returns what it printed."""
    code = run_layer(layer, suites, folder, "--replay", CASSETTES, *options)
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def verdicts(results: Path) -> dict[str, str]:
    document = json.loads(results.read_text())
    assert document["replay"]["misses"] == []
    # The committed cassettes were recorded against the emulator: replayed, still offline.
    assert document["provenance"]["recorded_with"] == ["emulator"]
    assert document["provenance"]["origin"] == "offline"
    return {s["id"]: s["verdict"] for s in document["scenarios"]}


def test_pressure_examples_replay_from_the_committed_cassettes(tmp_path, capsys):
    out = replayed("pressure", REPO_ROOT / "tests" / "skill-pressure", tmp_path, capsys)
    found = verdicts(tmp_path / "results.json")
    assert len(found) == 8
    assert sorted(found.values()).count("steers") == 7, found
    assert "8 scenarios: 7 steers, 1 not-red" in out


@pytest.mark.cli
@pytest.mark.parametrize("suite", ["lgtm", "safe-migrations", "tickets"])
def test_scenario_examples_replay_from_the_committed_cassettes(suite, claude_bin, tmp_path, capsys):
    if suite == "tickets" and not sandbox_available()[0]:
        # Recorded in sandbox mode: its settings reach the model, so proxy-env mode misses.
        pytest.skip(f"the tickets world replays in sandbox mode: {sandbox_available()[1]}")
    path = REPO_ROOT / "tests" / "scenarios" / f"{suite}.yaml"
    replayed("scenarios", path, tmp_path, capsys, "--claude", claude_bin, "-j", "2")
    found = verdicts(tmp_path / "results.json")
    assert found and set(found.values()) == {"improved"}, found


@pytest.mark.cli
@pytest.mark.parametrize("suite", ["lgtm", "safe-migrations"])
def test_trigger_examples_replay_from_the_committed_cassettes(suite, example_triggers_replayed):
    """Both example suites in one replay (the session's, which the merge test reads too)."""
    run = example_triggers_replayed()
    assert run.code == 0, run.out
    document = json.loads(run.results.read_text())
    assert document["backend"] == "replay"
    assert document["replay"]["misses"] == []
    [result] = [s for s in document["suites"] if s["skill"] == suite]
    queries = result["queries"]
    assert len(queries) == 8 and all(len(q["runs"]) == 6 for q in queries)
    assert all(q["passed"] for q in queries), run.out
    lines = run.out.splitlines()
    summary = next(i for i, line in enumerate(lines) if line.startswith(f"{suite}: precision "))
    assert lines[summary + 1] == "  8 queries: 8 pass; per run TP 24, FP 0, FN 0, TN 24"
