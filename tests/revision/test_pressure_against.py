"""`skilltest pressure --against REF`: the skill at a git revision or in a folder as a third arm.

A test repository holds two commits of one skill; the emulator answers from the skill text in
the system prompt, so each scenario's outcome depends on which revision's SKILL.md it sees.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results
from skilltest.revision import compare
from skilltest.stats import EMPTY, Interval, clopper_pearson, exact_difference

from .conftest import git

OLD_SKILL = "DEMO SKILL. OLD HINT: pipe the JSON through jq.\n"
NEW_SKILL = "DEMO SKILL. NEW RULE: aggregate with count_over_time first.\n"

PROJECT = Path(__file__).with_name("pressure-against")
"""The suite (demo.yaml) and the model script (model.yaml) the test repository holds."""

K = 11


def table_rows(out: str) -> list[list[str]]:
    """The table's scenario rows, split into cells (two spaces or more apart)."""
    return [
        re.split(r"\s{2,}", line.strip()) for line in out.splitlines() if line.startswith("demo/")
    ]


def all_or_nothing_delta(n: int) -> tuple[float, float]:
    """The exact interval of n/n minus 0/n: the p-value of that table for "delta <= d" is
    ((1 + d) / 2) ** (2n), which reaches 2.5% at d = 2 * 0.025 ** (1 / (2n)) - 1."""
    return 2 * 0.025 ** (1 / (2 * n)) - 1, 1.0


def test_against_a_revision_reports_how_the_edit_moved_each_scenario(repo, tmp_path, capsys):
    results = tmp_path / "results.json"
    before = git(repo, "status", "--porcelain")
    code = main(
        ["pressure", str(repo / "demo.yaml"), "--against", "HEAD~1", "--results", str(results)]
    )
    out = capsys.readouterr().out
    # extract lost its hint with the edit: the current skill no longer steers it.
    assert code == 1
    assert re.search(r"demo/extract\s+no-steer\s", out)
    rows = {cells[0]: cells[1:] for cells in table_rows(out)}
    # with skill, baseline RED, lift, previous revision's pass rate, vs HEAD~1 (hand-computed
    # below from the exact bounds), K
    assert rows["demo/aggregate"][:7] == [
        "steers",
        "11/11 100% [72%–100%]",
        "11/11 100% [72%–100%]",
        "+100% [+69%, +100%]",
        "0/11 0% [0%–28%]",
        "improved +100% [+69%, +100%]",
        "11",
    ]
    # Both arms pass every run: the bound is where 11/11 has a chance of 2.5%, 1 - 0.025 ** (1/11).
    assert rows["demo/steady"][4:6] == ["11/11 100% [72%–100%]", "inconclusive +0% [-28%, +28%]"]
    assert rows["demo/extract"][4:6] == [
        "11/11 100% [72%–100%]",
        "regressed -100% [-100%, -69%]",
    ]
    assert "against HEAD~1: 1 improved, 0 neutral, 1 regressed, 1 inconclusive" in out
    assert "vs HEAD~1: with-skill pass rate minus the pass rate of the skill at HEAD~1" in out
    # The user's work tree and index are as they were: the revision was read with git archive.
    assert git(repo, "status", "--porcelain") == before
    assert (repo / "skills" / "demo" / "SKILL.md").read_text() == NEW_SKILL

    document = read_results(results, "pressure")
    scenarios = {s["id"]: s for s in document["scenarios"]}
    low, high = all_or_nothing_delta(K)
    aggregate = scenarios["aggregate"]
    assert aggregate["against"]["ref"] == "HEAD~1"
    assert aggregate["against"]["verdict"] == "improved"
    assert aggregate["against"]["delta"] == pytest.approx(1.0)
    assert aggregate["against"]["ci"] == pytest.approx([low, high])
    assert aggregate["previous"]["runs"] == K
    assert (aggregate["previous"]["passed"], aggregate["previous"]["pass_rate"]) == (0, 0.0)
    assert aggregate["previous"]["ci_high"] == pytest.approx(1 - 0.025 ** (1 / K))
    previous_runs = [r for r in aggregate["runs"] if r["arm"] == "previous"]
    assert [r["rep"] for r in previous_runs] == list(range(1, K + 1))
    assert {r["output"] for r in previous_runs} == {"I would grep the logs."}
    assert scenarios["extract"]["against"] == {
        "ref": "HEAD~1",
        "delta": pytest.approx(-1.0),
        "ci": pytest.approx([-high, -low]),
        "verdict": "regressed",
    }
    steady = scenarios["steady"]["against"]
    half = exact_difference(K, K, K, K).high
    assert (steady["delta"], steady["verdict"]) == (0.0, "inconclusive")
    assert steady["ci"] == pytest.approx([-half, half])
    assert clopper_pearson(K, K).low == pytest.approx(0.7151, abs=1e-4)


def test_a_folder_holding_the_previous_skill_works_like_a_revision(repo, tmp_path, capsys):
    old = tmp_path / "old-demo"
    old.mkdir()
    (old / "SKILL.md").write_text(OLD_SKILL)
    results = tmp_path / "results.json"
    main(["pressure", str(repo / "demo.yaml"), "--against", str(old), "--results", str(results)])
    assert f"against {old}: 1 improved, 0 neutral, 1 regressed, 1 inconclusive" in (
        capsys.readouterr().out
    )
    verdicts = {
        s["id"]: s["against"]["verdict"] for s in read_results(results, "pressure")["scenarios"]
    }
    assert verdicts == {"aggregate": "improved", "steady": "inconclusive", "extract": "regressed"}


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no-such-branch", "'no-such-branch' is not a folder nor a revision of the repository"),
        ("HEAD~2", "the skill folder skills/demo has no SKILL.md at HEAD~2"),
        ("{empty}", "no SKILL.md in {empty} (nor in {empty}/demo)"),
    ],
)
def test_a_bad_ref_is_bad_input(repo, tmp_path, capsys, ref, message):
    empty = tmp_path / "empty"
    empty.mkdir()
    ref, message = ref.format(empty=empty), message.format(empty=empty)
    assert main(["pressure", str(repo / "demo.yaml"), "--against", ref]) == 2
    err = capsys.readouterr().err
    assert f"--against {ref}: {message}" in err
    assert "fix:" in err


def test_the_skill_in_no_repository_needs_a_folder(repo, tmp_path, capsys):
    elsewhere = tmp_path / "plain"
    (elsewhere / "skills" / "demo").mkdir(parents=True)
    (elsewhere / "skills" / "demo" / "SKILL.md").write_text(NEW_SKILL)
    for name in ("demo.yaml", "model.yaml"):
        (elsewhere / name).write_text((repo / name).read_text())
    assert main(["pressure", str(elsewhere / "demo.yaml"), "--against", "HEAD~1"]) == 2
    assert "is in no git repository to read a revision from" in capsys.readouterr().err


def test_against_reads_the_band_of_the_with_vs_without_verdict():
    """The band is the with-vs-without verdict's: [-5%, +5%]."""
    against = compare("v1", Interval(0.0, -0.04, 0.04))
    assert against.to_dict() == {
        "ref": "v1",
        "delta": 0.0,
        "ci": [-0.04, 0.04],
        "verdict": "neutral",
    }
    assert compare("v1", Interval(0.0, -0.06, 0.04)).verdict == "inconclusive"
    assert compare("v1", Interval(0.3, 0.06, 0.5)).verdict == "improved"
    assert compare("v1", Interval(-0.3, -0.5, -0.06)).verdict == "regressed"
    assert compare("v1", EMPTY).verdict == "error"


def test_against_is_refused_with_cassettes(repo, tmp_path, capsys):
    argv = ["pressure", str(repo / "demo.yaml"), "--against", "HEAD~1"]
    assert main([*argv, "--record", str(tmp_path / "tapes")]) == 2
    assert "--against runs the previous revision live; it does not record or replay" in (
        capsys.readouterr().err
    )
