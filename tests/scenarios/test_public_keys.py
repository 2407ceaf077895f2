"""The public scenario format's keys: expected_skills as the skills under test, canaries,
``comparison: true`` as the core subset, and ``require_skills_fired``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skilltest.claude.isolation import create_sandbox
from skilltest.cli import EXIT_CANARY, main
from skilltest.errors import SkillNotFoundError, SuiteError
from skilltest.repetitions import plan_for
from skilltest.report.files import read_results
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.runner import RunOutcome, RunRequest
from skilltest.scenarios.runs import plan, run_suites
from skilltest.scenarios.suite import load_scenario_suite
from skilltest.scenarios.verdict import Verdict
from skilltest.skills import find_skill
from skilltest.transcript import ToolCall, Transcript
from tests.refusals import refusal


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("alpha", "beta", "demo"):
        (tmp_path / "skills" / name).mkdir(parents=True)
        (tmp_path / "skills" / name / "SKILL.md").write_text(f"---\nname: {name}\n---\nbody\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-only-not-a-key")
    return tmp_path


def write(project: Path, text: str, name: str = "suite.yaml") -> Path:
    path = project / name
    path.write_text(text)
    return path


# --- the skills a suite without `skill:` tests ---------------------------------------------------

NO_SKILL = """\
scenarios:
  - id: both
    prompt: echo
    expected: {required_patterns: ["lgtm loki"]}
    expected_skills: [alpha, beta]
"""


def test_a_suite_that_names_no_skill_tests_its_expected_skills(project):
    (scenario,) = load_scenario_suite(write(project, NO_SKILL)).scenarios
    assert scenario.skill.name == "alpha"
    assert [s.name for s in scenario.skills] == ["alpha", "beta"]
    assert scenario.expected_skills == ("alpha", "beta")


def test_the_with_skill_arm_installs_every_expected_skill(project, fake_claude, capsys):
    write(project, NO_SKILL)
    code = main(
        ["scenarios", "suite.yaml", "--claude", str(fake_claude), "-k", "1", "--results", "r.json"]
    )
    out = capsys.readouterr().out
    runs = {
        r["arm"]: r for r in read_results(project / "r.json", "scenarios")["scenarios"][0]["runs"]
    }
    # The fake CLI lists the skills it finds in .claude/skills/ of its working directory.
    assert runs["with_skill"]["skills_available"] == ["alpha", "beta", "doctor"]
    assert runs["without_skill"]["skills_available"] == ["doctor"]
    assert code == 1  # the fake agent never invokes a skill
    assert "expected skills alpha, beta fired in 0/1 with-skill runs" in out


def test_require_skills_fired_false_reports_the_rate_without_requiring_it(
    project, fake_claude, capsys
):
    write(project, "require_skills_fired: false\nrepetitions: 2\n" + NO_SKILL)
    code = main(
        [
            "scenarios",
            "suite.yaml",
            "--claude",
            str(fake_claude),
            "--min-delta",
            "-1",
            "--allow-inconclusive",
            "--results",
            "r.json",
        ]
    )
    out = capsys.readouterr().out
    assert "fired in 0/2" not in out
    (scenario,) = read_results(project / "r.json", "scenarios")["scenarios"]
    # No effect in 2 runs per arm is inconclusive (allowed here), not a failure for a bar.
    assert scenario["result"] == "inconclusive"
    assert not [reason for reason in scenario["reasons"] if "fired" in reason]
    assert (scenario["with_skill"]["skills_fired"], scenario["with_skill"]["skill_rate"]) == (0, 0)
    assert code == 0


def test_a_scenario_can_require_the_firing_its_suite_does_not(project):
    text = "require_skills_fired: false\n" + NO_SKILL.replace(
        "    expected_skills:", "    require_skills_fired: true\n    expected_skills:"
    )
    (scenario,) = load_scenario_suite(write(project, text)).scenarios
    assert scenario.require_skills_fired is True


def test_a_missing_expected_skill_is_reported_where_it_is_named(project):
    path = write(project, NO_SKILL.replace("[alpha, beta]", "[alpha, gamma]"))
    assert refusal(load_scenario_suite, path, SkillNotFoundError).startswith(
        f"{path}#/scenarios/0/expected_skills/1: skill 'gamma' not found"
    )


def test_a_suite_naming_a_skill_installs_only_that_one(project):
    (scenario,) = load_scenario_suite(write(project, "skill: demo\n" + NO_SKILL)).scenarios
    assert [s.name for s in scenario.skills] == ["demo"]


def test_no_skill_anywhere_is_the_error_it_was(project):
    path = write(project, NO_SKILL.replace("    expected_skills: [alpha, beta]\n", ""))
    assert refusal(load_scenario_suite, path, SuiteError) == (
        f"{path}#/scenarios/0: no skill named for this scenario\n"
        "  fix: add `skill: <name>` at the top of the suite or to the scenario, list the skills "
        "in `expected_skills:`, or pass --skill NAME"
    )


# --- canaries --------------------------------------------------------------------------------

CANARY_SUITE = """\
skill: demo
repetitions: 2
scenarios:
  - id: smoke
    prompt: echo
    canary: true
    expected: {{required_patterns: ["{canary_pattern}"]}}
  - id: core
    prompt: echo
    comparison: true
    expected: {{required_patterns: ["lgtm loki"]}}
  - id: extra
    prompt: echo
    expected: {{required_patterns: ["lgtm loki"]}}
"""


def run_canary_suite(project: Path, fake_claude: Path, pattern: str, *extra: str) -> int:
    write(project, CANARY_SUITE.format(canary_pattern=pattern))
    argv = ["scenarios", "suite.yaml", "--claude", str(fake_claude), "--results", "r.json"]
    return main([*argv, "--allow-inconclusive", "--min-delta", "-1", *extra])


def test_a_failing_canary_marks_the_comparison_not_meaningful_and_exits_3(
    project, fake_claude, capsys
):
    code = run_canary_suite(project, fake_claude, "never-seen")
    out = capsys.readouterr().out
    assert code == EXIT_CANARY == 3
    row = next(line for line in out.splitlines() if line.startswith("demo/smoke"))
    # 2 runs at 0.00 leave the interval undecided; the canary fails on what they showed.
    assert row.split()[1] == "inconclusive" and "FAIL" in row
    assert "canary failed: with-skill mean 0.00 is below 0.60" in out
    assert (
        "canary FAILED: smoke (1 of 1); the comparison results are not meaningful (exit 3)" in out
    )
    document = read_results(project / "r.json", "scenarios")
    assert document["canary"] == {
        "passed": False,
        "scenarios": ["smoke"],
        "failed": ["smoke"],
        "meaningful": False,
    }
    smoke = document["scenarios"][0]
    assert {run["arm"] for run in smoke["runs"]} == {"with_skill"}  # with the skill only
    assert smoke["without_skill"] is None


def test_a_passing_canary_says_the_comparison_is_meaningful(project, fake_claude, capsys):
    code = run_canary_suite(project, fake_claude, "lgtm loki")
    out = capsys.readouterr().out
    assert code == 0
    assert "canary: 1 of 1 passed; the comparison results are meaningful" in out
    row = next(line for line in out.splitlines() if line.startswith("demo/smoke"))
    # 2 runs at 1.00 do not decide an interval against min_score, but a smoke test is read
    # from what its runs showed.
    assert row.split()[1] == "skill-only" and "PASS" in row
    document = read_results(project / "r.json", "scenarios")
    assert document["canary"]["meaningful"] is True
    assert [s["id"] for s in document["scenarios"]] == ["smoke", "core", "extra"]


def test_a_suite_without_canaries_has_no_canary_verdict(project, fake_claude, capsys):
    write(
        project,
        "skill: demo\nscenarios:\n  - {id: a, prompt: echo, expected: {required_patterns: [x]}}\n",
    )
    main(
        ["scenarios", "suite.yaml", "--claude", str(fake_claude), "-k", "1", "--results", "r.json"]
    )
    assert "canary" not in capsys.readouterr().out
    assert read_results(project / "r.json", "scenarios")["canary"] is None


class RecordingRunner:
    """Records the order runs start and end in; every run calls Bash."""

    backend = "test"
    cli_version = "2.1.328"

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Arm]] = []

    async def run(self, request: RunRequest) -> RunOutcome:
        self.events.append(("start", request.scenario.id, request.arm))
        await asyncio.sleep(0.01 if request.scenario.canary else 0)
        self.events.append(("end", request.scenario.id, request.arm))
        calls = (ToolCall(id="1", name="Bash", input={"command": "lgtm loki"}),)
        return RunOutcome(Transcript(source="test", tool_calls=calls))


def test_canaries_run_first_with_the_skill_only_for_their_first_round(project):
    suite = load_scenario_suite(
        write(project, CANARY_SUITE.format(canary_pattern="lgtm").replace("repetitions: 2\n", ""))
    )
    runner = RecordingRunner()
    verdicts = asyncio.run(run_suites([suite], runner, jobs=4))
    smoke = [e for e in runner.events if e[1] == "smoke"]
    others = [e for e in runner.events if e[1] != "smoke"]
    assert runner.events[: len(smoke)] == smoke  # every canary run ended before others began
    assert {arm for _, _, arm in smoke} == {Arm.WITH_SKILL}
    # -k auto: a canary takes the first round (--min-k, 3 runs) and no more looks.
    assert len(smoke) == 2 * 3
    assert others
    assert [v.scenario_id for v in verdicts] == ["smoke", "core", "extra"]
    assert verdicts[0].verdict == Verdict.SKILL_ONLY and verdicts[0].passed
    assert plan([suite], lambda s: plan_for(None, s.repetitions))[0].run_count == 3


# --- comparison: true, the core subset -------------------------------------------------------


def test_comparison_only_runs_the_core_subset_and_the_canaries(project, fake_claude, capsys):
    code = run_canary_suite(project, fake_claude, "lgtm loki", "--comparison-only")
    assert code == 0
    document = read_results(project / "r.json", "scenarios")
    assert [s["id"] for s in document["scenarios"]] == ["smoke", "core"]
    core = document["scenarios"][1]
    assert {run["arm"] for run in core["runs"]} == {"with_skill", "without_skill"}


def test_comparison_only_without_a_core_scenario_is_bad_input(project, fake_claude, capsys):
    write(
        project,
        "skill: demo\nscenarios:\n  - {id: a, prompt: echo, expected: {required_patterns: [x]}}\n",
    )
    code = main(["scenarios", "suite.yaml", "--claude", str(fake_claude), "--comparison-only"])
    err = capsys.readouterr().err
    assert code == 2
    assert (
        "skilltest: error: suite.yaml: no scenario is marked `comparison: true`, the core "
        "subset --comparison-only runs\n  fix: add `comparison: true` to the core scenarios "
        "(or the suite), or leave out --comparison-only"
    ) in err


def test_comparison_keeps_its_meanings(project):
    suite = load_scenario_suite(
        write(
            project,
            "skill: demo\nscenarios:\n"
            "  - {id: core, prompt: p, comparison: true, expected: {required_tools: [Bash]}}\n"
            "  - {id: plain, prompt: p, expected: {required_tools: [Bash]}}\n"
            "  - {id: solo, prompt: p, comparison: false, expected: {required_tools: [Bash]}}\n"
            "  - {id: smoke, prompt: p, canary: true, expected: {required_tools: [Bash]}}\n",
        )
    )
    shown = {s.id: (s.comparison, s.core, s.canary) for s in suite.scenarios}
    assert shown == {
        "core": (True, True, False),
        "plain": (True, False, False),
        "solo": (False, False, False),
        "smoke": (False, False, True),
    }


def test_a_sandbox_installs_every_skill_once(project, tmp_path):
    alpha, beta = (find_skill(n, suite_path=project / "suite.yaml") for n in ("alpha", "beta"))
    sandbox = create_sandbox(skill=alpha, skills=[alpha, beta], base=tmp_path)
    try:
        installed = sorted(p.name for p in sandbox.skills_dir.iterdir())
        assert installed == ["alpha", "beta"]
        assert (sandbox.skills_dir / "beta" / "SKILL.md").read_text().startswith("---\nname: beta")
    finally:
        sandbox.remove()
