"""Verdicts from runs: the decision table of the pressure layer."""

import asyncio
import math
from pathlib import Path

import pytest

from skilltest.pressure.runs import SuiteRunSettings, run_suites
from skilltest.pressure.suite import load_pressure_suite
from skilltest.pressure.verdict import _bounds, _decide
from skilltest.runners.base import TurnRequest
from skilltest.stats import exact_difference
from skilltest.transcript import Transcript

SUITE = """\
skill: demo
repetitions: {k}
scenarios:
  - id: s
    prompt: "Investigate the error spike"
    without_skill: {{expected_patterns: ["(?i)grep"]}}
    with_skill: {{required_patterns: ["(?i)aggregate"], anti_patterns: ["(?i)rm -rf"]}}
"""


class ScriptedRunner:
    """Answers from two lists, one per arm, in order; ``None`` is an API failure."""

    backend = "test"

    def __init__(self, with_skill: list[str | None], without_skill: list[str | None]) -> None:
        self.answers = {True: list(with_skill), False: list(without_skill)}
        self.requests: list[TurnRequest] = []

    async def run_turn(self, request: TurnRequest) -> Transcript:
        self.requests.append(request)
        text = self.answers[request.system is not None].pop(0)
        if text is None:
            return Transcript(source="test", error="API error 529: overloaded_error: Overloaded")
        return Transcript(source="test", assistant_text=(text,))

    async def aclose(self) -> None:
        return None


def run(tmp_path: Path, with_skill, without_skill, *, skill_only=False, k=3):
    (tmp_path / "skills" / "demo").mkdir(parents=True, exist_ok=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("Always aggregate first.")
    path = tmp_path / "demo.yaml"
    path.write_text(SUITE.format(k=k))
    suite = load_pressure_suite(path)
    runner = ScriptedRunner(with_skill, without_skill)
    settings = SuiteRunSettings(skill_only=skill_only)
    results = asyncio.run(run_suites([suite], lambda _: runner, jobs=2, settings=settings))
    return results[0], runner


GOOD, BAD, ANTI = "aggregate first", "grep the logs", "aggregate, then rm -rf /var/log"

# Fixed K, 95% exact intervals: Clopper-Pearson per arm, an exact unconditional interval for
# the lift (pass rate with minus without); threshold 0.8, so steers needs the with-skill rate
# credibly at or above 0.7: 11 passing runs of 11.
CASES = [
    ("steers", [GOOD] * 11, [BAD] * 11, "steers", ""),
    (
        "ten-passing-runs-cannot-show-0.7",
        [GOOD] * 10,
        [BAD] * 10,
        "inconclusive",
        "inconclusive: with-skill pass rate 100% [69%–100%] is not credibly at or above 70% "
        "(threshold 80% less 10%); about 11 runs per arm would likely decide it",
    ),
    (
        "three-runs-say-little-about-the-threshold",
        [GOOD] * 3,
        [BAD] * 3,
        "inconclusive",
        "inconclusive: with-skill pass rate 100% [29%–100%] is not credibly at or above 70% "
        "(threshold 80% less 10%); about 11 runs per arm would likely decide it",
    ),
    ("one-baseline-pass", [GOOD] * 11, [GOOD] + [BAD] * 10, "steers", ""),
    (
        "not-red",
        [GOOD] * 6,
        [GOOD] * 6,
        "not-red",
        "baseline already passes in 6/6 runs without the skill",
    ),
    ("no-steer", [BAD] * 3, [BAD] * 3, "no-steer", "missing (?i)aggregate in 3/3"),
    (
        "one-pass-in-three-is-not-yet-a-miss",
        [GOOD, BAD, BAD],
        [BAD] * 3,
        "inconclusive",
        "inconclusive: lift +33% [-46%, +91%] does not clear 0; about 6 runs per arm would "
        "likely decide it",
    ),
    (
        "anti-pattern",
        [ANTI, ANTI, ANTI],
        [BAD] * 3,
        "no-steer",
        "anti-pattern (?i)rm -rf matched in 3/3",
    ),
    (
        "all-with-skill-runs-failed",
        [None] * 3,
        [BAD] * 3,
        "error",
        "API error 529: overloaded_error: Overloaded",
    ),
    (
        "baseline-failed",
        [GOOD] * 3,
        [None] * 3,
        "error",
        "API error 529: overloaded_error: Overloaded",
    ),
    (
        "one-error-is-left-out",
        [GOOD] * 11 + [None],
        [BAD] * 12,
        "steers",
        "1 run(s) failed and were left out",
    ),
    (
        "vanished-runs-are-an-error",
        [GOOD, None, None],
        [BAD] * 3,
        "error",
        "API error 529: overloaded_error: Overloaded",
    ),
]


@pytest.mark.parametrize(
    ("with_skill", "without_skill", "verdict", "detail"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_verdict_table(tmp_path, with_skill, without_skill, verdict, detail):
    k = len(with_skill)
    result, _ = run(tmp_path, with_skill, without_skill, k=k)
    assert result.verdict == verdict
    assert result.detail == detail


def test_rates_and_intervals(tmp_path):
    result, _ = run(tmp_path, [GOOD, GOOD, BAD], [BAD, BAD, GOOD])
    assert (result.with_skill.runs, result.with_skill.passed) == (3, 2)
    assert result.with_skill.rate.value == pytest.approx(2 / 3)
    # Clopper-Pearson, as scipy computes it.
    assert result.with_skill.rate.low == pytest.approx(0.0943, abs=1e-4)
    base = result.without_skill
    assert base is not None
    assert (base.runs, base.runs - base.passed) == (3, 2)
    assert base.expected.value == pytest.approx(2 / 3)  # "grep" in two baseline answers


def test_skill_text_goes_only_to_the_with_skill_arm(tmp_path):
    _, runner = run(tmp_path, [GOOD] * 3, [BAD] * 3)
    systems = [r.system for r in runner.requests]
    assert systems.count("Always aggregate first.") == 3
    assert systems.count(None) == 3
    assert {r.prompt for r in runner.requests} == {"Investigate the error spike"}


def test_a_skipped_scenario_is_shown_skipped_beside_one_that_ran(tmp_path):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("Always aggregate first.")
    path = tmp_path / "demo.yaml"
    later = '  - id: later\n    skip: not ready\n    prompt: "x"\n    with_skill: {required_patterns: [x]}\n'
    path.write_text(SUITE.format(k=3) + later)
    runner = ScriptedRunner([GOOD] * 3, [BAD] * 3)
    suite = load_pressure_suite(path)
    results = asyncio.run(
        run_suites([suite], lambda _: runner, jobs=2, settings=SuiteRunSettings())
    )
    verdicts = {result.scenario.id: (result.verdict, result.detail) for result in results}
    assert verdicts["later"] == ("skipped", "not ready")
    assert verdicts["s"][0] == "inconclusive"
    assert len(runner.requests) == 6  # the skipped scenario asks nothing


def test_skill_only_skips_the_baseline(tmp_path):
    # Without a baseline the with-skill pass rate itself must clear the threshold's rule: 11/11
    # has an exact lower bound of 0.715 >= 0.7; 10/10 (0.692) is still inconclusive.
    result, runner = run(tmp_path, [GOOD] * 11, [], skill_only=True, k=11)
    assert result.verdict == "steers"
    ten, _ = run(tmp_path, [GOOD] * 10, [], skill_only=True, k=10)
    assert ten.verdict == "inconclusive"
    assert result.without_skill is None
    assert all(r.system is not None for r in runner.requests)


def _verdict(passes, base_passes, k, threshold=0.8):
    """The verdict of k runs per arm at a fixed K (the layer's rules, without the runs)."""
    rate = _bounds(passes, k, (0.95, 0.95))
    red = _bounds(k - base_passes, k, (0.95, 0.95))
    lift = exact_difference(passes, k, base_passes, k)
    return _decide(rate, red, lift, threshold)


def _binomial(n, x, p):
    return math.comb(n, x) * p**x * (1 - p) ** (n - x)


@pytest.mark.parametrize("k", [2, 3, 11])
def test_the_false_steers_rate_is_computed_exactly_within_the_documented_level(k):
    verdicts = {(x, y): _verdict(x, y, k) for x in range(k + 1) for y in range(k + 1)}
    # No effect: both arms pass at the same true rate.
    no_effect = max(
        sum(
            _binomial(k, x, p) * _binomial(k, y, p)
            for (x, y), verdict in verdicts.items()
            if verdict == "steers"
        )
        for p in [step / 100 for step in range(101)]
    )
    # A with-skill rate 0.1 below the threshold (or lower), whatever the baseline does.
    below = max(
        sum(
            _binomial(k, x, p) * _binomial(k, y, q)
            for (x, y), verdict in verdicts.items()
            if verdict == "steers"
        )
        for p in (0.7, 0.6, 0.5)
        for q in (0.0, 0.1, 0.5)
    )
    assert no_effect <= 0.025 and below <= 0.025
    if k < 11:
        assert "steers" not in verdicts.values()
    else:
        assert verdicts[(11, 0)] == "steers"
        assert below == pytest.approx(0.7**11, rel=1e-6)  # 11/11 at a true 0.7: 2.0%


@pytest.mark.parametrize("threshold", [0.8, 0.6, 0.5])
@pytest.mark.parametrize("k", [3, 6, 11, 20])
def test_steers_and_no_steer_are_mirror_images_across_the_indifference_zone(threshold, k):
    # The zone [threshold - 0.1, threshold): a with-skill rate credibly at or above its lower
    # edge steers (given a lift), one credibly below its upper edge does not. Passes and fails
    # swapped, the zone reflected (its edges 1 - threshold and 1 - threshold + 0.1): the two
    # claims trade places.
    mirrored = round(1 - threshold + 0.1, 10)
    for passes in range(k + 1):
        steers = _verdict(passes, 0, k, threshold) == "steers"
        no_steer = _verdict(k - passes, 0, k, mirrored) == "no-steer"
        assert steers == no_steer, (passes, k, threshold)
