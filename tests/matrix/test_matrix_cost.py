"""A matrix's cost: `--dry-run` prices every cell and the whole matrix; `--max-cost-usd` holds
for the whole matrix and leaves every cell with a comparable share of its runs."""

from __future__ import annotations

import re

import pytest

from skilltest.cli import EXIT_MAX_COST, main
from skilltest.matrix import read_matrix
from tests.projects import demo_script, numbered_suite, write_demo_project

from ..conftest import REPO_ROOT

SCRIPT = "tests/model-scripts/lgtm.by-model.pressure.yaml"


def test_the_dry_run_prices_50_scenarios_on_3_models_at_5_runs_per_cell_and_in_total(
    tmp_path, capsys
):
    suite = write_demo_project(tmp_path, numbered_suite(50, 5), demo_script("count_over_time"))
    code = main(["pressure", str(suite), "--models", "haiku,sonnet,opus", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("dry run: nothing was called")
    totals = {
        match["cell"]: (match["units"], match["runs"], match["requests"], match["usd"])
        for match in re.finditer(
            r"^(?P<cell>model=\w+)\s+cell total\s+(?P<units>\d+)\s+(?P<runs>[\d,]+)\s+"
            r"(?P<requests>[\d,]+)\s+[\d,]+\s+[\d,]+\s+\$(?P<usd>[\d.]+)$",
            out,
            re.MULTILINE,
        )
    }
    assert sorted(totals) == ["model=haiku", "model=opus", "model=sonnet"]
    # Two arms of 5 runs per scenario: 500 runs per cell, 750 per arm over the matrix.
    assert {value[:3] for value in totals.values()} == {("50", "500", "500")}
    usd = {cell: float(value[3]) for cell, value in totals.items()}
    assert usd["model=haiku"] < usd["model=sonnet"] < usd["model=opus"]
    matrix = re.search(r"^\s+matrix total\s+150\s+1,500\s+1,500\s.*\$(?P<usd>[\d.]+)$", out, re.M)
    assert matrix is not None, out
    assert float(matrix["usd"]) == pytest.approx(sum(usd.values()), abs=0.0002)  # each rounded


def test_max_cost_stops_every_cell_with_about_the_same_share_of_its_runs(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "matrix.json"
    argv = ["pressure", "lgtm", "--models", "haiku,opus", "--script", SCRIPT]
    argv += ["--only", "aggregation-*", "--only", "discovery-*", "-k", "12"]
    # The dry run prices the matrix at $0.66 (opus five times haiku); a tenth of it stops both.
    code = main([*argv, "--max-cost-usd", "0.1", "--results", str(results)])
    out = capsys.readouterr().out
    assert code == EXIT_MAX_COST == 4
    document = read_matrix(results)
    assert document["complete"] is False
    spending = document["spending"]
    assert spending["limit_usd"] == 0.1
    assert 0 < spending["spent_usd"] <= 0.1
    assert spending["stopped_cells"] == ["model=haiku", "model=opus"]
    made = {cell["id"]: cell["results"]["stopped"]["runs"] for cell in document["cells"]}
    # Each cell drew dollars in proportion to its estimate, so each made about the same runs
    # (within the runs in flight at once, -j 4), however much dearer opus is.
    assert min(made.values()) > 4
    assert abs(made["model=haiku"] - made["model=opus"]) <= 4, made
    shares = [cell["results"]["stopped"]["limit_usd"] for cell in document["cells"]]
    assert shares[1] > 3 * shares[0]
    assert "stopped before every run: model=haiku, model=opus" in out
    assert f"stopped, results incomplete: {spending['reason']}" in out
    assert spending["reason"].startswith("model=haiku's share of --max-cost-usd 0.1 ($")
