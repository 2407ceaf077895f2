"""Verdicts over K repetitions: deltas, intervals, thresholds, skill firing, unscored runs."""

import math

import pytest

from skilltest.scenarios.outcome import Arm, RunRecord
from skilltest.scenarios.verdict import Thresholds, Verdict, judge, tidy_table

W, WO = Arm.WITH_SKILL, Arm.WITHOUT_SKILL


def run(arm, rep, score, *, skills=(), calls=3, error=None, components=None):
    return RunRecord(
        scenario_id="s",
        skill="lgtm",
        arm=arm,
        rep=rep,
        score=score,
        components=components or ({"required_tools": score} if score is not None else {}),
        tool_calls=calls,
        skills_invoked=tuple(skills),
        error=error,
    )


def arms(with_scores, without_scores, *, fired=True):
    records = [run(W, i, s, skills=("lgtm",) if fired else ()) for i, s in enumerate(with_scores)]
    records += [run(WO, i, s) for i, s in enumerate(without_scores)]
    return records


# (with scores, without scores, verdict, passed, delta)
TABLE = [
    ([0.9, 0.9, 0.9], [0.5, 0.5, 0.5], Verdict.IMPROVED, True, 0.4),
    ([0.7, 0.7, 0.7], [0.68, 0.68, 0.68], Verdict.NEUTRAL, True, 0.02),
    ([0.7, 0.7, 0.7], [0.75, 0.75, 0.75], Verdict.NEUTRAL, True, -0.05),
    ([0.6, 0.6, 0.6], [0.8, 0.8, 0.8], Verdict.REGRESSED, False, -0.2),
    ([0.5, 0.5, 0.5], [0.2, 0.2, 0.2], Verdict.IMPROVED, False, 0.3),  # mean below 0.6
    ([0.7, 0.7, 0.7], [0.79, 0.79, 0.79], Verdict.NEUTRAL, True, -0.09),
    # The boundaries themselves, where floating point lands a hair off: -0.1 and 0.05 are
    # neutral, and -0.1 passes.
    ([0.7, 0.7, 0.7], [0.8, 0.8, 0.8], Verdict.NEUTRAL, True, -0.1),
    ([0.65, 0.65, 0.65], [0.6, 0.6, 0.6], Verdict.NEUTRAL, True, 0.05),
]


@pytest.mark.parametrize(("with_scores", "without_scores", "verdict", "passed", "delta"), TABLE)
def test_verdict_table(with_scores, without_scores, verdict, passed, delta):
    result = judge("s", "lgtm", arms(with_scores, without_scores), comparison=True)
    assert result.verdict == verdict
    assert result.passed is passed
    assert result.delta.value == pytest.approx(delta)


def test_interval_and_scores_per_arm():
    result = judge("s", "lgtm", arms([1.0, 0.8, 0.6], [0.2, 0.4, 0.3]), comparison=True)
    w = result.with_skill
    assert w.scores == (1.0, 0.8, 0.6)
    assert w.mean.value == pytest.approx(0.8)
    # t(2) = 4.303, sd = 0.2, half width = 4.303 * 0.2 / sqrt(3) = 0.4969 -> clipped at 1
    assert w.mean.low == pytest.approx(0.8 - 4.303 * 0.2 / math.sqrt(3))
    assert w.mean.high == 1.0
    assert result.delta.value == pytest.approx(0.5)
    assert result.delta.low < 0.5 < result.delta.high


def test_regression_reason_and_custom_thresholds():
    records = arms([0.7] * 2, [0.85] * 2)
    strict = judge("s", "lgtm", records, comparison=True)
    assert strict.reasons == ("delta -0.15 is below -0.10",)
    lenient = judge(
        "s", "lgtm", records, comparison=True, thresholds=Thresholds(min_delta=-0.2, min_score=0.8)
    )
    assert lenient.verdict == Verdict.REGRESSED
    assert lenient.reasons == ("with-skill mean 0.70 is below 0.80",)


def test_expected_skills_must_fire_in_the_with_skill_arm():
    records = arms([0.9, 0.9], [0.5, 0.5], fired=False)
    result = judge("s", "lgtm", records, comparison=True, expected_skills=("lgtm",))
    assert result.verdict == Verdict.IMPROVED
    assert not result.passed
    assert result.reasons == ("expected skills lgtm fired in 0/2 with-skill runs",)
    # Without expected_skills the rate is reported for the skill under test but not required.
    reported = judge("s", "lgtm", records, comparison=True)
    assert reported.passed
    assert reported.with_skill.skills_fired == 0
    assert reported.expected_skills == ("lgtm",)


def test_firing_rate_and_tool_calls_per_arm():
    records = [
        run(W, 0, 0.9, skills=("lgtm",), calls=4),
        run(W, 1, 0.9, skills=("plugin:lgtm",), calls=6),
        run(W, 2, 0.9, calls=20),
        run(WO, 0, 0.5, calls=2),
        run(WO, 1, 0.5, calls=3),
        run(WO, 2, 0.5, calls=9),
    ]
    result = judge("s", "lgtm", records, comparison=True, expected_skills=("lgtm",))
    assert result.with_skill.skills_fired == 2
    assert result.with_skill.skill_rate.value == pytest.approx(2 / 3)
    assert result.without_skill is not None and result.without_skill.skills_fired == 0
    assert (result.with_skill.tool_calls_median, result.with_skill.tool_calls_worst) == (6, 20)
    assert (result.without_skill.tool_calls_median, result.without_skill.tool_calls_worst) == (3, 9)
    assert result.passed


def test_unscored_runs_are_counted_never_averaged():
    records = [
        run(W, 0, 1.0),
        run(W, 1, None, error="timed out after 5s"),
        run(WO, 0, 0.5),
        run(WO, 1, 0.5),
    ]
    result = judge("s", "lgtm", records, comparison=True)
    assert result.with_skill.mean.value == 1.0
    assert (result.with_skill.runs, result.with_skill.scored) == (2, 1)
    assert result.with_skill.errors == ("timed out after 5s",)
    assert result.verdict == Verdict.IMPROVED
    assert result.reasons == ("with-skill: 1 of 2 runs unscored (timed out after 5s)",)


def test_an_arm_without_any_scored_run_is_an_error():
    records = [run(W, 0, None, error="model API error: overloaded"), run(WO, 0, 0.5)]
    result = judge("s", "lgtm", records, comparison=True)
    assert result.verdict == Verdict.ERROR
    assert not result.passed
    assert result.delta.value is None
    assert result.reasons == ("with-skill: no scored run (model API error: overloaded)",)


def test_skill_only_mode_judges_the_with_skill_mean():
    result = judge("s", "lgtm", [run(W, 0, 0.7), run(W, 1, 0.5)], comparison=False)
    assert result.verdict == Verdict.SKILL_ONLY
    assert result.without_skill is None
    assert result.delta.value is None
    assert result.passed  # mean 0.6 >= 0.6
    low = judge("s", "lgtm", [run(W, 0, 0.5)], comparison=False)
    assert not low.passed


def test_skipped_scenarios_pass_without_runs():
    result = judge("s", "lgtm", [], comparison=True, skip="flaky upstream")
    assert (result.verdict, result.passed, result.reasons) == (
        Verdict.SKIPPED,
        True,
        ("flaky upstream",),
    )


def test_tidy_table_has_one_row_per_run_and_component():
    records = [*arms([0.9], [0.5]), run(WO, 1, None, error="x")]
    table = tidy_table(records)
    assert len(table) == 3 * 6
    assert set(table.columns) == {"scenario", "skill", "arm", "rep", "component", "value"}
    unscored = table[(table.arm == "without_skill") & (table.rep == 1)]
    assert unscored.value.isna().all()
    result = judge("s", "lgtm", records, comparison=True)
    assert result.with_skill.components["required_tools"] == pytest.approx(0.9)
    assert result.without_skill is not None
    assert result.without_skill.components["required_tools"] == pytest.approx(0.5)
    assert result.with_skill.components["anti_patterns"] is None


def test_a_mean_exactly_at_min_score_passes():
    records = arms([0.7, 0.7, 0.7], [0.7, 0.7, 0.7])
    result = judge("s", "lgtm", records, comparison=True, thresholds=Thresholds(min_score=0.7))
    assert result.passed, result.reasons
