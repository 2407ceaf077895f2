"""What ``skilltest merge`` refuses: each with exit 2, the file, the place and the fix, and
nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skilltest.cli import main

from ..conftest import REPO_ROOT

ONE = ["--only", "jq-extraction", "--only", "index-concurrently", "--only", "rename-*"]
"""Four scenarios of the example suites: quick shards."""


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The results of shards 1/2 and 2/2 of four example pressure scenarios."""
    root = tmp_path_factory.mktemp("shards")
    here = Path.cwd()
    try:
        import os

        os.chdir(REPO_ROOT)
        files = []
        for index in (1, 2):
            results = root / f"shard-{index}.json"
            assert main(["pressure", *ONE, "--shard", f"{index}/2", "--results", str(results)]) == 0
            files.append(results)
    finally:
        os.chdir(here)
    return files


def edited(source: Path, folder: Path, change) -> Path:
    """A copy of a results file with ``change`` made to its document."""
    document = json.loads(source.read_text())
    change(document)
    target = folder / f"edited-{source.name}"
    target.write_text(json.dumps(document))
    return target


def merge(capsys, *files: Path, output: Path) -> tuple[int, str]:
    code = main(["merge", *map(str, files), "-o", str(output)])
    captured = capsys.readouterr()
    assert not output.exists()
    return code, captured.err


def test_a_missing_shard_is_named_with_its_scenarios(shards, tmp_path, capsys):
    code, err = merge(capsys, shards[0], output=tmp_path / "merged.json")
    assert code == 2
    missing = json.loads(shards[1].read_text())["shard"]["assigned"]
    assert err == (
        f"skilltest: error: {shards[0]}: shard 2/2 is missing (its scenarios: "
        f"{', '.join(missing)})\n"
        "  fix: add the results file of every shard from 1 to 2 (--shard i/2; a shard with no "
        "work writes one too)\n"
    )


def test_a_shard_given_twice_is_refused(shards, tmp_path, capsys):
    copy = tmp_path / "again.json"
    shutil.copy(shards[0], copy)
    code, err = merge(capsys, shards[0], copy, shards[1], output=tmp_path / "merged.json")
    assert code == 2
    assert err == (
        f"skilltest: error: {copy}#/shard/index: shard 1/2 is given twice: here and in "
        f"{shards[0]}\n  fix: give each shard's results file once\n"
    )


def test_a_whole_run_is_not_a_shard(shards, tmp_path, capsys, monkeypatch):
    whole = edited(shards[0], tmp_path, lambda d: d.update(shard=None))
    code, err = merge(capsys, whole, shards[1], output=tmp_path / "merged.json")
    assert code == 2
    assert err.startswith(
        f"skilltest: error: {whole}#/shard: not the results of a shard (no `shard`: the run had "
        "no --shard i/n)\n  fix: merge the results files of the runs with --shard 1/N ... N/N"
    )


def test_a_shard_holding_a_run_twice_under_another_id_is_refused(shards, tmp_path, capsys):
    def copied(document: dict) -> None:
        runs = document["scenarios"][0]["runs"]
        runs.append({**runs[0], "id": runs[0]["id"] + "-again"})

    other = edited(shards[1], tmp_path, copied)
    first = json.loads(shards[1].read_text())["scenarios"][0]
    run = first["runs"][0]["id"]
    code, err = merge(capsys, shards[0], other, output=tmp_path / "merged.json")
    assert code == 2
    assert err == (
        f"skilltest: error: {other}: {first['skill']}/{first['id']} (pressure): run {run}-again "
        f"holds what run {run} holds: the same run under another id: merged, it would count "
        "twice\n  fix: merge the results files as the shards wrote them\n"
    )


def test_compare_warns_of_a_figure_its_runs_do_not_give(shards, tmp_path, capsys):
    def flipped(document: dict) -> None:
        document["scenarios"][0]["passed"] = not document["scenarios"][0]["passed"]

    other = edited(shards[0], tmp_path, flipped)
    first = json.loads(shards[0].read_text())["scenarios"][0]
    assert main(["compare", str(shards[0]), str(other)]) == 0
    err = capsys.readouterr().err
    written, again = json.dumps(not first["passed"]), json.dumps(first["passed"])
    assert err == (
        f"skilltest: warning: {other}: {first['skill']}/{first['id']} (pressure): passed is "
        f"{written} in the file, {again} from its runs; skilltest gate blocks it\n"
    )


def _suite_edited(document: dict) -> None:
    document["provenance"]["suites"][0]["sha256"] = "sha256:" + "0" * 64


@pytest.mark.parametrize(
    ("change", "place", "said"),
    [
        (_suite_edited, "provenance/suites", "[('tests/skill-pressure/lgtm.yaml', 'sha256:000"),
        (
            lambda d: d["provenance"].update(skilltest_version="0.0.9"),
            "provenance/skilltest_version",
            "'0.0.9' here, '0.1.0' in ",
        ),
        (
            lambda d: d["provenance"].update(backend="anthropic"),
            "provenance/backend",
            "'anthropic' here, 'emulator' in ",
        ),
        (lambda d: d.update(layer="scenarios"), "layer", "'scenarios' here, 'pressure' in "),
        (lambda d: d["shard"].update(count=3), "shard/count", "3 here, 2 in "),
        (
            lambda d: d["shard"]["options"].update(strict=True),
            "shard/options/strict",
            "True here, False in ",
        ),
        (
            lambda d: d["shard"].update(units=d["shard"]["units"][:-1]),
            "shard/units",
            "['lgtm/jq-extraction', ",
        ),
    ],
)
def test_shards_of_different_runs_are_refused(shards, tmp_path, capsys, change, place, said):
    other = edited(shards[1], tmp_path, change)
    code, err = merge(capsys, shards[0], other, output=tmp_path / "merged.json")
    assert code == 2
    first, fix = err.splitlines()
    assert first.startswith(f"skilltest: error: {other}#/{place}: {said}")
    assert first.endswith(f" in {shards[0]}: these are not shards of one run")
    assert fix == (
        "  fix: merge the shards of one run: the same suites, options, skilltest and claude "
        "versions, one --shard i/N for each i"
    )


def test_an_option_that_changes_verdicts_differs_between_shards(shards, tmp_path, capsys):
    """Shards run with another -k: the real thing, not an edited file."""
    import os

    here = Path.cwd()
    other = tmp_path / "other.json"
    os.chdir(REPO_ROOT)
    try:
        code = main(["pressure", *ONE, "-k", "3", "--shard", "2/2", "--results", str(other)])
        assert code in (0, 1)  # 1: a scenario K=3 does not decide
    finally:
        os.chdir(here)
    capsys.readouterr()
    code, err = merge(capsys, shards[0], other, output=tmp_path / "merged.json")
    assert code == 2
    assert err.startswith(
        f"skilltest: error: {other}#/shard/options/repeat: 3 here, None in {shards[0]}: "
    )


def test_a_shard_with_no_work_writes_empty_results_and_exits_0(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    files = []
    for index in (1, 2):
        results = tmp_path / f"shard-{index}.json"
        code = main(
            [
                "pressure",
                "--only",
                "jq-extraction",
                "--shard",
                f"{index}/2",
                "--results",
                str(results),
            ]
        )
        assert code == 0
        files.append(results)
    documents = [json.loads(f.read_text()) for f in files]
    empty = next(d for d in documents if not d["shard"]["assigned"])
    assert empty["scenarios"] == [] and empty["complete"] is True
    assert "0 scenarios" in capsys.readouterr().out
    merged = tmp_path / "merged.json"
    assert main(["merge", *map(str, files), "-o", str(merged)]) == 0
    assert [s["id"] for s in json.loads(merged.read_text())["scenarios"]] == ["jq-extraction"]


def test_durations_without_a_shard_is_bad_input(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    code = main(["pressure", "--durations", "nowhere.json"])
    assert code == 2
    assert capsys.readouterr().err == (
        "skilltest: error: --durations nowhere.json: --durations balances shards, and this run "
        "is not one\n  fix: add --shard i/n, or leave out --durations\n"
    )
