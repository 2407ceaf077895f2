"""`skilltest scenarios --models`: the real claude CLI against the emulator, once per model; each
cell asks for its model and says which model answered, as the API named it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.matrix import read_matrix

from ..conftest import REPO_ROOT

pytestmark = pytest.mark.cli


def test_each_cell_runs_the_cli_with_its_model_and_keeps_its_transcripts_apart(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(REPO_ROOT)
    # The example script names its stand-in model; without that line the emulator answers in
    # the name of the model the CLI asked for.
    text = (REPO_ROOT / "tests/model-scripts/lgtm.scenarios.yaml").read_text()
    script = tmp_path / "echo-model.yaml"
    script.write_text(re.sub(r"(?m)^model: .*$", "", text))
    results, output = tmp_path / "matrix.json", tmp_path / "out"
    code = main(
        [
            "scenarios",
            "tests/scenarios/lgtm.yaml",
            "--models",
            "haiku,sonnet",
            "--script",
            str(script),
            "--only",
            "investigate-*",
            "-k",
            "2",
            "--results",
            str(results),
            "--output-dir",
            str(output),
        ]
    )
    out = capsys.readouterr().out
    assert code in (0, 1), out
    assert re.search(r"^scenario\s+model=haiku\s+model=sonnet$", out, re.MULTILINE)
    document = read_matrix(results)
    assert document["layer"] == "scenarios"
    for cell, alias in zip(document["cells"], ("haiku", "sonnet"), strict=True):
        provenance = cell["results"]["provenance"]
        assert provenance["model_requested"] == alias
        # The CLI resolves the alias; the answers name the model it asked for.
        assert provenance["models"] == [f"claude-{alias}-5-5"]
        assert provenance["claude_version"] == "2.1.328"
        runs = cell["results"]["scenarios"][0]["runs"]
        assert len(runs) == 4
        for run in runs:
            assert Path(run["transcript"]).is_relative_to(output / f"model-{alias}")
            assert Path(run["transcript"]).is_file()
    # Each cell's measures read the CLI runs: tool calls per run, the CLI's own cost.
    from skilltest.matrix.measures import matrix_measures

    measures = {(m.cell, m.arm): m for m in matrix_measures(document)}
    assert sorted(measures) == [
        ("model=haiku", "with_skill"),
        ("model=haiku", "without_skill"),
        ("model=sonnet", "with_skill"),
        ("model=sonnet", "without_skill"),
    ]
    for m in measures.values():
        assert m.runs == 2
        assert m.tool_calls_median is not None and m.tool_calls_worst is not None
        assert 0 < m.tool_calls_median <= m.tool_calls_worst
        assert m.authority_violation_rate is None  # no world in this suite
    assert re.search(r"^model=haiku\s+with skill\s+\d/2 ", out, re.MULTILINE)


def test_trigger_queries_run_in_each_cell_with_the_skill_only(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "triggers.json"
    argv = ["triggers", "--models", "haiku,opus", "-k", "6", "--only", "loki-*"]
    code = main([*argv, "--results", str(results), "--output-dir", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"^query\s+model=haiku\s+model=opus$", out, re.MULTILINE)
    assert re.search(r"^lgtm/loki-error-spike\s+pass 100% \[\d+%–100%\]\s+pass 100%", out, re.M)
    assert "model=opus: 2 queries: 2 pass" in out
    document = read_matrix(results)
    assert (document["layer"], document["matrix"]["arms"]) == ("triggers", ["with_skill"])
    assert [c["results"]["provenance"]["model_requested"] for c in document["cells"]] == [
        "haiku",
        "opus",
    ]
    assert (tmp_path / "out" / "model-opus").is_dir()
