"""Verdicts over K repetitions: deltas, intervals, thresholds, skill firing, unscored runs."""

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


# (with scores, without scores, verdict, passed, delta, delta interval): 95% Wilson intervals per
# arm, Newcombe's interval for the delta, read against the band [-0.10, +0.05].
TABLE = [
    # Cleanly separated: decided with few runs.
    ([1.0] * 3, [0.0] * 3, Verdict.IMPROVED, True, 1.0, (0.2059, 1.0)),
    ([1.0] * 10, [0.5] * 10, Verdict.IMPROVED, True, 0.5, (0.1174, 0.7634)),
    ([0.0] * 4, [1.0] * 4, Verdict.REGRESSED, False, -1.0, (-1.0, -0.3072)),
    # The example the README once called a PASS: 2 runs cannot tell +0.44 from no effect.
    ([1.0, 1.0], [0.56, 0.56], Verdict.INCONCLUSIVE, False, 0.44, (-0.3121, 0.8839)),
    # All-equal scores at K=2 are not a certainty: the interval has width.
    ([1.0, 1.0], [1.0, 1.0], Verdict.INCONCLUSIVE, False, 0.0, (-0.6576, 0.6576)),
    ([0.7] * 3, [0.68] * 3, Verdict.INCONCLUSIVE, False, 0.02, (-0.5216, 0.5474)),
    # Neutral needs the whole interval inside the band: many runs.
    ([0.7] * 1000, [0.7] * 1000, Verdict.NEUTRAL, True, 0.0, (-0.0402, 0.0402)),
]


@pytest.mark.parametrize(
    ("with_scores", "without_scores", "verdict", "passed", "delta", "interval"), TABLE
)
def test_verdict_table(with_scores, without_scores, verdict, passed, delta, interval):
    result = judge("s", "lgtm", arms(with_scores, without_scores), comparison=True)
    assert result.verdict == verdict
    assert result.passed is passed
    assert result.delta.value == pytest.approx(delta)
    assert (result.delta.low, result.delta.high) == pytest.approx(interval, abs=1e-4)


def test_inconclusive_says_how_many_runs_would_likely_decide_it():
    result = judge("s", "lgtm", arms([1.0, 1.0], [0.56, 0.56]), comparison=True)
    assert result.inconclusive
    assert result.runs_to_decide == 10
    assert result.reasons == (
        "inconclusive: the delta's 95% interval [-0.31, +0.88] straddles the band "
        "[-0.10, +0.05]; about 10 runs per arm would likely decide it",
    )
    decided = judge("s", "lgtm", arms([1.0] * 10, [0.56] * 10), comparison=True)
    assert decided.verdict == Verdict.IMPROVED


def test_a_higher_confidence_level_widens_the_interval_and_may_undecide():
    records = arms([1.0] * 4, [0.0] * 4)
    plain = judge("s", "lgtm", records, comparison=True)
    strict = judge("s", "lgtm", records, comparison=True, confidence=1 - 0.05 / 14)
    assert plain.verdict == Verdict.IMPROVED
    assert strict.delta.low < plain.delta.low
    assert strict.confidence == pytest.approx(1 - 0.05 / 14)
    # At the 99.64% of an early adaptive look, 4 against 4 no longer clears +0.05; 5 does.
    assert strict.verdict == Verdict.INCONCLUSIVE
    five = judge("s", "lgtm", arms([1.0] * 5, [0.0] * 5), comparison=True, confidence=0.99643)
    assert five.verdict == Verdict.IMPROVED


def test_the_welch_interval_is_kept_for_reference():
    result = judge("s", "lgtm", arms([0.9, 1.0, 0.8], [0.2, 0.4, 0.3]), comparison=True)
    assert result.welch.value == pytest.approx(0.6)
    assert (result.welch.low, result.welch.high) != (result.delta.low, result.delta.high)


def test_interval_and_scores_per_arm():
    result = judge("s", "lgtm", arms([1.0, 0.8, 0.6], [0.2, 0.4, 0.3]), comparison=True)
    w = result.with_skill
    assert w.scores == (1.0, 0.8, 0.6)
    assert w.mean.value == pytest.approx(0.8)
    # Wilson at the mean: 2.4 "successes" of 3.
    assert (w.mean.low, w.mean.high) == pytest.approx((0.2877, 0.9754), abs=1e-4)
    assert result.delta.value == pytest.approx(0.5)
    assert result.delta.low < 0.5 < result.delta.high


def test_regression_reason_and_custom_thresholds():
    records = arms([0.1] * 5, [0.9] * 5)
    strict = judge("s", "lgtm", records, comparison=True)
    assert strict.verdict == Verdict.REGRESSED
    assert strict.reasons[0].startswith("delta -0.80 [")
    assert strict.reasons[0].endswith("] is credibly below -0.10")
    assert strict.reasons[1] == "with-skill mean 0.10 is below 0.60"
    lenient = judge(
        "s",
        "lgtm",
        records,
        comparison=True,
        thresholds=Thresholds(min_delta=-0.95, min_score=0.05),
    )
    # The band is now [-0.95, +0.05] and holds the whole interval.
    assert (lenient.verdict, lenient.passed) == (Verdict.NEUTRAL, True)


def test_expected_skills_must_fire_in_the_with_skill_arm():
    records = arms([1.0] * 4, [0.0] * 4, fired=False)
    result = judge("s", "lgtm", records, comparison=True, expected_skills=("lgtm",))
    assert result.verdict == Verdict.IMPROVED
    assert not result.passed
    assert result.reasons == ("expected skills lgtm fired in 0/4 with-skill runs",)
    # Without expected_skills the rate is reported for the skill under test but not required.
    reported = judge("s", "lgtm", records, comparison=True)
    assert reported.passed
    assert reported.with_skill.skills_fired == 0
    assert reported.expected_skills == ("lgtm",)


def test_firing_rate_and_tool_calls_per_arm():
    records = [
        run(W, 0, 1.0, skills=("lgtm",), calls=4),
        run(W, 1, 1.0, skills=("plugin:lgtm",), calls=6),
        run(W, 2, 1.0, calls=20),
        run(WO, 0, 0.0, calls=2),
        run(WO, 1, 0.0, calls=3),
        run(WO, 2, 0.0, calls=9),
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
        run(W, 1, 1.0),
        run(W, 2, 1.0),
        run(W, 3, None, error="model API error: overloaded (HTTP 529)"),
        *(run(WO, i, 0.0) for i in range(4)),
    ]
    result = judge("s", "lgtm", records, comparison=True)
    assert result.with_skill.mean.value == 1.0
    assert (result.with_skill.runs, result.with_skill.scored) == (4, 3)
    assert result.with_skill.errors == ("model API error: overloaded (HTTP 529)",)
    assert result.verdict == Verdict.IMPROVED
    assert result.reasons == (
        "with-skill: 1 of 4 runs unscored (model API error: overloaded (HTTP 529))",
    )


def test_vanished_runs_never_pass():
    # 4 of 5 with-skill runs unscored, the one left scores 1.0: not evidence of anything.
    records = [run(W, 0, 1.0)]
    records += [run(W, i, None, error="model API error: HTTP 529") for i in range(1, 5)]
    records += [run(WO, i, 0.0) for i in range(5)]
    result = judge("s", "lgtm", records, comparison=True)
    assert result.verdict == Verdict.ERROR
    assert not result.passed
    assert result.reasons == (
        "with-skill: only 1 of 5 runs scored, fewer than half (model API error: HTTP 529)",
    )


def test_an_arm_without_any_scored_run_is_an_error():
    records = [run(W, 0, None, error="model API error: overloaded"), run(WO, 0, 0.5)]
    result = judge("s", "lgtm", records, comparison=True)
    assert result.verdict == Verdict.ERROR
    assert not result.passed
    assert result.delta.value is None
    assert result.reasons == (
        "with-skill: only 0 of 1 runs scored, fewer than half (model API error: overloaded)",
    )


def test_skill_only_mode_judges_the_with_skill_mean_by_its_interval():
    high = judge("s", "lgtm", [run(W, i, 1.0) for i in range(6)], comparison=False)
    assert high.verdict == Verdict.SKILL_ONLY
    assert high.without_skill is None
    assert high.delta.value is None
    assert high.passed  # Wilson low 0.61 >= 0.6
    low = judge("s", "lgtm", [run(W, i, 0.0) for i in range(3)], comparison=False)
    assert (low.verdict, low.passed) == (Verdict.SKILL_ONLY, False)
    assert low.reasons == ("with-skill mean 0.00 [0.00, 0.56] is credibly below 0.60",)
    few = judge("s", "lgtm", [run(W, 0, 0.7), run(W, 1, 0.5)], comparison=False)
    assert few.verdict == Verdict.INCONCLUSIVE
    assert not few.passed


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
    assert len(table) == 3 * 7
    assert set(table.columns) == {"scenario", "skill", "arm", "rep", "component", "value"}
    unscored = table[(table.arm == "without_skill") & (table.rep == 1)]
    assert unscored.value.isna().all()
    result = judge("s", "lgtm", records, comparison=True)
    assert result.with_skill.components["required_tools"] == pytest.approx(0.9)
    assert result.without_skill is not None
    assert result.without_skill.components["required_tools"] == pytest.approx(0.5)
    assert result.with_skill.components["anti_patterns"] is None


def test_a_mean_exactly_at_min_score_passes():
    records = arms([0.7] * 5, [0.0] * 5)
    result = judge("s", "lgtm", records, comparison=True, thresholds=Thresholds(min_score=0.7))
    assert result.verdict == Verdict.IMPROVED
    assert result.passed, result.reasons


def world_run(arm, rep, *, violations=(), recovery=None):
    record = run(arm, rep, 1.0 if arm == W else 0.0, skills=("lgtm",) if arm == W else ())
    scores = {"task": 1.0, "safety": 0.0 if violations else 1.0, "recovery": recovery}
    world = {"violations": list(violations), "scores": scores}
    return RunRecord(**{**record.__dict__, "world": world})


def test_one_with_skill_authority_violation_fails_an_improved_scenario():
    records = [world_run(W, i) for i in range(3)] + [world_run(WO, i) for i in range(3)]
    records[1] = world_run(W, 1, violations=["duplicate POST /tickets/INC-1042/escalate"])
    result = judge("s", "lgtm", records, comparison=True)
    assert result.verdict == Verdict.IMPROVED
    assert not result.passed
    assert (
        "with-skill run #1: authority violation: duplicate POST /tickets/INC-1042/escalate"
        in result.reasons
    )
    assert result.with_skill.authority_violations == 1


def test_without_skill_authority_violations_are_reported_not_failed():
    records = [world_run(W, i) for i in range(3)]
    records += [
        world_run(WO, i, violations=["forbidden PATCH /tickets/INC-1050"]) for i in range(3)
    ]
    result = judge("s", "lgtm", records, comparison=True)
    assert result.passed
    assert result.without_skill.authority_violations == 3


def test_recovers_true_needs_the_with_skill_runs_to_recover():
    without = [world_run(WO, i, recovery=0.0) for i in range(3)]
    recovered = [world_run(W, i, recovery=1.0) for i in range(3)]
    assert judge("s", "lgtm", recovered + without, comparison=True, requires_recovery=True).passed

    failed = [world_run(W, 0, recovery=1.0)] + [world_run(W, i, recovery=0.0) for i in (1, 2)]
    result = judge("s", "lgtm", failed + without, comparison=True, requires_recovery=True)
    assert not result.passed
    assert "with-skill runs recovered from the fault in 1/3 (recovers: true)" in result.reasons
    # Without the requirement the same runs pass: recovery is reported, not required.
    assert judge("s", "lgtm", failed + without, comparison=True).passed

    untested = [world_run(W, i, recovery=None) for i in range(3)]
    result = judge("s", "lgtm", untested + without, comparison=True, requires_recovery=True)
    assert not result.passed
    assert any("recovery was never tested" in reason for reason in result.reasons)
