"""`skilltest scenarios --against REF`: the skill at a git revision or in a folder as a third arm.

A test repository holds two commits of one skill. The emulator answers from the skill listing in
the system prompt (the skill's description), so a run's score depends on which revision's
SKILL.md the sandbox installed.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.repetitions import plan_for
from skilltest.report.files import read_results
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.runner import RunOutcome, RunRequest
from skilltest.scenarios.runs import run_suites
from skilltest.scenarios.suite import load_scenario_suite
from skilltest.skills import load_skill
from skilltest.transcript import Transcript
from tests.layers import run_layer

from .conftest import git

OLD_SKILL = "---\nname: demo\ndescription: Loki help. OLD HINT grep.\n---\nUse grep.\n"
NEW_SKILL = "---\nname: demo\ndescription: Loki help. NEW RULE aggregate.\n---\nAggregate first.\n"

PROJECT = Path(__file__).with_name("scenarios-against")
"""The suite (demo.yaml) and the model script (model.yaml) the test repository holds."""


@pytest.mark.cli
def test_against_a_revision_says_the_edit_improved_the_scenario(repo, tmp_path, capsys, claude_bin):
    results = tmp_path / "results.json"
    before = git(repo, "status", "--porcelain")
    options = ["--claude", claude_bin, "-k", "3", "-j", "2", "--against", "HEAD~1"]
    code = run_layer("scenarios", repo / "demo.yaml", tmp_path, *options)
    out = capsys.readouterr().out
    assert code == 0, out
    # The new skill's runs score 1, the old one's and the bare model's 0: 3/3 runs pass
    # against 0/3. The exact interval of that pass-rate delta: the table's p-value for
    # "delta <= d" is ((1 + d) / 2) ** 6, 2.5% at d = 2 * 0.025 ** (1/6) - 1 = +0.08, above
    # the +0.05 that makes it improved.
    low = 2 * 0.025 ** (1 / 6) - 1
    assert round(low, 2) == 0.08
    row = next(line for line in out.splitlines() if line.startswith("demo/aggregate"))
    cells = re.split(r"\s{2,}", row.strip())
    assert cells[1:9] == [
        "improved",
        "3/3 | 0/3",
        "+1.00 [+0.08, +1.00]*",
        "1.00 [0.24, 1.00]",
        "0.00 [0.00, 0.76]",
        "+1.00 [-0.03, +1.00]",
        "0.00 [0.00, 0.76]",
        "improved +1.00 [+0.08, +1.00]",
    ]
    header = next(line for line in out.splitlines() if line.startswith("scenario"))
    assert re.split(r"\s{2,}", header.strip())[7:9] == ["HEAD~1", "vs HEAD~1"]
    assert "against HEAD~1: 1 improved, 0 neutral, 0 regressed" in out.splitlines()

    (scenario,) = read_results(results, "scenarios")["scenarios"]
    assert scenario["against"]["ref"] == "HEAD~1"
    assert scenario["against"]["verdict"] == "improved"
    assert scenario["against"]["delta"] == 1.0
    assert scenario["against"]["ci"] == [pytest.approx(low, abs=1e-3), 1.0]
    assert scenario["previous"]["runs"] == 3
    assert scenario["previous"]["scores"] == [0.0, 0.0, 0.0]
    assert [r["arm"] for r in scenario["runs"]].count("previous") == 3
    # The previous arm installed the old SKILL.md under the skill's own name.
    assert scenario["loaded"]["previous"]["skills"] == scenario["loaded"]["with_skill"]["skills"]
    assert "demo" in scenario["loaded"]["previous"]["skills"]
    # The revision was read with git archive: the work tree is as it was.
    assert git(repo, "status", "--porcelain") == before


class Scripted:
    """Scores 1 for runs whose installed skill says NEW RULE, 0 otherwise; records the runs."""

    backend = "test"
    cli_version = "2.1.328"

    def __init__(self) -> None:
        self.started: list[tuple[Arm, int]] = []

    async def run(self, request: RunRequest) -> RunOutcome:
        self.started.append((request.arm, request.rep))
        new = any("NEW RULE" in skill.text for skill in request.installed)
        text = "count_over_time" if new else "grep"
        return RunOutcome(Transcript(source="test", assistant_text=(text,)))


def test_auto_repetitions_run_the_previous_arm_as_many_rounds_as_the_others(repo, tmp_path):
    suite = load_scenario_suite(repo / "demo.yaml")
    old = tmp_path / "old"
    old.mkdir()
    (old / "SKILL.md").write_text(OLD_SKILL)
    previous = load_skill(old / "SKILL.md", "demo")
    runner = Scripted()
    (verdict,) = asyncio.run(
        run_suites(
            [suite],
            runner,
            jobs=2,
            revisions=(("previous", "old"),),
            previous=lambda scenario, arm: previous,
            repetitions=lambda scenario: plan_for("auto", None),
        )
    )
    counts = {arm: sum(1 for a, _ in runner.started if a == arm) for arm in Arm}
    assert counts[Arm.PREVIOUS] == counts[Arm.WITH_SKILL] == counts[Arm.WITHOUT_SKILL] > 0
    assert verdict.against is not None and verdict.against.verdict == "improved"
    assert verdict.previous is not None and verdict.previous.scores == (0.0,) * counts[Arm.PREVIOUS]


@pytest.mark.parametrize("tape", ["--record", "--replay"])
def test_against_does_not_record_or_replay(repo, tmp_path, capsys, tape):
    (tmp_path / "tapes").mkdir()
    code = main(
        ["scenarios", str(repo / "demo.yaml"), "--against", "HEAD~1", tape, str(tmp_path / "tapes")]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "--against runs the previous revision live; it does not record or replay" in err


def test_a_ref_that_is_no_revision_nor_folder_exits_2(repo, capsys):
    code = main(["scenarios", str(repo / "demo.yaml"), "--against", "no-such-ref"])
    err = capsys.readouterr().err
    assert code == 2
    assert "'no-such-ref' is not a folder nor a revision of the repository" in err
