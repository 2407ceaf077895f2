"""Sharded runs of the example suites, merged, equal the unsharded run field by field.

What may differ between any two runs is left out of the comparison: timings, run ids, and the
provenance's own id, date and command (see ``same.py``). Everything else (verdicts, intervals,
counts, summaries, suite metrics, the order of the scenarios) must be equal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main
from tests.merge.same import comparable, differences

from ..conftest import REPO_ROOT


def run(layer: str, folder: Path, *options: str) -> tuple[int, dict]:
    """``skilltest LAYER *OPTIONS`` writing its results (and output) in ``folder``."""
    results = folder / "results.json"
    code = main(
        [layer, *options, "--results", str(results), "--output-dir", str(folder / "output")]
    )
    return code, json.loads(results.read_text())


def sharded(layer: str, root: Path, count: int, *options: str) -> tuple[dict, list[dict]]:
    """Every shard of ``count`` run one after another, then merged."""
    files, documents = [], []
    for index in range(1, count + 1):
        folder = root / f"shard-{index}-of-{count}"
        code, document = run(layer, folder, *options, "--shard", f"{index}/{count}")
        assert code in (0, 1), (layer, index, count)  # 1: a scenario failed, a verdict all the same
        files.append(str(folder / "results.json"))
        documents.append(document)
    merged = root / f"merged-{count}.json"
    assert main(["merge", *files, "-o", str(merged)]) == 0
    return json.loads(merged.read_text()), documents


def assert_same(whole: dict, merged: dict, root: Path, *elsewhere: Path) -> None:
    """The merged results equal the whole run's, the output folders of the runs under ``root``
    (and those ``elsewhere``) read as one."""
    outputs = {str(p / "output") for p in root.iterdir() if p.is_dir()} | set(map(str, elsewhere))
    folders = tuple(sorted(outputs, key=len))
    found = differences(
        comparable(whole, folders=folders[::-1]), comparable(merged, folders=folders[::-1])
    )
    assert found == []


def test_pressure_shards_merge_to_the_unsharded_results(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    code, whole = run("pressure", tmp_path / "whole")
    assert code == 0
    assert len(whole["scenarios"]) == 8 and whole["shard"] is None
    for count in (1, 2, 4):
        merged, shards = sharded("pressure", tmp_path, count)
        assert [len(s["scenarios"]) for s in shards] == [8 // count] * count
        assert all(s["shard"]["count"] == count for s in shards)
        assert [s["provenance"]["shard"] for s in shards] == [
            {"index": i, "count": count} for i in range(1, count + 1)
        ]
        assert_same(whole, merged, tmp_path)
        assert merged["provenance"]["merged_from"] == [s["provenance"]["run_id"] for s in shards]
        # A shard alone is not the whole: the comparison can tell.
        if count > 1:
            assert differences(comparable(whole), comparable(shards[0]))
    out = capsys.readouterr().out
    assert "merged 4 shards of a pressure run (8 scenarios: 2, 2, 2, 2) into " in out


def test_shards_balanced_by_recorded_durations_merge_to_the_same(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    code, whole = run("pressure", tmp_path / "whole")
    assert code == 0
    durations = str(tmp_path / "whole" / "results.json")
    merged, shards = sharded("pressure", tmp_path, 3, "--durations", durations)
    assert all(s["shard"]["balance"] == "durations" for s in shards)
    assert sum(len(s["shard"]["assigned"]) for s in shards) == 8
    assert_same(whole, merged, tmp_path)


def test_batched_pressure_shards_merge_their_batches(tmp_path, monkeypatch):
    """Each shard of a --batch run submits its own batches and keeps its own resume file; the
    merge has the verdicts of the direct run and every shard's batches in one ``batch``."""
    monkeypatch.chdir(REPO_ROOT)
    code, whole = run("pressure", tmp_path / "whole", "-k", "11")
    assert code == 0
    merged, shards = sharded("pressure", tmp_path, 2, "-k", "11", "--batch")

    assert [(s["id"], s["verdict"]) for s in merged["scenarios"]] == [
        (s["id"], s["verdict"]) for s in whole["scenarios"]
    ]
    batch = merged["batch"]
    assert batch["resume_files"] == [s["batch"]["resume_file"] for s in shards]
    assert batch["resume_file"] is None
    assert batch["batches"] == shards[0]["batch"]["batches"] + shards[1]["batch"]["batches"]
    assert batch["requests"] == batch["results"]["succeeded"] == 8 * 2 * 11
    assert batch["submitted"] == len(batch["batches"]) and batch["resumed"] == 0
    assert batch["usage"]["input_tokens"] == sum(
        s["batch"]["usage"]["input_tokens"] for s in shards
    )
    assert (batch["rounds"], batch["price_factor"]) == (1, 0.5)


@pytest.mark.cli
def test_trigger_shards_replayed_merge_to_the_unsharded_results(
    tmp_path, monkeypatch, example_triggers_replayed
):
    """The whole run is the session's replay of the example suites from the committed
    cassettes (which their own test reads too); four shards replay the same cassettes. (Two
    shards of a trigger run merge in the comparison test below.)"""
    monkeypatch.chdir(REPO_ROOT)
    run = example_triggers_replayed()
    assert run.code == 0, run.out
    whole = json.loads(run.results.read_text())
    assert sum(len(s["queries"]) for s in whole["suites"]) == 16
    merged, shards = sharded("triggers", tmp_path, 4, "--replay", "tests/cassettes")
    # Each shard's suites hold only its queries: its metrics are its own, the merge's are the
    # whole suite's again.
    assert any(s["metrics"] != w["metrics"] for s in shards[0]["suites"] for w in whole["suites"])
    assert_same(whole, merged, tmp_path, run.output)


@pytest.mark.usefixtures("claude_bin")
def test_scenario_shards_through_the_real_cli_merge_to_the_unsharded_results(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    few = ["-k", "2"]
    for scenario in (
        "investigate-error-spike",
        "latency-follow-up",
        "rename-column",
        "reads-without-changing",
    ):
        few += ["--only", scenario]
    code, whole = run("scenarios", tmp_path / "whole", *few)
    assert code in (0, 1)  # K=2 decides little: inconclusive scenarios fail the run
    assert whole["summary"]["scenarios"] == 4 and whole["summary"]["runs"] == 16
    # Three shards of four scenarios: one shard holds two, the others one each.
    merged, shards = sharded("scenarios", tmp_path, 3, *few)
    assert sorted(len(s["scenarios"]) for s in shards) == [1, 1, 2]
    assert_same(whole, merged, tmp_path)


@pytest.mark.usefixtures("claude_bin")
def test_trigger_shards_comparing_two_descriptions_merge_to_the_same_comparison(
    tmp_path, monkeypatch
):
    """Each shard compares the descriptions on its queries only; the merge compares them on
    every query again (the per-query differences, precision, recall and accuracy)."""
    monkeypatch.chdir(REPO_ROOT)
    options = [
        "lgtm",
        "-k",
        "1",
        "--description",
        "Query Loki logs with LogQL.",
        "--compare-description",
    ]
    for glob in ("*-spike", "capital-*", "checkout-*", "payments-*"):
        options += ["--only", glob]
    code, whole = run("triggers", tmp_path / "whole", *options)
    assert code in (0, 1)
    assert [s["variant"] for s in whole["suites"]] == ["current", "candidate"]
    assert len(whole["comparison"][0]["differences"]) == 4 + 3
    merged, shards = sharded("triggers", tmp_path, 2, *options)
    assert all(len(s["comparison"][0]["differences"]) < 7 for s in shards)
    assert_same(whole, merged, tmp_path)
