"""Orchestration: at most -j runs at once, arms interleaved, a verdict per scenario as it ends."""

import asyncio
from pathlib import Path

import pytest

from skilltest.errors import RunError
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.runner import RunOutcome, RunRequest
from skilltest.scenarios.runs import run_suites
from skilltest.scenarios.suite import load_scenario_suite
from skilltest.scenarios.verdict import Verdict
from skilltest.transcript import ToolCall, Transcript

SUITE = """\
skill: demo
repetitions: 3
scenarios:
  - {id: a, prompt: a, expected: {required_tools: [Bash], recommended_tools: [Read]}}
  - {id: b, prompt: b, expected: {required_tools: [Bash]}}
  - {id: c, prompt: c, skip: not today, expected: {required_tools: [Bash]}}
  - {id: d, prompt: d, expected: {required_tools: [Bash]}}
"""


class ScriptedRunner:
    """Answers each run from a function of the request; records concurrency and order."""

    backend = "test"
    cli_version = "2.1.328"

    def __init__(self, answer):
        self.answer = answer
        self.in_flight = 0
        self.most_in_flight = 0
        self.started: list[tuple[str, Arm, int]] = []

    async def run(self, request: RunRequest) -> RunOutcome:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        self.started.append((request.scenario.id, request.arm, request.rep))
        try:
            await asyncio.sleep(0.01)
            return self.answer(request)
        finally:
            self.in_flight -= 1


def calls(*names: str) -> Transcript:
    return Transcript(
        source="test",
        tool_calls=tuple(ToolCall(id=str(i), name=n, input={}) for i, n in enumerate(names)),
    )


@pytest.fixture
def suite(tmp_path: Path):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\nbody\n")
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE)
    return load_scenario_suite(path)


def answer(request: RunRequest) -> RunOutcome:
    if request.scenario.id == "b" and request.arm == Arm.WITHOUT_SKILL:
        return RunOutcome(Transcript(source="test", error="model API error: overloaded"))
    if request.scenario.id == "d" and request.rep == 1:
        raise RunError("could not create the sandbox")
    if request.arm == Arm.WITH_SKILL:
        return RunOutcome(calls("Skill", "Bash", "Read"))
    return RunOutcome(calls("Bash"))


def test_runs_are_bounded_interleaved_and_judged(suite):
    runner = ScriptedRunner(answer)
    seen: list[str] = []
    verdicts = asyncio.run(
        run_suites([suite], runner, jobs=2, on_verdict=lambda v: seen.append(v.scenario_id))
    )
    assert runner.most_in_flight == 2
    assert runner.started[:4] == [
        ("a", Arm.WITH_SKILL, 0),
        ("a", Arm.WITHOUT_SKILL, 0),
        ("a", Arm.WITH_SKILL, 1),
        ("a", Arm.WITHOUT_SKILL, 1),
    ]
    assert len(runner.started) == 3 * 3 * 2
    assert sorted(seen) == ["a", "b", "c", "d"]
    a, b, c, d = verdicts
    # with: 0.3/0.4 * 1 + 0.1/0.4 * 1 = 1.0; without: Bash but no Read = 0.75
    assert a.with_skill.scores == (1.0, 1.0, 1.0)
    assert a.without_skill is not None and a.without_skill.scores == (0.75, 0.75, 0.75)
    # 1.0 against 0.75 three times each: a real lift, but 3 runs cannot show it clears +0.05.
    assert (a.verdict, a.passed) == (Verdict.INCONCLUSIVE, False)
    assert a.delta.value == pytest.approx(0.25)
    assert (b.verdict, b.passed) == (Verdict.ERROR, False)
    assert b.reasons == (
        "without-skill: only 0 of 3 runs scored, fewer than half (model API error: overloaded)",
    )
    assert (c.verdict, c.runs) == (Verdict.SKIPPED, ())
    # A run that raised is unscored with its reason; the rest of the scenario still counts.
    assert d.with_skill.errors == ("could not create the sandbox",)
    assert d.with_skill.scored == 2


def test_skill_only_runs_just_the_with_skill_arm(suite, tmp_path):
    from skilltest.scenarios.suite import Overrides

    only = load_scenario_suite(suite.path, overrides=Overrides(skill_only=True, repetitions=9))
    runner = ScriptedRunner(lambda r: RunOutcome(calls("Bash", "Read")))
    verdicts = asyncio.run(run_suites([only], runner, jobs=4))
    assert {arm for _, arm, _ in runner.started} == {Arm.WITH_SKILL}
    assert [v.verdict for v in verdicts] == [
        Verdict.SKILL_ONLY,
        Verdict.SKILL_ONLY,
        Verdict.SKIPPED,
        Verdict.SKILL_ONLY,
    ]


def test_default_output_folder_is_beside_the_suite(suite):
    runner = ScriptedRunner(lambda r: RunOutcome(calls("Bash")))
    folders: set[Path | None] = set()

    def record(request: RunRequest) -> RunOutcome:
        folders.add(request.output_dir)
        return RunOutcome(calls("Bash"))

    runner.answer = record
    asyncio.run(run_suites([suite], runner, jobs=1))
    assert folders == {suite.path.parent / "output"}
