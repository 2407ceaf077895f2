"""``skilltest triggers --agents``: a trigger suite in a cell per agent (the real Claude Code and
Codex CLIs on the emulator), a column per agent, and each query's firing rate compared between
the agents: a description that fires in Claude Code and never in Codex is said to differ, with
its interval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from skilltest.gate.cells import matrix_claims
from skilltest.matrix import read_matrix
from skilltest.matrix.compare import compare_lifts

from ..agents.conftest import installed_agent
from ..conftest import REPO_ROOT

DOCS = (REPO_ROOT / "docs" / "matrix.md").read_text() + (
    REPO_ROOT / "docs" / "agents.md"
).read_text()
"""docs/matrix.md and docs/agents.md, which show the table and the comparison as printed."""

BY_API = REPO_ROOT / "tests" / "agents" / "triggers" / "by-api.yaml"
"""A trigger suite whose model script fires the skill on Anthropic's Messages API only."""


@pytest.mark.slow
@pytest.mark.cli
def test_a_query_that_fires_in_claude_code_and_not_in_codex_differs_by_agent(
    claude_bin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    installed_agent("codex")
    results, markdown = tmp_path / "matrix.json", tmp_path / "matrix.md"
    code = main(
        [
            "triggers",
            str(BY_API),
            "--skills-dir",
            str(REPO_ROOT / "skills"),
            "--backend",
            "emulator",
            "--agents",
            "claude-code,codex",
            "-k",
            "6",
            "-j",
            "2",
            "--output-dir",
            str(tmp_path / "output"),
            "--results",
            str(results),
            "--markdown",
            str(markdown),
        ]
    )
    out = capsys.readouterr().out

    # The query misses in Codex's cell: the run fails.
    assert code == 1, out
    assert "lgtm/loki-error-spike  pass 100% [54%–100%]  miss 0% [0%–46%]" in out
    assert (
        "lgtm/loki-error-spike  claude-code - codex  +100% [+47%, +100%] (95%)  "
        "differs: fires 6/6 with claude-code, 0/6 with codex"
    ) in out
    for line in out.splitlines():
        if line.startswith("lgtm/loki-error-spike") or line.startswith("query "):
            assert " ".join(line.split()) in " ".join(DOCS.split()), line
    assert (
        "firing rate in the first cell minus in the second [exact unconditional interval at the "
        "level shown]; differs: the interval excludes 0"
    ) in out
    assert "agent=codex: backend emulator (offline: a scripted stand-in)" in out
    assert "agent codex 0.171.0" in out

    document = json.loads(results.read_text())
    (found,) = document["comparisons"]
    assert (found["scenario"], found["axis"], found["first"], found["second"]) == (
        "lgtm/loki-error-spike",
        "agent",
        "claude-code",
        "codex",
    )
    assert (found["difference"], found["verdict"]) == (1.0, "differs")
    assert found["difference_ci"][1] == 1.0 and 0.4 < found["difference_ci"][0] < 0.6
    # The file reads back as a matrix, and the gate finds its comparisons as its cells say.
    read_matrix(results)
    assert matrix_claims(document) == []
    assert "| query" in markdown.read_text() and "firing difference" in markdown.read_text()


def _cell(agent: str, fired: int, k: int, *, adaptive: bool = False) -> dict[str, Any]:
    query = {
        "id": "spike",
        "should_trigger": True,
        "fired": fired,
        "scored": k,
        "total": k,
        "rate": fired / k,
        "ci_low": 0.0 if fired < k else 0.54,
        "ci_high": 1.0 if fired else 0.46,
        "confidence": 0.95,
        "repetitions": {"mode": "auto" if adaptive else "fixed", "k": k},
    }
    return {
        "id": f"agent={agent}",
        "values": {"agent": agent},
        "results": {
            "layer": "triggers",
            "suites": [{"skill": "lgtm", "variant": "current", "queries": [query]}],
        },
    }


def test_firing_rates_are_compared_per_query_between_agents():
    cells = [_cell("claude-code", 6, 6), _cell("opencode", 5, 6), _cell("codex", 0, 6)]
    found = {
        (c.first, c.second): (c.scenario, c.verdict, c.reading, c.confidence)
        for c in compare_lifts("triggers", cells)
    }
    assert found == {
        ("claude-code", "opencode"): (
            "lgtm/spike",
            "no difference shown",
            "fires 6/6 with claude-code, 5/6 with opencode",
            0.95,
        ),
        ("claude-code", "codex"): (
            "lgtm/spike",
            "differs",
            "fires 6/6 with claude-code, 0/6 with codex",
            0.95,
        ),
        ("opencode", "codex"): (
            "lgtm/spike",
            "differs",
            "fires 5/6 with opencode, 0/6 with codex",
            0.95,
        ),
    }


def test_an_adaptive_query_combines_the_cells_own_intervals_at_their_joint_level():
    (found,) = compare_lifts(
        "triggers", [_cell("claude-code", 6, 6, adaptive=True), _cell("codex", 0, 6)]
    )
    # The cells' own 95% intervals [0.54, 1] and [0, 0.46], Bonferroni: at least 90%.
    assert found.confidence == 0.9
    assert (found.difference.low, found.difference.high) == pytest.approx((0.08, 1.0))
    assert found.verdict == "differs"
