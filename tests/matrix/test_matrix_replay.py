"""A recorded matrix keeps its cassettes in a folder per cell, and replays with no model."""

from __future__ import annotations

import json

from skilltest.cli import main
from skilltest.matrix import read_matrix

from ..conftest import REPO_ROOT

MATRIX = ["pressure", "lgtm", "--models", "haiku,opus", "--only", "aggregation-*", "-k", "12"]
SCRIPT = ["--script", "tests/model-scripts/lgtm.by-model.pressure.yaml"]


def test_a_recorded_matrix_replays_cell_by_cell_without_a_model(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    cassettes, recorded, replayed = tmp_path / "cassettes", tmp_path / "r.json", tmp_path / "p.json"
    assert main([*MATRIX, *SCRIPT, "--record", str(cassettes), "--results", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert f"cassette(s) written under {cassettes}, a folder per cell" in out
    assert sorted(p.name for p in cassettes.iterdir()) == ["model-haiku", "model-opus"]

    assert main([*MATRIX, "--replay", str(cassettes), "--results", str(replayed)]) == 0
    before, after = read_matrix(recorded), read_matrix(replayed)
    for one, two in zip(before["cells"], after["cells"], strict=True):
        assert two["results"]["provenance"]["backend"] == "replay"
        assert two["results"]["provenance"]["recorded_with"] == ["emulator"]
        assert two["results"]["provenance"]["models"] == one["results"]["provenance"]["models"]
        verdicts = [(s["id"], s["verdict"], s["lift_ci"]) for s in one["results"]["scenarios"]]
        assert verdicts == [
            (s["id"], s["verdict"], s["lift_ci"]) for s in two["results"]["scenarios"]
        ]
    assert before["comparisons"] == after["comparisons"]

    # skilltest compare reads two matrices cell by cell.
    capsys.readouterr()
    assert main(["compare", str(recorded), str(replayed), "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert [cell["id"] for cell in compared["cells"]] == ["model=haiku", "model=opus"]
    assert (compared["added"], compared["vanished"]) == ([], [])
    for cell in compared["cells"]:
        (change,) = cell["scenarios"]
        assert change["name"] == "lgtm/aggregation-before-raw-fetch"
        assert change["verdict_changed"] is False
    assert main(["compare", str(recorded), str(replayed)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("cell model=haiku\n\npressure: ")
    assert f"{replayed} [model=opus]" in text

    # A cell whose cassettes are missing is bad input, named; what the other cell made is kept.
    (cassettes / "model-opus").rename(tmp_path / "elsewhere")
    capsys.readouterr()
    code = main([*MATRIX, "--replay", str(cassettes), "--results", str(replayed)])
    assert code == 2
    assert f"--replay: no cassette folder at {cassettes / 'model-opus'}" in capsys.readouterr().err
    kept = json.loads(replayed.read_text())
    assert kept["complete"] is False
    assert [cell["id"] for cell in kept["cells"]] == ["model=haiku"]
