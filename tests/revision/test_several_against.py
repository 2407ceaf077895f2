"""`skilltest pressure --against A --against B`: each revision an arm of its own, all compared
with the current skill and sharing one without-skill arm.

The test repository holds two commits of one skill (HEAD~1: the old hint, HEAD: the new rule);
a folder holds a third revision that has the new rule and a note, but not the old hint. The
emulator answers from the skill text in the system prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.report.files import read_results

from .conftest import git

OLD_SKILL = "DEMO SKILL. OLD HINT: pipe the JSON through jq.\n"
NEW_SKILL = "DEMO SKILL. NEW RULE: aggregate with count_over_time first.\n"
NOTED_SKILL = "DEMO SKILL. NEW RULE: aggregate with count_over_time first. Be brief.\n"

PROJECT = Path(__file__).with_name("pressure-against")
"""The suite (demo.yaml, 11 runs per arm) and the model script the test repository holds."""


def noted_commit(repo: Path) -> None:
    """Two more commits: the noted revision, then the new rule again (HEAD~1: the noted
    revision; HEAD~3: the old hint)."""
    skill = repo / "skills" / "demo" / "SKILL.md"
    skill.write_text(NOTED_SKILL)
    git(repo, "commit", "-q", "-am", "noted")
    skill.write_text(NEW_SKILL)
    git(repo, "commit", "-q", "-am", "new again")


@pytest.fixture
def noted(tmp_path: Path) -> Path:
    """A folder holding the revision with the new rule and a note."""
    folder = tmp_path / "noted"
    folder.mkdir()
    (folder / "SKILL.md").write_text(NOTED_SKILL)
    return folder


def test_two_revisions_each_get_their_columns_counts_and_results_entry(
    repo, noted, tmp_path, capsys
):
    results = tmp_path / "results.json"
    argv = ["pressure", str(repo / "demo.yaml"), "-k", "3", "--results", str(results)]
    code = main([*argv, "--against", str(noted), "--against", "HEAD~1"])
    out = capsys.readouterr().out
    assert code == 1  # extract no-steer: the exit code still comes from the scenario verdicts
    header = next(line for line in out.splitlines() if line.startswith("scenario"))
    assert re.split(r"\s{2,}", header)[5:9] == [
        f"{noted}: pass",
        f"vs {noted}",
        "HEAD~1: pass",
        "vs HEAD~1",
    ]
    extract = next(line for line in out.splitlines() if line.startswith("demo/extract"))
    # Against the noted folder nothing moved on extract; against HEAD~1 it regressed.
    assert re.split(r"\s{2,}", extract)[5:9] == [
        "0/3 0% [0%–71%]",
        "inconclusive +0% [-71%, +71%]",
        "3/3 100% [29%–100%]",
        "regressed -100% [-100%, -8%]",
    ]
    assert f"against {noted}: 0 improved, 0 neutral, 0 regressed, 3 inconclusive" in out
    assert "against HEAD~1: 1 improved, 0 neutral, 1 regressed, 1 inconclusive" in out
    assert "2 revisions, one without-skill arm: every lift reads the same baseline runs" in out
    # 3 scenarios x 3 runs x 4 arms: one without-skill arm for both revisions.
    assert "36 requests" in out

    document = read_results(results, "pressure")
    extract_doc = next(s for s in document["scenarios"] if s["id"] == "extract")
    # The first REF keeps the shape of a run against one revision, for readers of one.
    assert extract_doc["against"]["ref"] == str(noted)
    assert extract_doc["previous"]["passed"] == 0
    assert [(r["ref"], r["arm"], r["against"]["verdict"]) for r in extract_doc["revisions"]] == [
        (str(noted), "previous", "inconclusive"),
        ("HEAD~1", "previous-2", "regressed"),
    ]
    assert extract_doc["revisions"][1]["previous"]["passed"] == 3
    arms = [r["arm"] for r in extract_doc["runs"]]
    assert {arm: arms.count(arm) for arm in arms} == {
        "with_skill": 3,
        "without_skill": 3,
        "previous": 3,
        "previous-2": 3,
    }

    # The gate blocks on the regression against the second REF.
    assert main(["gate", str(results), "--allow-offline"]) == 1
    gated = capsys.readouterr().out
    assert "demo/extract (pressure): regressed against HEAD~1: delta -100%" in gated

    # The Markdown summary counts each revision and names it in the vs cell.
    summary = tmp_path / "summary.md"
    assert main(["report", str(results), "--markdown", str(summary)]) == 0
    text = summary.read_text()
    assert "### Regressed against HEAD~1" in text
    row = next(line for line in text.splitlines() if "`demo/extract`" in line)
    assert "noted: inconclusive +0% [-71%, +71%]; HEAD~1: regressed -100% [-100%, -8%]" in row


def test_one_revision_keeps_the_shape_of_the_results_file(repo, tmp_path, capsys):
    results = tmp_path / "results.json"
    main(["pressure", str(repo / "demo.yaml"), "-k", "3", "--against", "HEAD~1", "--results",
          str(results)])  # fmt: skip
    capsys.readouterr()
    assert all("revisions" not in s for s in read_results(results, "pressure")["scenarios"])


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ("HEAD~1", "--against HEAD~1: --against HEAD~1 is given twice"),
        (
            "{sha}",
            "--against HEAD~1 and --against {sha} give the same skill files: the two arms would "
            "run the same revision twice",
        ),
        (
            "{folder}",
            "--against HEAD~1 and --against {folder} give the same skill files",
        ),
    ],
)
def test_two_refs_that_give_the_same_skill_are_bad_input(repo, tmp_path, capsys, second, message):
    folder = tmp_path / "copy"
    folder.mkdir()
    (folder / "SKILL.md").write_text(OLD_SKILL)
    sha = git(repo, "rev-parse", "HEAD~1").strip()
    second, message = (s.format(sha=sha, folder=folder) for s in (second, message))
    code = main(["pressure", str(repo / "demo.yaml"), "--against", "HEAD~1", "--against", second])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert "fix: give each revision once" in err


def test_the_dry_run_prices_an_arm_per_revision(repo, noted, capsys):
    argv = ["pressure", str(repo / "demo.yaml"), "-k", "5", "--dry-run"]
    assert main([*argv, "--against", "HEAD~1", "--against", str(noted)]) == 0
    # 3 scenarios x 5 runs x 4 arms.
    assert re.search(r"demo\.yaml\s+3\s+60\s+60\s", capsys.readouterr().out)


@pytest.fixture
def emulator(repo: Path) -> Iterator[EmulatorServer]:
    with EmulatorServer(ModelScript.load(repo / "model.yaml")) as running:
        yield running


def test_a_matrix_runs_the_without_skill_arm_once_per_cell_for_both_revisions(
    repo, tmp_path, emulator, monkeypatch, capsys
):
    noted_commit(repo)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
    results = tmp_path / "matrix.json"
    argv = ["pressure", str(repo / "demo.yaml"), "--backend", "anthropic", "-k", "2"]
    argv += ["--models", "haiku,sonnet", "--results", str(results)]
    main([*argv, "--against", "HEAD~1", "--against", "HEAD~3"])
    out = capsys.readouterr().out
    requests = [
        r.body for r in emulator.requests if r.path == "/v1/messages" and r.side_request is None
    ]
    # Per cell: 3 scenarios x 2 runs x 4 arms (with, without, HEAD~1, HEAD~3), not 3 x 2 x 6.
    assert len(requests) == 2 * 3 * 2 * 4
    for model in ("haiku", "sonnet"):
        systems = [str(b.get("system") or "") for b in requests if b["model"] == model]
        assert sum(1 for s in systems if not s) == 3 * 2  # one without-skill set per cell
        assert sum(1 for s in systems if "OLD HINT" in s) == 3 * 2
        assert sum(1 for s in systems if "Be brief" in s) == 3 * 2
    shared = (
        "shared baseline: each cell ran its without-skill arm once; the skill and each "
        "--against revision (at HEAD~1, HEAD~3) were compared with the same baseline runs"
    )
    assert shared in out
    # docs/matrix.md shows the line as printed.
    assert shared in (Path(__file__).parents[2] / "docs" / "matrix.md").read_text()
    plan = json.loads(results.read_text())["matrix"]
    assert plan["arms"] == ["with_skill", "without_skill", "previous", "previous-2"]
    assert plan["shared_baseline"] is True
    assert plan["revisions"] == [
        {"arm": "previous", "ref": "HEAD~1"},
        {"arm": "previous-2", "ref": "HEAD~3"},
    ]


def test_docs_revision_md_shows_two_revisions_as_printed(repo, capsys, monkeypatch):
    noted_commit(repo)
    monkeypatch.chdir(repo)  # the model script named as an author there sees it
    main(["pressure", str(repo / "demo.yaml"), "-k", "3", "--against", "HEAD~1", "--against",
          "HEAD~3"])  # fmt: skip
    out = capsys.readouterr().out
    docs = (Path(__file__).parents[2] / "docs" / "revision.md").read_text()
    assert out.strip() in docs, out
