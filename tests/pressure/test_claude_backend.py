"""The `claude` backend of the pressure layer: the real CLI, one turn, against the emulator."""

from __future__ import annotations

import json
import re
import time

import pytest

from skilltest.cli import main
from skilltest.emulator import EmulatorServer, ModelScript

from ..conftest import REPO_ROOT

pytestmark = pytest.mark.cli


def run_lgtm(claude_bin, monkeypatch, capsys, script: ModelScript, *options: str):
    """``skilltest pressure`` of the lgtm example suite on the claude backend, against an
    emulator running ``script``; returns the exit code, the output and the main requests."""
    monkeypatch.chdir(REPO_ROOT)
    with EmulatorServer(script) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fake")
        argv = [
            "tests/skill-pressure/lgtm.yaml",
            "--backend",
            "claude",
            "--claude",
            str(claude_bin),
        ]
        code = main(["pressure", *argv, *options])
        requests = [r for r in server.requests if r.path == "/v1/messages" and not r.side_request]
    return code, capsys.readouterr().out, requests


def failing(status: int) -> ModelScript:
    """An emulator that answers every request with ``status``."""
    return ModelScript.from_dict(
        {"schema_version": 1, "faults": {"status": status}, "default": {"text": "x"}}
    )


def test_claude_backend_runs_one_turn_with_tools_disabled(
    claude_bin, tmp_path, monkeypatch, capsys
):
    script = ModelScript.load(REPO_ROOT / "tests/model-scripts/lgtm.pressure.yaml")
    results = tmp_path / "results.json"
    options = ["-k", "1", "-j", "4", "--allow-inconclusive", "--results", str(results)]
    code, out, requests = run_lgtm(claude_bin, monkeypatch, capsys, script, *options)
    # One run per arm decides no verdict; every run passed or was RED as scripted.
    assert code == 0, out
    assert re.search(r"lgtm/aggregation-before-raw-fetch\s+inconclusive\s+1/1 100%", out)
    assert "4 scenarios: 4 inconclusive" in out

    # Eight main requests: four scenarios, two arms, one repetition; none offers a tool.
    assert len(requests) == 8
    assert all(not (r.body.get("tools") or []) for r in requests)
    with_skill = [r for r in requests if "Investigating with Loki" in json.dumps(r.body["system"])]
    assert len(with_skill) == 4
    assert {r.rule_id.split(":")[0] for r in with_skill} == {"skill"}

    document = json.loads(results.read_text())
    assert document["backend"] == "claude"
    run = document["scenarios"][0]["runs"][0]
    assert run["error"] is None and "count_over_time" in run["output"]


def test_claude_backend_reports_a_crashed_run_as_error(claude_bin, monkeypatch, capsys):
    options = ["--skill-only", "-k", "1"]
    code, out, _ = run_lgtm(claude_bin, monkeypatch, capsys, failing(400), *options)
    assert code == 1
    assert out.count(" error ") >= 4
    assert "400" in out


def test_missing_claude_binary_is_bad_input(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fake")
    code = main(
        [
            "pressure",
            "tests/skill-pressure/lgtm.yaml",
            "--backend",
            "claude",
            "--claude",
            str(tmp_path / "no-claude"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "no-claude: no executable file there" in err
    assert "skilltest setup" in err


def run_one_failing(claude_bin, monkeypatch, capsys, status: int, *extra: str):
    """One with-skill run of one scenario against an emulator that answers every request
    with ``status``; returns the exit code, the output and the main requests."""
    only = ["--skill-only", "--only", "aggregation-before-raw-fetch"]
    options = [*only, "-k", "1", "--timeout", "60", *extra]
    return run_lgtm(claude_bin, monkeypatch, capsys, failing(status), *options)


def test_max_retries_is_the_clis_own_retry_count(claude_bin, tmp_path, monkeypatch, capsys):
    started = time.monotonic()
    code, out, requests = run_one_failing(
        claude_bin, monkeypatch, capsys, 529, "--max-retries", "1"
    )

    assert code == 1
    assert "529" in out and "after 1 retry" in out
    assert [r.status for r in requests] == [529, 529]  # the request and one retry
    assert time.monotonic() - started < 120  # the CLI's own ten retries take minutes


def test_a_refused_key_ends_the_run_at_once(claude_bin, tmp_path, monkeypatch, capsys):
    # The default --max-retries (4) would retry a 401 for several seconds; nothing fixes it.
    started = time.monotonic()
    code, out, requests = run_one_failing(claude_bin, monkeypatch, capsys, 401)

    assert code == 1
    assert "the model API answered HTTP 401" in out
    assert "retrying cannot fix it" in out
    assert 1 <= len(requests) <= 2
    assert time.monotonic() - started < 120  # ends, no hang
