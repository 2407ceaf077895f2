"""``skilltest scenarios --agents``: the agent as a matrix axis. Every scenario runs in each
agent's cell (the real Claude Code and OpenCode CLIs on the emulator), the scenario x cell
table has a column per agent, and "does the lift differ by agent" is read as "by model" is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.gate.cells import matrix_claims
from skilltest.matrix import read_matrix
from skilltest.matrix.compare import compare_lifts

from ..agents.conftest import installed_agent, lgtm_suite  # noqa: F401 (a fixture)

DOCS = (Path(__file__).parents[2] / "docs" / "matrix.md").read_text()
"""docs/matrix.md, which shows the table and the comparison these tests print."""


@pytest.mark.slow
@pytest.mark.cli
def test_a_scenario_runs_in_each_agents_cell_and_its_lift_is_compared_by_agent(
    lgtm_suite: Path,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
):
    installed_agent("opencode")
    project = lgtm_suite.parents[2]
    monkeypatch.chdir(project)
    results, markdown, page = tmp_path / "m.json", tmp_path / "m.md", tmp_path / "m.html"
    code = main(
        [
            "scenarios",
            "tests/scenarios/lgtm.yaml",
            "--skills-dir",
            "skills",
            "--agents",
            "claude-code,opencode",
            "--backend",
            "emulator",
            "-k",
            "2",
            "--only",
            "latency-follow-up",
            "--allow-inconclusive",
            "--output-dir",
            str(tmp_path / "out"),
            "--results",
            str(results),
            "--markdown",
            str(markdown),
            "--report",
            str(page),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out

    # A column per agent, each cell's verdict and lift with its interval, as each agent alone
    # decides it: the skill fires in both, and only its arm passes.
    table = [
        "scenario                agent=claude-code                 agent=opencode",
        "lgtm/latency-follow-up  inconclusive +100% [-20%, +100%]  inconclusive +100% [-20%, +100%]",
    ]
    compared = [
        "scenario                by agent                lift difference           reading",
        "lgtm/latency-follow-up  claude-code - opencode  +0% [-133%, +133%] (95%)  "
        "no difference shown: inconclusive on claude-code, inconclusive on opencode",
    ]
    lines = out.splitlines()
    for line in (*table, *compared):
        assert line in lines, out
        assert line in DOCS  # docs/matrix.md shows them as printed

    document = read_matrix(results)
    assert document["matrix"]["axes"] == [{"name": "agent", "values": ["claude-code", "opencode"]}]
    assert document["matrix"]["cells"] == ["agent=claude-code", "agent=opencode"]
    for cell, name in zip(document["cells"], ("claude-code", "opencode"), strict=True):
        assert cell["results"]["agent"]["name"] == name
        (scenario,) = cell["results"]["scenarios"]
        assert scenario["verdict"] == "inconclusive"
        assert (scenario["with_skill"]["passes"], scenario["without_skill"]["passes"]) == (2, 0)
        assert len(scenario["runs"]) == 4
        assert all(
            Path(run["transcript"]).is_relative_to(tmp_path / "out" / f"agent-{name}")
            for run in scenario["runs"]
        )
    (comparison,) = document["comparisons"]
    assert (comparison["axis"], comparison["first"], comparison["second"]) == (
        "agent",
        "claude-code",
        "opencode",
    )
    assert comparison["verdict"] == "no difference shown"
    assert "| by agent " in markdown.read_text()
    assert "<h2>Across agents</h2>" in page.read_text()

    # The gate requires the opencode cell only; the claude-code one is listed.
    gate = ["gate", str(results), "--allow-offline", "--allow-undecided"]
    code = main([*gate, "--require-cell", "agent=opencode"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{results}: required cells agent=opencode (--require-cell agent=opencode)" in out
    assert f"{results} [agent=claude-code]: not a required cell" in out


def _cell(agent: str, with_passes: int, base_passes: int, runs: int = 20) -> dict[str, object]:
    scenario = {
        "skill": "s",
        "id": "a",
        "verdict": "improved",
        "pass_delta": 0.0,
        "pass_delta_ci": [-1.0, 1.0],
        "confidence": 0.95,
        "repetitions": {"mode": "fixed", "k": runs},
        "with_skill": {"passes": with_passes, "scored": runs},
        "without_skill": {"passes": base_passes, "scored": runs},
    }
    return {
        "id": f"agent={agent}",
        "values": {"agent": agent},
        "results": {"scenarios": [scenario], "agent": {"name": agent, "version": "1"}},
    }


def test_a_skill_that_helps_one_agent_only_differs_by_agent():
    cells = [_cell("claude-code", 20, 0), _cell("opencode", 20, 0), _cell("codex", 0, 0)]
    found = {(c.first, c.second): (c.axis, c.verdict) for c in compare_lifts("scenarios", cells)}
    assert found == {
        ("claude-code", "opencode"): ("agent", "no difference shown"),
        ("claude-code", "codex"): ("agent", "differs"),
        ("opencode", "codex"): ("agent", "differs"),
    }


def test_a_cell_relabelled_as_another_agent_is_caught():
    document = {
        "layer": "scenarios",
        "matrix": {
            "axes": [{"name": "agent", "values": ["claude-code", "opencode"]}],
            "cells": ["agent=claude-code", "agent=opencode"],
        },
        "cells": [_cell("claude-code", 20, 0), _cell("opencode", 20, 0)],
    }
    document["comparisons"] = [
        c.to_dict()
        for c in compare_lifts("scenarios", document["cells"])  # type: ignore[arg-type]
    ]
    assert matrix_claims(document) == []
    document["cells"][1]["results"]["agent"]["name"] = "codex"  # type: ignore[index]
    assert matrix_claims(document) == [
        "cell agent=opencode: its document ran agent codex, not opencode"
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--agents", "claude-code,opencode", "--agent", "codex"],
            "skilltest: error: --agent: --agent codex and --agents name the agent twice\n"
            "  fix: give the agents to compare with --agents only",
        ),
        (
            ["--agents", "claude-code,aider"],
            "skilltest: error: --agents: no agent named 'aider'\n"
            "  fix: name one of: claude-code, opencode, codex, gemini",
        ),
        (
            ["--agents", "opencode,opencode"],
            "skilltest: error: --agents: --agents names 'opencode' twice\n"
            "  fix: name each value once, e.g. --agents claude-code,opencode",
        ),
        (
            ["--agents", "claude-code,opencode", "--claude-versions", "2.1.328"],
            "skilltest: error: --claude-versions: --claude-versions picks versions of Claude "
            "Code, and --agents names opencode too\n"
            "  fix: compare CLI versions in a matrix of their own (--claude-versions without "
            "--agents), or compare agents without --claude-versions",
        ),
    ],
)
def test_an_agent_axis_that_cannot_run_is_refused_before_any_run(argv, message, capsys):
    from ..conftest import REPO_ROOT

    suite = str(REPO_ROOT / "tests/scenarios/lgtm.yaml")
    assert main(["scenarios", suite, "--only", "latency-follow-up", *argv, "--dry-run"]) == 2
    assert message in capsys.readouterr().err


def test_a_suite_that_names_its_agents_runs_a_cell_each(
    lgtm_suite: Path,  # noqa: F811 (the fixture imported above)
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.chdir(lgtm_suite.parents[2])
    text = lgtm_suite.read_text()
    argv = ["scenarios", str(lgtm_suite), "--skills-dir", "skills", "--only", "latency-follow-up"]
    lgtm_suite.write_text("matrix: {agents: [claude-code, codex]}\n" + text)
    code = main([*argv, "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"^agent=claude-code\s+\S+lgtm\.yaml\s+1\s", out, re.MULTILINE)
    assert re.search(r"^agent=codex\s+cell total\s+1\s", out, re.MULTILINE)

    lgtm_suite.write_text("matrix: {agents: [aider]}\n" + text)
    monkeypatch.chdir(lgtm_suite.parent)  # the message names the file as given: lgtm.yaml
    assert main([*argv[:1], "lgtm.yaml", *argv[2:], "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert (
        "'aider' is not one of ['claude-code', 'opencode', 'codex', 'gemini']\n"
        "  fix: expected an agent's name: claude-code, opencode, codex or gemini"
    ) in err
    assert "lgtm.yaml#/matrix/agents/0: 'aider' is not valid here" in err


def test_an_older_matrix_file_without_an_agent_axis_still_reads(tmp_path):
    document = {
        "schema_version": 4,
        "layer": "scenarios",
        "complete": True,
        "interrupted": False,
        "matrix": {
            "axes": [{"name": "model", "values": ["haiku"]}],
            "cells": ["model=haiku"],
            "arms": ["with_skill", "without_skill"],
            "shared_baseline": False,
        },
        "cells": [],
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps(document))
    assert read_matrix(path)["matrix"]["axes"][0]["name"] == "model"
