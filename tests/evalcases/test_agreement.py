"""The example plugin's evals/ folder, unchanged, through the pinned CLI's own ``claude plugin
eval`` and through ``skilltest scenarios``: every grader of every run passes or fails alike.

Both run offline against the emulator on loopback with the eval folder's model script, which
plays the agent, the llm graders' judge and the agent mock of ``search_traces``. The CLI runs
with ``--trust-plugin`` (no prompt), ``--no-publish`` (no upload), ``--allow-tools Write`` (the
case that writes NOTES.md), ``--scaffold`` (the case with a scaffold script), ``--runs 1`` and
``--json``; it needs nothing else offline. Both arms are compared: the CLI's ``with`` and
``without``, skilltest's ``with_skill`` and ``without_skill``; indicators (``withOnly``) only
exist in the arm with the plugin, in both tools.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.report.files import read_results

from ..bare_claude import bare_env
from ..layers import run_layer

pytestmark = pytest.mark.cli

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "observability"
ARMS = {"with": "with_skill", "without": "without_skill"}


def copy(into: Path) -> Path:
    target = into / "observability"
    shutil.copytree(
        PLUGIN, target, ignore=shutil.ignore_patterns("output", "results", "__pycache__")
    )
    return target


def cli_plugin_eval(claude: Path, plugin: Path, home: Path) -> dict[str, Any]:
    """``claude plugin eval`` of ``plugin`` against an emulator on loopback; its JSON result."""
    script = ModelScript.load(plugin / "evals" / "model-script.yaml")
    result = plugin.parent / "plugin-eval.json"
    with EmulatorServer(script, host="127.0.0.1", port=0) as server:
        env = {**bare_env(home), "ANTHROPIC_BASE_URL": server.base_url}
        argv = [
            str(claude),
            "plugin",
            "eval",
            str(plugin),
            "--trust-plugin",
            "--no-publish",
            "--allow-tools",
            "Write",
            "--scaffold",
            "--runs",
            "1",
            "--json",
            str(result),
        ]
        done = subprocess.run(
            argv,
            env=env,
            cwd=plugin.parent,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert result.is_file(), (
        f"claude plugin eval wrote no result (exit {done.returncode}): {done.stderr[-2000:]}"
    )
    loaded: dict[str, Any] = json.loads(result.read_text())
    return loaded


def per_grader_from_cli(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, bool]]:
    return {
        (case["name"], ARMS[arm]): {g["name"]: g["passed"] for g in runs[0]["graders"]}
        for case in document["cases"]
        for arm, runs in case["arms"].items()
    }


def per_grader_from_skilltest(results: dict[str, Any]) -> dict[tuple[str, str], dict[str, bool]]:
    return {
        (scenario["id"], run["arm"]): {c["name"]: c["passed"] for c in run["checks"]}
        for scenario in results["scenarios"]
        for run in scenario["runs"]
    }


def scores(
    document: dict[str, Any], results: dict[str, Any]
) -> tuple[dict[Any, float], dict[Any, float]]:
    cli = {
        (c["name"], ARMS[arm]): round(runs[0]["score"], 4)
        for c in document["cases"]
        for arm, runs in c["arms"].items()
    }
    ours = {
        (s["id"], r["arm"]): round(r["score"], 4) for s in results["scenarios"] for r in s["runs"]
    }
    return cli, ours


def test_the_cli_s_plugin_eval_and_skilltest_grade_every_run_alike(tmp_path, claude_bin):
    home = tmp_path / "home"
    home.mkdir()
    document = cli_plugin_eval(claude_bin, copy(tmp_path / "cli"), home)
    assert document["claudeVersion"] == "2.1.328"
    ours = copy(tmp_path / "skilltest")
    run_layer("scenarios", ours / "evals", tmp_path, "--claude", claude_bin, "-k", "1", "-j", "2")
    results = read_results(tmp_path / "results.json", "scenarios")

    cli, skilltest = per_grader_from_cli(document), per_grader_from_skilltest(results)
    assert (
        sorted(cli)
        == sorted(skilltest)
        == [
            ("error-spike", "with_skill"),
            ("error-spike", "without_skill"),
            ("no-action", "with_skill"),
            ("no-action", "without_skill"),
            ("slow-checkout", "with_skill"),
            ("slow-checkout", "without_skill"),
        ]
    )
    for run in cli:
        assert skilltest[run] == cli[run], run
    # Not agreement on nothing: both tools fail the baseline's graders the plugin makes pass.
    failing = sorted(
        (run, name) for run, graded in cli.items() for name, ok in graded.items() if not ok
    )
    assert failing == [
        (("error-spike", "without_skill"), "answer-names-service"),
        (("error-spike", "without_skill"), "counts-first"),
        (("error-spike", "without_skill"), "notes-name-service"),
        (("error-spike", "without_skill"), "one-log-query"),
        (("slow-checkout", "without_skill"), "answer-gives-milliseconds"),
        (("slow-checkout", "without_skill"), "filters-by-duration"),
        (("slow-checkout", "without_skill"), "skill-before-search"),
        (("slow-checkout", "without_skill"), "trace-judged"),
    ]
    # Indicators are the same graders in both, and the runs score the same.
    cli_indicators = {
        g["name"]
        for c in document["cases"]
        for g in c["arms"]["with"][0]["graders"]
        if g["withOnly"]
    }
    our_indicators = {
        c["name"]
        for s in results["scenarios"]
        for r in s["runs"]
        for c in r["checks"]
        if c.get("scored") is False
    }
    assert cli_indicators == our_indicators == {"asked-the-server", "loads-the-skill"}
    cli_scores, our_scores = scores(document, results)
    assert our_scores == cli_scores
