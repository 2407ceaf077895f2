"""`skilltest scenarios --against A --against B`: each revision an arm of its own (`previous`,
`previous-2`), all compared with the current skill and sharing one without-skill arm; the gate
blocks on a regression against either.

The test repository holds two commits of one skill (HEAD~1: the old hint, HEAD: the new rule);
the work tree takes the old hint back (the edit under test), and a folder holds a third
revision, the old hint with a note. The emulator answers from the skill listing: only the new
rule's answer scores.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.repetitions import plan_for
from skilltest.report.files import read_results
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.runs import run_suites
from skilltest.scenarios.suite import load_scenario_suite
from skilltest.skills import load_skill
from tests.layers import run_layer

from .test_scenarios_against import NEW_SKILL, OLD_SKILL, Scripted

PROJECT = Path(__file__).with_name("scenarios-against")
"""The suite (demo.yaml) and the model script (model.yaml) the test repository holds."""

NOTED_SKILL = "---\nname: demo\ndescription: Loki help. OLD HINT grep. Be brief.\n---\nUse grep.\n"


@pytest.fixture
def noted(tmp_path: Path) -> Path:
    """A folder holding the old hint with a note: a revision of its own."""
    folder = tmp_path / "noted"
    folder.mkdir()
    (folder / "SKILL.md").write_text(NOTED_SKILL)
    return folder


def _arm_of(body: dict) -> str:
    said = str(body.get("system")) + str(body.get("messages"))
    if "Be brief" in said:
        return "noted"
    if "NEW RULE" in said:
        return "new"
    return "old" if "OLD HINT" in said else "none"


@pytest.mark.cli
def test_two_revisions_share_one_without_skill_arm_and_a_regression_on_either_blocks(
    repo, noted, tmp_path, capsys, claude_bin, monkeypatch
):
    # The edit under test takes the old hint back: the current skill is HEAD~1's again.
    (repo / "skills" / "demo" / "SKILL.md").write_text(OLD_SKILL)
    with EmulatorServer(ModelScript.load(repo / "model.yaml"), port=0) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-only-for-the-stand-in")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        options = ["--backend", "claude", "--claude", claude_bin, "-k", "3", "-j", "2"]
        options += ["--against", str(noted), "--against", "HEAD", "--allow-inconclusive"]
        code = run_layer("scenarios", repo / "demo.yaml", tmp_path, *options)
        conversations = [
            _arm_of(r.body)
            for r in server.requests
            if r.path == "/v1/messages" and r.side_request is None
        ]
    out = capsys.readouterr().out
    assert code == 1, out  # the edit fails the scenario: its with-skill runs miss min_score

    # 3 runs of each arm (a run: one request, answered with text), the without-skill arm once
    # for both revisions: 12 requests, not 15.
    assert sorted(conversations) == sorted(["old"] * 3 + ["noted"] * 3 + ["new"] * 3 + ["none"] * 3)

    header = next(line for line in out.splitlines() if line.startswith("scenario"))
    assert re.split(r"\s{2,}", header.strip())[7:11] == [
        str(noted),
        f"vs {noted}",
        "HEAD",
        "vs HEAD",
    ]
    row = next(line for line in out.splitlines() if line.startswith("demo/aggregate"))
    cells = re.split(r"\s{2,}", row.strip())
    assert cells[7:11] == [
        "0.00 [0.00, 0.76]",
        "inconclusive +0.00 [-0.71, +0.71]",
        "1.00 [0.24, 1.00]",
        "regressed -1.00 [-1.00, -0.08]",
    ]
    lines = out.splitlines()
    assert f"against {noted}: 0 improved, 0 neutral, 0 regressed, 1 inconclusive" in lines
    assert "against HEAD: 0 improved, 0 neutral, 1 regressed" in lines
    docs = (Path(__file__).parents[2] / "docs" / "revision.md").read_text()
    for line in lines:
        if line.startswith(("2 revisions, one", "against HEAD:")):
            assert line in docs  # docs/revision.md shows them as printed
    assert (
        "2 revisions, one without-skill arm: every delta reads the same without-skill runs" in lines
    )

    (scenario,) = read_results(tmp_path / "results.json", "scenarios")["scenarios"]
    assert [(r["arm"], r["ref"]) for r in scenario["revisions"]] == [
        ("previous", str(noted)),
        ("previous-2", "HEAD"),
    ]
    assert [r["against"]["verdict"] for r in scenario["revisions"]] == ["inconclusive", "regressed"]
    assert scenario["against"] == scenario["revisions"][0]["against"]  # one revision's reader
    arms = [run["arm"] for run in scenario["runs"]]
    assert {arm: arms.count(arm) for arm in arms} == {
        "with_skill": 3,
        "without_skill": 3,
        "previous": 3,
        "previous-2": 3,
    }

    # The gate reads every revision: the regression against the second REF blocks.
    code = main(["gate", str(tmp_path / "results.json"), "--allow-offline"])
    gated = capsys.readouterr().out
    assert code == 1, gated
    assert re.search(r"^BLOCK\s+regressions\s", gated, re.MULTILINE), gated
    said = "demo/aggregate (scenarios): regressed against HEAD"
    assert said in gated, gated
    assert said in " ".join(docs.split())  # docs/revision.md names it


def test_auto_repetitions_run_each_revision_as_many_rounds_as_the_others(repo, tmp_path, noted):
    suite = load_scenario_suite(repo / "demo.yaml")
    new = tmp_path / "new"
    new.mkdir()
    (new / "SKILL.md").write_text(NEW_SKILL)
    skills = {
        "previous": load_skill(noted / "SKILL.md", "demo"),
        "previous-2": load_skill(new / "SKILL.md", "demo"),
    }
    runner = Scripted()
    (verdict,) = asyncio.run(
        run_suites(
            [suite],
            runner,
            jobs=2,
            revisions=(("previous", "noted"), ("previous-2", "new")),
            previous=lambda scenario, arm: skills[arm],
            repetitions=lambda scenario: plan_for("auto", None),
        )
    )
    counts = {arm: sum(1 for a, _ in runner.started if a == arm) for arm in Arm}
    assert counts[Arm.WITH_SKILL] > 0
    assert counts[Arm.WITHOUT_SKILL] == counts[Arm.PREVIOUS] == counts[Arm.PREVIOUS_2]
    assert counts[Arm.PREVIOUS_2] == counts[Arm.WITH_SKILL]
    assert [(r.arm, r.ref) for r in verdict.revisions] == [
        ("previous", "noted"),
        ("previous-2", "new"),
    ]
    # The current skill (NEW RULE, as HEAD) scores as the new revision does, not as the noted one.
    assert verdict.revisions[1].summary.scores == (1.0,) * counts[Arm.PREVIOUS_2]
    assert verdict.revisions[0].summary.scores == (0.0,) * counts[Arm.PREVIOUS]
