"""``-k auto`` for trigger queries: each query runs through the scheduler every layer uses, a
round per description at a time, until its interval verdict is decided or ``max_k``.

The runner here is a stand-in that fires by a rule per query and repetition, so that the plan's
stops can be checked by the run; the same plan through the real CLI is in ``test_cli.py``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from skilltest.repetitions import Repetitions
from skilltest.revision import PREVIOUS
from skilltest.scenarios.runner import RunOutcome, RunRequest
from skilltest.transcript import ToolCall, Transcript
from skilltest.triggers.runs import CURRENT, Variant, run_triggers
from skilltest.triggers.suite import load_trigger_suite

SUITE = """\
skill: alpha
queries:
  - {id: always, query: "always", should_trigger: true}
  - {id: never, query: "never", should_trigger: false}
  - {id: half, query: "half", should_trigger: true}
"""


@dataclass
class Firing:
    """Fires the skill by query and repetition: ``always``, never ``never``, every other run of
    ``half``; the candidate description never fires."""

    backend: str = "stand-in"
    cli_version: str | None = None
    made: list[tuple[str, str, int]] = field(default_factory=list)

    async def run(self, request: RunRequest) -> RunOutcome:
        query = request.scenario.id
        variant = request.cassette_arm or "current"
        self.made.append((query, variant, request.rep))
        fires = variant != "candidate" and (
            query == "always" or (query == "half" and request.rep % 2 == 0)
        )
        calls = (ToolCall("t1", "Skill", {"skill": "alpha"}, result="ok"),) if fires else ()
        return RunOutcome(Transcript(source=self.backend, tool_calls=calls))


@pytest.fixture
def suite(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "skills" / "alpha").mkdir(parents=True)
    (tmp_path / "skills" / "alpha" / "SKILL.md").write_text(
        "---\nname: alpha\ndescription: Use for logs.\n---\nBody\n"
    )
    (tmp_path / "alpha.yaml").write_text(SUITE)
    return load_trigger_suite(tmp_path / "alpha.yaml")


def runs_of(runner: Firing, query: str, variant: str = "current") -> int:
    return sum(1 for q, v, _ in runner.made if (q, v) == (query, variant))


def test_a_query_runs_until_its_interval_decides_or_the_most_runs(suite, tmp_path):
    runner = Firing()
    plan = Repetitions(None, 3, 20)
    [[result]] = asyncio.run(
        run_triggers([suite], runner, jobs=3, output_dir=tmp_path / "out", plan=lambda s: plan)
    )
    by_id = {query.query.id: query for query in result.queries}
    # 8 of 8 is the first look whose share of 2.5% a rate at the threshold can be ruled out in.
    assert (by_id["always"].k, by_id["always"].verdict) == (8, "pass")
    assert (by_id["never"].k, by_id["never"].verdict) == (8, "pass")
    # Half the runs fire: never decided against a threshold of 0.5; it stops at max_k.
    assert (by_id["half"].k, by_id["half"].verdict) == (20, "inconclusive")
    assert (runs_of(runner, "always"), runs_of(runner, "never"), runs_of(runner, "half")) == (
        8,
        8,
        20,
    )
    assert by_id["always"].to_dict()["repetitions"] == {"mode": "auto", "min_k": 3, "max_k": 20}


def test_a_fixed_k_runs_every_query_k_times(suite, tmp_path):
    runner = Firing()
    [[result]] = asyncio.run(
        run_triggers(
            [suite], runner, jobs=2, output_dir=tmp_path / "out", plan=lambda s: Repetitions(6)
        )
    )
    assert [(q.k, q.verdict) for q in result.queries] == [
        (6, "pass"),
        (6, "pass"),
        (6, "inconclusive"),
    ]
    assert len(runner.made) == 18


def test_two_descriptions_run_side_by_side_until_both_are_decided(suite, tmp_path):
    runner = Firing()
    plan = Repetitions(None, 3, 20)
    variants = (CURRENT, Variant("candidate", "Use for cooking."))
    [[current, candidate]] = asyncio.run(
        run_triggers(
            [suite],
            runner,
            variants=variants,
            jobs=4,
            output_dir=tmp_path / "out",
            plan=lambda s: plan,
        )
    )
    always = (current.queries[0], candidate.queries[0])
    assert [(q.k, q.result) for q in always] == [(8, "pass"), (8, "miss")]
    # The two arms alternate per repetition and take the same number of runs.
    assert runs_of(runner, "always") == runs_of(runner, "always", "candidate") == 8


def test_the_previous_revision_is_a_yardstick_that_does_not_keep_a_query_going(suite, tmp_path):
    runner = Firing()
    plan = Repetitions(None, 3, 20)
    previous = Variant(PREVIOUS, None, skills={suite.skill.skill_file: suite.skill})
    [[now, before]] = asyncio.run(
        run_triggers(
            [suite],
            runner,
            variants=(CURRENT, previous),
            jobs=2,
            output_dir=tmp_path / "out",
            plan=lambda s: plan,
        )
    )
    assert [q.k for q in now.queries] == [8, 8, 20]
    assert [q.k for q in before.queries] == [8, 8, 20]
