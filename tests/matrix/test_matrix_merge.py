"""A matrix sharded 1, 2 and 4 ways, merged, equals the unsharded matrix field by field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import InputError
from skilltest.merge.matrices import merge_matrices
from tests.merge.same import comparable, differences

from ..conftest import REPO_ROOT

MATRIX = [
    "pressure",
    "lgtm",
    "--models",
    "haiku,opus",
    "--script",
    "tests/model-scripts/lgtm.by-model.pressure.yaml",
    "-k",
    "12",
]


def run(folder: Path, *options: str) -> dict:
    results = folder / "matrix.json"
    assert main([*MATRIX, *options, "--results", str(results)]) in (0, 1)
    return json.loads(results.read_text())


def test_sharded_matrices_merge_to_the_unsharded_matrix(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    whole = run(tmp_path / "whole")
    assert whole["shard"] is None
    assert [len(c["results"]["scenarios"]) for c in whole["cells"]] == [4, 4]
    for count in (1, 2, 4):
        files = []
        for index in range(1, count + 1):
            shard = run(tmp_path / f"{index}-of-{count}", "--shard", f"{index}/{count}")
            assert shard["shard"] == {"index": index, "count": count}
            # Every cell ran the same share of the scenarios.
            shares = {tuple(s["id"] for s in c["results"]["scenarios"]) for c in shard["cells"]}
            assert len(shares) == 1 and len(next(iter(shares))) == 4 // count
            files.append(str(tmp_path / f"{index}-of-{count}" / "matrix.json"))
        merged_path = tmp_path / f"merged-{count}.json"
        assert main(["merge", *files, "-o", str(merged_path)]) == 0
        merged = json.loads(merged_path.read_text())
        assert differences(comparable(whole), comparable(merged)) == []
        assert merged["comparisons"] == whole["comparisons"]
        if count > 1:
            assert differences(
                comparable(whole), comparable(json.loads(Path(files[0]).read_text()))
            )
    out = capsys.readouterr().out
    assert "merged 4 shards of a pressure matrix (2 cells x 4 scenarios) into " in out

    # A whole matrix is not a shard; shards of two different matrices are refused.
    with pytest.raises(InputError, match="not the results of a shard"):
        merge_matrices([tmp_path / "whole" / "matrix.json"])
    other = json.loads((tmp_path / "1-of-2" / "matrix.json").read_text())
    other["matrix"]["cells"] = ["model=haiku"]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(other))
    with pytest.raises(InputError, match="`matrix` differs") as caught:
        merge_matrices([tmp_path / "2-of-2" / "matrix.json", edited])
    assert f"{edited}#/matrix" in str(caught.value)
