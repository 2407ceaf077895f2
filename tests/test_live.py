"""Opt-in checks against the real Anthropic API: `pytest -m live` with ANTHROPIC_API_KEY set.

They are deselected by default (pyproject's addopts) and never run in CI.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.layers import run_layer

from .conftest import REPO_ROOT

pytestmark = pytest.mark.live


@pytest.fixture(autouse=True)
def _needs_key() -> None:
    if not os.environ.get("ANTHROPIC_API_KEY"):
        pytest.skip("live tests need ANTHROPIC_API_KEY")


def test_pressure_suite_runs_against_the_live_api(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "results.json"
    suite = "tests/skill-pressure/safe-migrations.yaml"
    code = run_layer("pressure", suite, tmp_path, "--backend", "anthropic", "-k", "1")
    document = json.loads(results.read_text())
    assert code in (0, 1)
    assert document["backend"] == "anthropic"
    assert all(run["error"] is None for s in document["scenarios"] for run in s["runs"])
    assert all(
        run["usage"]["output_tokens"] > 0 for s in document["scenarios"] for run in s["runs"]
    )


def test_scenario_runs_through_the_real_cli_against_the_live_api(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "results.json"
    options = ["--backend", "claude", "-k", "1", "--only", "investigate-error-spike"]
    code = run_layer("scenarios", "tests/scenarios/lgtm.yaml", tmp_path, *options)
    document = json.loads(results.read_text())
    assert code in (0, 1)
    assert document["backend"] == "claude"
    runs = document["scenarios"][0]["runs"]
    assert all(run["error"] is None and run["score"] is not None for run in runs)
    kept = "".join(p.read_text() for p in (tmp_path / "output").rglob("*") if p.is_file())
    assert os.environ["ANTHROPIC_API_KEY"] not in kept
